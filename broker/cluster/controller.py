"""The controller: Kafka's QuorumController for a one-voter quorum, as a synchronous engine.

Every decision becomes metadata records appended to the metadata log (broker/cluster/
metadata_log.py) and replayed into the controller's own image (``commit``), so the image is
always the log's. Brokers register (BrokerRegistration: a new epoch, fenced), heartbeat
(unfenced once they have applied the log up to their registration; fenced when their session
of broker.session.timeout.ms passes without one; a controlled shutdown moves their
leaderships away first) and ask for ISR changes (AlterPartition, checked against the leader
epoch, the partition epoch and the brokers' state as Kafka checks them). Topics, partition
growth, reassignments and configs are controller_topics.py's; elections follow placement.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from kipper.broker.cluster.image import ClusterImage
from kipper.broker.cluster.placement import ONLINE, PREFERRED, UNCLEAN, partition_change
from kipper.broker.quorum import NOT_NEEDED
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

PRODUCER_ID_BLOCK = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE


@dataclass(frozen=True)
class ControllerSettings:
    node_id: int
    cluster_id: str
    session_timeout_ms: int = 9000  # broker.session.timeout.ms
    default_replication_factor: int = 1  # default.replication.factor
    num_partitions: int = 1  # num.partitions
    unclean_leader_election: bool = False  # unclean.leader.election.enable, the broker default

    @classmethod
    def from_config(cls, config) -> ControllerSettings:
        return cls(node_id=config["node.id"], cluster_id=config["cluster.id"],
                   session_timeout_ms=config["broker.session.timeout.ms"],
                   default_replication_factor=config["default.replication.factor"],
                   num_partitions=config["num.partitions"])


class Controller:
    def __init__(self, settings: ControllerSettings, metadata_log, on_commit=None):
        self.settings = settings
        self.log = metadata_log
        self.image = ClusterImage()
        self.sessions: dict[int, int] = {}  # broker id -> last heartbeat (ms)
        # broker id -> (offset fetched, when, when it last fetched from the log's end or -1)
        self.fetched: dict[int, tuple[int, int, int]] = {}
        self.on_commit = on_commit  # (changes) -> None: the controller's TopicManager follows
        self.watchers: list = []  # more (changes) -> None: the stores of ACLs, credentials, quotas
        self.seeds: list = []  # () -> None: what a new cluster's log starts with after its metadata.version
        for offset, record in metadata_log.records(metadata_log.start_offset):
            self.image.replay(offset, record)
        # a controller opened on an earlier log: its brokers' sessions start now
        self._restarted = bool(self.image.brokers)

    # --- the log ------------------------------------------------------------------------

    def commit(self, records: list[tuple[str, dict]], now: int) -> list:
        """Append ``records`` [(type name, fields)] as one batch and replay them; the changes."""
        if not records:
            return []
        values = [mr.encode(name, data) for name, data in records]
        base = self.log.append(values, now)
        changes = []
        for i, (name, data) in enumerate(records):
            change = self.image.replay(base + i, mr.decode(values[i]))
            if change is not None:
                changes.append(change)
        if self.on_commit is not None:
            self.on_commit(changes)
        for watcher in self.watchers:
            watcher(changes)
        return changes

    def bootstrap(self, now: int) -> None:
        """A new cluster's first record: its metadata.version (Kafka's bootstrap metadata)."""
        if self.log.end_offset == 0:
            self.commit([("FeatureLevelRecord", {"name": "metadata.version",
                                                  "feature_level": mr.METADATA_VERSION_LEVEL})], now)
            for seed in self.seeds:
                seed()

    # --- brokers ------------------------------------------------------------------------

    def _session_valid(self, broker_id: int, now: int) -> bool:
        b = self.image.brokers.get(broker_id)
        last = self.sessions.get(broker_id)
        return b is not None and not b.fenced and last is not None \
            and now - last <= self.settings.session_timeout_ms

    def register(self, req, now: int) -> dict:
        """BrokerRegistration: a new broker epoch (the offset of its record), fenced until
        its heartbeats show it has caught up. Another incarnation of an id whose session
        is still valid is refused (DUPLICATE_BROKER_REGISTRATION) until the session ends."""
        if req.cluster_id != self.settings.cluster_id:
            return _registered(ErrorCode.INCONSISTENT_CLUSTER_ID)
        old = self.image.brokers.get(req.broker_id)
        if old is not None and old.incarnation_id != req.incarnation_id and self._session_valid(req.broker_id, now):
            return _registered(ErrorCode.DUPLICATE_BROKER_REGISTRATION)
        records = []
        if old is not None and not old.fenced:  # (the same incarnation again): fenced first
            records += self._fence_records(old, now)
        epoch = self.log.end_offset + len(records)
        records.append(("RegisterBrokerRecord", {
            "broker_id": req.broker_id, "incarnation_id": req.incarnation_id, "broker_epoch": epoch,
            "end_points": [{"name": li.name, "host": li.host, "port": li.port,
                            "security_protocol": li.security_protocol} for li in req.listeners],
            "features": [{"name": f.name, "min_supported_version": f.min_supported_version,
                          "max_supported_version": f.max_supported_version} for f in req.features],
            "rack": req.rack, "fenced": True, "in_controlled_shutdown": False}))
        self.commit(records, now)
        self.sessions[req.broker_id] = now
        log.info("broker_registered", broker_id=req.broker_id, epoch=epoch, incarnation=str(req.incarnation_id))
        return _registered(ErrorCode.NONE, epoch)

    def heartbeat(self, req, now: int) -> dict:
        b = self.image.brokers.get(req.broker_id)
        if b is None:
            return _heartbeat(ErrorCode.BROKER_ID_NOT_REGISTERED)
        if b.epoch != req.broker_epoch:
            return _heartbeat(ErrorCode.STALE_BROKER_EPOCH)
        self.sessions[req.broker_id] = now
        caught_up = req.current_metadata_offset >= b.epoch
        if req.want_shut_down:
            return self._controlled_shutdown(b, caught_up, now)
        if b.fenced and caught_up and not req.want_fence:
            self.commit(self._unfence_records(b), now)
            log.info("broker_unfenced", broker_id=b.broker_id, epoch=b.epoch)
        elif not b.fenced and req.want_fence:
            self.commit(self._fence_records(b, now), now)
        b = self.image.brokers[req.broker_id]
        return _heartbeat(ErrorCode.NONE, caught_up=caught_up, fenced=b.fenced)

    def _controlled_shutdown(self, b, caught_up: bool, now: int) -> dict:
        """Kafka's controlled shutdown: leaderships move away first (and the broker leaves the
        ISRs), then the answer lets it stop, and it is fenced."""
        if not b.fenced:
            records = []
            if not b.in_controlled_shutdown:
                records.append(("BrokerRegistrationChangeRecord", {
                    "broker_id": b.broker_id, "broker_epoch": b.epoch, "in_controlled_shutdown": 1}))
            records += self._partition_moves(remove=b.broker_id)
            self.commit(records, now)
        if not self._leads_any(b.broker_id):
            if not self.image.brokers[b.broker_id].fenced:
                self.commit([("BrokerRegistrationChangeRecord", {
                    "broker_id": b.broker_id, "broker_epoch": b.epoch, "fenced": mr.CHANGE_FENCE})], now)
            self.sessions.pop(b.broker_id, None)
            log.info("broker_shut_down", broker_id=b.broker_id)
            return _heartbeat(ErrorCode.NONE, caught_up=caught_up, fenced=True, shut_down=True)
        return _heartbeat(ErrorCode.NONE, caught_up=caught_up, fenced=self.image.brokers[b.broker_id].fenced)

    def _leads_any(self, broker_id: int) -> bool:
        return any(p.leader == broker_id for t in self.image.topics.values() for p in t.partitions.values())

    def tick(self, now: int) -> int:
        """Fence every unfenced broker whose session passed; how many were."""
        if self._restarted:  # (the log's brokers are given a whole session to heartbeat again)
            self._restarted = False
            for b in self.image.brokers.values():
                self.sessions.setdefault(b.broker_id, now)
        expired = [b for b in self.image.brokers.values()
                   if not b.fenced and now - self.sessions.get(b.broker_id, now) > self.settings.session_timeout_ms]
        for b in expired:
            log.warning("broker_session_expired", broker_id=b.broker_id, epoch=b.epoch,
                        last_heartbeat_ms_ago=now - self.sessions.get(b.broker_id, now))
            self.commit(self._fence_records(b, now), now)
            self.sessions.pop(b.broker_id, None)
        return len(expired)

    def _fence_records(self, b, now: int) -> list:
        """The broker fenced: out of every ISR (but the last member), its leaderships moved."""
        return [("BrokerRegistrationChangeRecord", {"broker_id": b.broker_id, "broker_epoch": b.epoch,
                                                     "fenced": mr.CHANGE_FENCE}),
                *self._partition_moves(remove=b.broker_id)]

    def _unfence_records(self, b) -> list:
        """The broker unfenced: leaderless partitions whose ISR holds it get it as leader."""
        return [("BrokerRegistrationChangeRecord", {"broker_id": b.broker_id, "broker_epoch": b.epoch,
                                                     "fenced": mr.CHANGE_UNFENCE}),
                *self._partition_moves(add=b.broker_id, leaderless_only=True)]

    def _acceptable(self, remove: int = -2, add: int = -2):
        image = self.image
        return lambda r: r != remove and (r == add or image.is_active(r))

    def _unclean(self, topic: str) -> bool:
        value = self.image.topic_configs(topic).get("unclean.leader.election.enable")
        if value is None:
            value = self.image.broker_configs().get("unclean.leader.election.enable")
        return value.lower() == "true" if value is not None else self.settings.unclean_leader_election

    def _partition_moves(self, *, remove: int = -2, add: int = -2, leaderless_only: bool = False) -> list:
        """Kafka's generateLeaderAndIsrUpdates: partitions that hold ``remove`` drop it from
        their ISR and elect again without it; with ``add``, leaderless ones elect with it."""
        acceptable = self._acceptable(remove, add)
        records = []
        for topic in self.image.topics.values():
            election = UNCLEAN if self._unclean(topic.name) else ONLINE
            for index, part in topic.partitions.items():
                if leaderless_only and (part.leader != mr.NO_LEADER or add not in part.replicas):
                    continue
                if not leaderless_only and remove not in part.isr and part.leader != remove:
                    continue
                target = [r for r in part.isr if r != remove]
                change = partition_change(topic.topic_id, index, part, acceptable=acceptable,
                                          target_isr=target, election=election)
                if change is not None:
                    records.append(("PartitionChangeRecord", change))
        return records

    def unregister(self, broker_id: int, now: int) -> ErrorCode:
        """UnregisterBroker: only a fenced (or shut down) broker can go."""
        b = self.image.brokers.get(broker_id)
        if b is None:
            return ErrorCode.BROKER_ID_NOT_REGISTERED
        records = [] if b.fenced else self._fence_records(b, now)
        records.append(("UnregisterBrokerRecord", {"broker_id": broker_id, "broker_epoch": b.epoch}))
        self.commit(records, now)
        self.sessions.pop(broker_id, None)
        self.fetched.pop(broker_id, None)
        return ErrorCode.NONE

    def metadata_fetched(self, broker_id: int, offset: int, now: int) -> None:
        """A broker fetched the metadata log from ``offset`` (DescribeQuorum's observers)."""
        caught_up = now if offset >= self.log.end_offset else self.fetched.get(broker_id, (0, 0, -1))[2]
        self.fetched[broker_id] = (offset, now, caught_up)

    def read_metadata(self, fetch_offset: int, last_fetched_epoch: int, max_bytes: int,
                      replica_id: int, now: int) -> tuple[dict, int]:
        """A Fetch of the metadata log: the partition's answer (records up to the end: one
        voter commits at once; or the diverging epoch; or OFFSET_OUT_OF_RANGE), its size."""
        mlog = self.log
        row = {"partition_index": 0, "error_code": 0, "high_watermark": mlog.end_offset,
               "last_stable_offset": mlog.end_offset, "log_start_offset": mlog.start_offset,
               "aborted_transactions": None, "preferred_read_replica": -1, "records": b"",
               "current_leader": {"leader_id": self.settings.node_id, "leader_epoch": mlog.epoch}}
        diverging = mlog.diverging(fetch_offset, last_fetched_epoch)
        if diverging is not None:
            row["diverging_epoch"] = {"epoch": diverging[0], "end_offset": diverging[1]}
            return row, 1
        if not mlog.start_offset <= fetch_offset <= mlog.end_offset:
            row["error_code"] = int(ErrorCode.OFFSET_OUT_OF_RANGE)
            return row, 1
        self.metadata_fetched(replica_id, fetch_offset, now)
        got = mlog.read(fetch_offset, max_bytes)
        if got.chunks:
            row["records"] = got.chunks
        return row, got.size

    # --- partitions ---------------------------------------------------------------------

    def alter_partition(self, req, now: int) -> dict:
        """AlterPartition from a leader: Kafka's checks (the broker's epoch, the leader and its
        epoch, the partition epoch, every new ISR member an active broker), then the ISR change."""
        b = self.image.brokers.get(req.broker_id)
        if b is None or (req.broker_epoch != -1 and b.epoch != req.broker_epoch):
            return {"throttle_time_ms": 0, "error_code": int(ErrorCode.STALE_BROKER_EPOCH), "topics": []}
        records, answers = [], []
        for t in req.topics:
            topic = self.image.by_id.get(t.topic_id)
            rows = []
            for p in t.partitions:
                isr = [s.broker_id for s in p.new_isr_with_epochs] if "new_isr_with_epochs" in p else list(p.new_isr)
                code, part = self._check_alter(topic, p, isr, req.broker_id)
                if code == ErrorCode.NONE:
                    change = partition_change(topic.topic_id, p.partition_index, part,
                                              acceptable=self._acceptable(), target_isr=isr)
                    if change is not None:
                        change["leader"] = mr.NO_LEADER_CHANGE  # an ISR change never moves the leader
                        records.append(("PartitionChangeRecord", change))
                rows.append((p.partition_index, code))
            answers.append((t.topic_id, topic, rows))
        self.commit(records, now)
        out = []
        for topic_id, topic, rows in answers:
            parts = []
            for index, code in rows:
                part = topic.partitions.get(index) if topic is not None else None
                parts.append({"partition_index": index, "error_code": int(code),
                              "leader_id": part.leader if part is not None else -1,
                              "leader_epoch": part.leader_epoch if part is not None else -1,
                              "isr": list(part.isr) if part is not None else [],
                              "leader_recovery_state": 0,
                              "partition_epoch": part.partition_epoch if part is not None else -1})
            out.append({"topic_id": topic_id, "partitions": parts})
        return {"throttle_time_ms": 0, "error_code": 0, "topics": out}

    def _check_alter(self, topic, p, isr: list[int], broker_id: int):
        part = topic.partitions.get(p.partition_index) if topic is not None else None
        if part is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        if part.leader != broker_id:
            return ErrorCode.INVALID_REQUEST, part  # (Kafka: only the leader may ask)
        if p.leader_epoch != part.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH, part
        if p.partition_epoch != part.partition_epoch:
            return ErrorCode.INVALID_UPDATE_VERSION, part
        if broker_id not in isr or any(r not in part.replicas for r in isr):
            return ErrorCode.INVALID_REQUEST, part
        if any(r not in part.isr and not self.image.is_active(r) for r in isr):
            return ErrorCode.INELIGIBLE_REPLICA, part
        return ErrorCode.NONE, part

    def elect_leaders(self, election_type: int, wanted, now: int
                      ) -> list[tuple[str, list[tuple[int, ErrorCode, str | None]]]]:
        """ElectLeaders: 0 preferred, 1 unclean; ``wanted`` [(topic, [partition])], or None for
        every partition, where Kafka names every topic with only the partitions whose election
        was needed. (topic, [(partition, error, message)]) in Kafka's words."""
        election = PREFERRED if election_type == 0 else UNCLEAN
        every = wanted is None
        if every:
            wanted = [(t.name, sorted(t.partitions)) for t in self.image.topics.values()]
        records, out = [], []
        acceptable = self._acceptable()
        for name, indexes in wanted:
            rows = []
            for index in indexes:
                code, message = self._elect(name, index, election, acceptable, records)
                if not (every and code == ErrorCode.ELECTION_NOT_NEEDED):
                    rows.append((index, code, message))
            out.append((name, rows))
        self.commit(records, now)
        return out

    def _elect(self, name: str, index: int, election: str, acceptable, records: list) -> tuple[ErrorCode, str | None]:
        """One partition's election (Kafka's ReplicationControlManager.electLeader): its
        PartitionChangeRecord joins ``records``."""
        topic = self.image.topics.get(name)
        if topic is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}"
        part = topic.partitions.get(index)
        if part is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{index}"
        if (part.leader == part.replicas[0]) if election == PREFERRED else \
                (part.leader != mr.NO_LEADER and acceptable(part.leader)):
            return ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED
        change = partition_change(topic.topic_id, index, part, acceptable=acceptable, election=election)
        if change is None or change["leader"] in (mr.NO_LEADER_CHANGE, mr.NO_LEADER):
            code = ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if election == PREFERRED \
                else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
            return code, _election_failed(name, index, election)
        records.append(("PartitionChangeRecord", change))
        return ErrorCode.NONE, None

    # --- configs -------------------------------------------------------------------------

    def write_group_configs(self, group_id: str, old: dict, new: dict, now: int) -> None:
        """A group's configs (IncrementalAlterConfigs on the GROUP resource) as ConfigRecords."""
        records = [("ConfigRecord", {"resource_type": mr.GROUP_RESOURCE, "resource_name": group_id,
                                     "name": k, "value": v}) for k, v in new.items() if old.get(k) != v]
        records += [("ConfigRecord", {"resource_type": mr.GROUP_RESOURCE, "resource_name": group_id,
                                      "name": k, "value": None}) for k in old if k not in new]
        self.commit(records, now)

    # --- producer ids --------------------------------------------------------------------

    def allocate_producer_ids(self, broker_id: int, broker_epoch: int, now: int) -> dict:
        b = self.image.brokers.get(broker_id)
        if b is None or b.epoch != broker_epoch:
            return {"throttle_time_ms": 0, "error_code": int(ErrorCode.STALE_BROKER_EPOCH),
                    "producer_id_start": -1, "producer_id_len": 0}
        start = self.image.next_producer_id
        self.commit([("ProducerIdsRecord", {"broker_id": broker_id, "broker_epoch": broker_epoch,
                                            "next_producer_id": start + PRODUCER_ID_BLOCK})], now)
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id_start": start,
                "producer_id_len": PRODUCER_ID_BLOCK}


def _election_failed(topic: str, index: int, election: str) -> str:
    if election == PREFERRED:
        return f"Failed to elect leader for partition {topic}-{index} under strategy PreferredReplicaPartitionLeaderElectionStrategy"
    return f"Failed to elect leader for partition {topic}-{index} under strategy UncleanPartitionLeaderElectionStrategy"


def _registered(code: ErrorCode, epoch: int = -1) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "broker_epoch": epoch}


def _heartbeat(code: ErrorCode, *, caught_up: bool = False, fenced: bool = True, shut_down: bool = False) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "is_caught_up": caught_up, "is_fenced": fenced,
            "should_shut_down": shut_down}
