"""The controller's answers to broker/quorum.py's two questions (DescribeQuorum, ElectLeaders).

The controller is the one voter of the metadata log's quorum, always at the log's end (it
commits what it appends); the observers are the brokers that fetch the log, at the offset
they last fetched from. Elections are the controller's (``Controller.elect_leaders``); the
brokers forward both requests here.
"""

from __future__ import annotations

from kipper.broker.quorum import PREFERRED, UNCLEAN, Quorum, QuorumState, Voter, directory_id


class ControllerQuorum(Quorum):
    def __init__(self, controller, topics, endpoints, clock):
        settings = controller.settings
        super().__init__(settings.node_id, settings.cluster_id, topics, endpoints)
        self.controller = controller
        self.clock = clock

    def state(self, now: int) -> QuorumState:
        mlog = self.controller.log
        end = mlog.end_offset
        me = Voter(self.node_id, self.directory_id, end, now, now, self.listeners())
        observers = tuple(Voter(broker_id, directory_id(self.cluster_id, broker_id), offset, fetched, caught_up, ())
                          for broker_id, (offset, fetched, caught_up) in sorted(self.controller.fetched.items()))
        return QuorumState(leader_id=self.node_id, leader_epoch=mlog.epoch, high_watermark=end,
                           voters=(me,), observers=observers)

    def elect(self, election_type: int, wanted):
        if election_type not in (PREFERRED, UNCLEAN):
            return super().elect(election_type, wanted)  # INVALID_REQUEST for each
        return self.controller.elect_leaders(election_type, wanted, self.clock())
