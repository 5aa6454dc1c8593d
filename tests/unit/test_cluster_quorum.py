"""The controller's quorum (broker/cluster/controller_quorum.py) with a manual clock: the
voter is the controller at its metadata log's end, the observers are the brokers that fetched
the log (with their lag and when they were last caught up), and ElectLeaders are the
controller's elections in Kafka's words."""

from __future__ import annotations

import pytest

from kipper.broker.cluster.controller_quorum import ControllerQuorum
from kipper.broker.quorum import NOT_NEEDED, PREFERRED, UNCLEAN, directory_id
from kipper.protocol.errors import ErrorCode
from tests.unit.test_cluster_controller import alter, cluster, heartbeat, register  # noqa: F401 (fixture)

ENDPOINTS = {"CONTROLLER": ("127.0.0.1", 9093)}


@pytest.fixture
def quorum(cluster):  # noqa: F811
    return ControllerQuorum(cluster.controller, cluster.topics, lambda: ENDPOINTS, cluster.clock)


def test_the_controller_is_the_one_voter_at_its_log_end(cluster, quorum):  # noqa: F811
    log = cluster.controller.log
    state = quorum.state(cluster.clock())
    assert (state.leader_id, state.leader_epoch, state.high_watermark) == (0, log.epoch, log.end_offset)
    [voter] = state.voters
    assert (voter.node_id, voter.log_end_offset) == (0, log.end_offset)
    assert voter.directory_id == directory_id("c", 0)
    assert voter.endpoints == (("CONTROLLER", "127.0.0.1", 9093),)
    assert state.observers == ()  # nobody fetched yet


def test_observers_are_the_brokers_that_fetch_with_their_lag_and_last_catch_up(cluster, quorum):  # noqa: F811
    controller, clock = cluster.controller, cluster.clock
    end = controller.log.end_offset
    controller.read_metadata(end, -1, 1 << 20, 1, clock())  # broker 1 at the end
    clock.now += 500
    controller.read_metadata(0, -1, 1 << 20, 2, clock())  # broker 2 far behind, never caught up
    clock.now += 500
    cluster.topics.create("t", 1, 1)  # the log grows: broker 1 falls behind
    controller.read_metadata(end, -1, 1 << 20, 1, clock())
    observers = {o.node_id: o for o in quorum.state(clock()).observers}
    assert sorted(observers) == [1, 2]
    assert (observers[1].log_end_offset, observers[1].last_fetch_timestamp) == (end, clock())
    assert observers[1].last_caught_up_timestamp == clock() - 1000  # its first fetch, at the end then
    assert (observers[2].log_end_offset, observers[2].last_caught_up_timestamp) == (0, -1)
    assert observers[2].directory_id == directory_id("c", 2)


def test_an_unregistered_broker_is_no_longer_an_observer(cluster, quorum):  # noqa: F811
    controller, clock = cluster.controller, cluster.clock
    controller.read_metadata(controller.log.end_offset, -1, 1 << 20, 3, clock())
    heartbeat(controller, 3, clock(), want_fence=True)
    assert controller.unregister(3, clock()) == ErrorCode.NONE
    assert [o.node_id for o in quorum.state(clock()).observers] == []


def test_elections_are_the_controllers_in_kafkas_words(cluster, quorum):  # noqa: F811
    controller, clock = cluster.controller, cluster.clock
    cluster.topics.create("t", 2, 3, assignments=[[1, 2, 3], [2, 3, 1]])
    heartbeat(controller, 1, clock(), want_shut_down=True)  # t-0's leadership moves away from 1
    assert controller.image.topics["t"].partitions[0].leader == 2
    register(controller, 1, cluster.incarnations[1], clock())
    heartbeat(controller, 1, clock())
    assert quorum.elect(PREFERRED, [("t", [1, 7]), ("nope", [0])]) == [
        ("t", [(1, ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED),
               (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-7")]),
        ("nope", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")])]
    assert quorum.elect(7, [("t", [0])]) == [("t", [(0, ErrorCode.INVALID_REQUEST, "Unknown election type 7")])]
    # every partition: every topic named, only the partitions whose election was needed listed
    [(name, [(index, code, _)])] = quorum.elect(PREFERRED, None)
    assert (name, index, code) == ("t", 0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE)  # 1 is not in the ISR yet
    assert alter(controller, "t", 0, [2, 3, 1]) == ErrorCode.NONE
    assert quorum.elect(PREFERRED, None) == [("t", [(0, ErrorCode.NONE, None)])]
    assert controller.image.topics["t"].partitions[0].leader == 1
    assert quorum.elect(PREFERRED, None) == [("t", [])]
    assert quorum.elect(UNCLEAN, [("t", [1])]) == [("t", [(1, ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED)])]
