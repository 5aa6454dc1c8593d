"""The group coordinator: classic, consumer (KIP-848), share and streams (KIP-1071) groups
behind one front.

A group id names one group of one kind, as in Kafka's GroupMetadataManager.
This object holds the three engines and is the one place the rules between
them live:

- a classic JoinGroup may take the id of an empty consumer group (which is
  deleted, as Kafka converts it), never that of a share group; into a consumer
  group with members it joins as a classic member (consumer/classic_members.py);
- a consumer group may take the id of an empty classic group (which is deleted;
  its committed offsets stay), never that of a share group; a classic group with
  members is converted in place when ``group.consumer.migration.policy`` allows
  it, and converted back when its last KIP-848 member leaves (migration.py);
- a share group may not take the id of a consumer group or of a classic group
  with members;
- a streams group may take the id of an empty classic group (which is deleted),
  never that of a consumer or share group or a classic group with members; no
  other kind of group may take a streams group's id;
- committed offsets without a group make a "simple" classic group, unless a
  consumer group owns the id.

Handlers call these methods; the engines stay unaware of one another.
"""

from __future__ import annotations

import structlog

from kipper.broker.groups.classic import DEAD, EMPTY, ClassicGroupCoordinator
from kipper.broker.groups.classic_model import session_refusal
from kipper.broker.groups.consumer.classic_members import ClassicMembers
from kipper.broker.groups.consumer.coordinator import ConsumerGroupCoordinator
from kipper.broker.groups.consumer.model import JOIN_EPOCH
from kipper.broker.groups.migration import (
    abandon_rebalance, may_downgrade, may_upgrade, only_classic_left, to_classic_group,
    to_consumer_group,
)
from kipper.broker.groups.journal import partition_for
from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.groups.streams import queries as streams_queries
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

CLASSIC, CONSUMER, SHARE, STREAMS = "classic", "consumer", "share", "streams"


class GroupCoordinator:
    def __init__(self, classic: ClassicGroupCoordinator, consumer: ConsumerGroupCoordinator,
                 share, offsets: OffsetStore, *, migration_policy: str = "bidirectional",
                 journal=None, streams=None):
        self.journal = journal  # groups/journal.py's GroupJournal: __consumer_offsets, with log.dirs
        if journal is not None:
            journal.written = self._offsets_partition_written
        self.classic = classic
        self.consumer = consumer
        self.share = share  # broker.share.service.ShareGroups
        self.offsets = offsets
        self.migration_policy = migration_policy  # group.consumer.migration.policy
        self.mixed = ClassicMembers(consumer)  # classic members inside consumer groups
        self.streams = streams  # broker/groups/streams: StreamsGroupCoordinator
        # simple groups Kafka's coordinator made for a commit whose every offset it then refused:
        # no record was written, so its reads (DescribeGroups, ListGroups) do not see them until
        # a later write to their __consumer_offsets partition commits the coordinator's state
        # with them in it; its writes do at once (an empty classic group)
        self.unwritten_simple: set[str] = set()

    # --- who holds a group id ---------------------------------------------------------------

    def _classic_in_use(self, group_id: str) -> bool:
        group = self.classic.groups.get(group_id)
        return group is not None and bool(group.members or group.pending_members)

    def _streams_owns(self, group_id: str) -> bool:
        return self.streams is not None and self.streams.owns(group_id)

    def _held_against_classic(self, group_id: str) -> bool:
        if group_id in self.share.coordinator.groups or self._streams_owns(group_id):
            return True
        return not self.consumer.release_for_classic(group_id)

    def _held_against_consumer(self, group_id: str) -> bool:
        return (self._classic_in_use(group_id) or group_id in self.share.coordinator.groups
                or self._streams_owns(group_id))

    def _held_against_share(self, group_id: str) -> bool:
        """Any classic group holds its id against a share group, an empty one too (a failed
        join's or a simple group of offsets): Kafka keeps it as a group of that kind."""
        return self._classic_exists(group_id) or self.consumer.owns(group_id) or self._streams_owns(group_id)

    def _classic_exists(self, group_id: str) -> bool:
        group = self.classic.groups.get(group_id)
        return group is not None and group.state != DEAD

    def _held_against_streams(self, group_id: str) -> bool:
        return (self._classic_in_use(group_id) or self.consumer.owns(group_id)
                or group_id in self.share.coordinator.groups)

    def kind_of(self, group_id: str) -> str | None:
        if self.consumer.owns(group_id):
            return CONSUMER
        if group_id in self.share.coordinator.groups:
            return SHARE
        if self._streams_owns(group_id):
            return STREAMS
        if group_id in self.classic.groups:
            return CLASSIC
        return None

    # --- classic groups ----------------------------------------------------------------------

    def join(self, req, *, version: int, client_id: str, client_host: str, now: int, reply) -> None:
        group = self.consumer.groups.get(req.group_id) if req.group_id else None
        if group is not None and group.members:  # a classic member in a consumer group
            refused = session_refusal(self.classic.settings, req) if req.group_id else None
            return reply(refused or self.mixed.join(group, req, version=version, client_id=client_id,
                                                    client_host=client_host, now=now))
        held = bool(req.group_id) and self._held_against_classic(req.group_id)
        self.classic.join(req, version=version, client_id=client_id, client_host=client_host,
                          now=now, reply=reply, held_elsewhere=held)

    def sync(self, req, *, now: int, reply) -> None:
        group = self.consumer.groups.get(req.group_id)
        if group is not None:
            return reply(self.mixed.sync(group, req, now))
        self.classic.sync(req, now=now, reply=reply)

    def heartbeat(self, req, *, now: int) -> dict:
        group = self.consumer.groups.get(req.group_id)
        if group is not None:
            return self.mixed.heartbeat(group, req, now)
        return self.classic.heartbeat(req, now=now)

    def describe(self, group_id: str) -> dict:
        """DescribeGroups' row of a classic group (KIP-848 groups: consumer_describe)."""
        return self.classic.describe(group_id)

    def offsets_topic(self) -> None:
        """__consumer_offsets, made when a client first looks for a group coordinator, as
        Kafka makes it (FindCoordinator), so Metadata lists it from then on."""
        if self.journal is not None:
            self.journal.topic()

    def recover(self, now: int) -> dict:
        """At start, with log.dirs: committed offsets and classic groups from
        __consumer_offsets (the shell runs it: broker/server.py). Counts for the log."""
        if self.journal is None:
            return {}
        counts = self.journal.replay(self.offsets, self.classic, now,
                                     streams=self.streams.replay if self.streams is not None else None)
        if self.streams is not None:
            self.streams.loaded(now)
            counts["streams_groups"] = len(self.streams.groups)
        return counts

    def load(self, partition, now: int) -> dict:
        """A cluster's broker became the leader of a `__consumer_offsets` partition: the
        groups whose records it holds are coordinated here from now (Kafka's
        loadGroupsAndOffsets)."""
        if self.journal is None:
            return {}
        if self.streams is None:
            return self.journal.replay(self.offsets, self.classic, now, partitions=[partition])
        before = set(self.streams.groups)
        counts = self.journal.replay(self.offsets, self.classic, now, streams=self.streams.replay,
                                     partitions=[partition])
        loaded = set(self.streams.groups) - before
        self.streams.loaded(now, loaded)
        counts["streams_groups"] = len(loaded)
        return counts

    def unload(self, owned) -> int:
        """It is no longer the leader: the groups ``owned(group_id)`` picks go from here, as
        Kafka's coordinator resigns them (their members find the new coordinator)."""
        gone = self.offsets.unload(owned)
        kinds = (self.classic.groups, self.consumer.groups) + ((self.streams.groups,) if self.streams else ())
        for groups in kinds:
            for group_id in [g for g in groups if owned(g)]:
                del groups[group_id]
                gone += 1
        return gone

    def leave(self, group_id: str, identities, *, now: int):
        group = self.consumer.groups.get(group_id)
        if group is not None:
            return ErrorCode.NONE, self.mixed.leave(group, identities, now)
        return self.classic.leave(group_id, identities, now=now)

    # --- online migration (group.consumer.migration.policy) ---------------------------------------

    def _upgrade(self, group_id: str, now: int) -> None:
        """A KIP-848 member joins a classic group with members: convert it if allowed."""
        classic = self.classic.groups[group_id]
        if not may_upgrade(self.migration_policy):
            return
        group = to_consumer_group(classic, self.consumer.topics, now, self.consumer.settings.max_size)
        if group is None:
            log.info("classic_group_not_upgraded", group_id=group_id,
                     reason="a member cannot be converted")
            return
        abandon_rebalance(classic)
        self.classic.delete_group(group_id, now)
        self.consumer.groups[group_id] = group
        log.info("classic_group_upgraded", group_id=group_id, members=len(group.members))

    def _maybe_downgrade(self, group_id: str, now: int) -> None:
        """The last KIP-848 member left: the classic members make a classic group again."""
        group = self.consumer.groups.get(group_id)
        if group is None or not only_classic_left(group) or not may_downgrade(self.migration_policy):
            return
        classic = to_classic_group(group, self.consumer.topics, now)
        if not classic.protocol_name:
            return  # no protocol all of them speak: they stay where they are
        del self.consumer.groups[group_id]
        self.classic.adopt(classic, now)

    def ensure_simple_group(self, group_id: str) -> None:
        """Offsets committed without a group make a simple group, visible to ListGroups."""
        self.unwritten_simple.discard(group_id)
        if group_id not in self.classic.groups and not self.consumer.owns(group_id) \
                and not self._streams_owns(group_id):
            self.classic.get_or_create(group_id)

    # --- consumer groups (KIP-848) -------------------------------------------------------------

    def consumer_heartbeat(self, req, *, version: int, client_id: str, client_host: str,
                           now: int) -> dict:
        group_id = req.group_id
        refused = self.consumer.refusal(req, version)  # (before a join converts anything)
        if refused is not None:
            return refused
        if group_id and req.member_epoch == JOIN_EPOCH and not self.consumer.owns(group_id) \
                and self._classic_in_use(group_id):
            self._upgrade(group_id, now)  # only a join converts a classic group (Kafka's createIfNotExists)
        # (past a join any classic group holds the id, an empty one too: Kafka converts one only for a join)
        held = bool(group_id) and not self.consumer.owns(group_id) and (self._held_against_consumer(group_id) or (
            req.member_epoch != JOIN_EPOCH and self._classic_exists(group_id)))
        body = self.consumer.heartbeat(req, version=version, client_id=client_id,
                                       client_host=client_host, now=now, held_elsewhere=held)
        if self.consumer.owns(group_id) and group_id in self.classic.groups:
            # Kafka deletes an empty classic group (a simple group, say) when a consumer
            # group takes its id; the committed offsets stay
            del self.classic.groups[group_id]
        self._maybe_downgrade(group_id, now)
        return body

    def consumer_describe(self, group_id: str) -> dict:
        """ConsumerGroupDescribe: a group of any other kind holds the id (an empty classic group
        too, which a heartbeat would take over)."""
        held = not self.consumer.owns(group_id) and self.kind_of(group_id) is not None
        return self.consumer.describe(group_id, held_elsewhere=held)

    # --- streams groups (KIP-1071) -------------------------------------------------------------

    def streams_heartbeat(self, req, *, version: int, client_id: str, client_host: str, now: int):
        """StreamsGroupHeartbeat: a HeartbeatResult (its answer, the internal topics to create)."""
        group_id = req.group_id
        held = bool(group_id) and not self._streams_owns(group_id) and self._held_against_streams(group_id)
        result = self.streams.heartbeat(req, version=version, client_id=client_id, client_host=client_host,
                                        now=now, held_elsewhere=held)
        classic = self.classic.groups.get(group_id)
        if self._streams_owns(group_id) and classic is not None and not self._classic_in_use(group_id):
            # Kafka deletes an empty classic group (a simple group, say) when a streams group
            # takes its id; the committed offsets stay
            self.classic.delete_group(group_id, now)
        return result

    def streams_internal_topics(self, group_id: str, to_create: dict, now: int) -> dict[str, str]:
        """Create the internal topics a streams heartbeat found missing; a failure is kept
        (and not tried again) for twice the group's heartbeat interval, as Kafka does.
        Returns the failures known before this attempt."""
        ttl = 2 * self.streams.per_group.get(group_id, "heartbeat_interval_ms")
        return self.streams.create_internal_topics(to_create, now, ttl_ms=ttl)

    def streams_describe(self, group_id: str) -> dict:
        held = not self._streams_owns(group_id) and self.kind_of(group_id) is not None
        group = self.streams.groups.get(group_id)
        return streams_queries.describe(group, group_id, self.streams.per_group.assignor_name(group_id),
                                        held_elsewhere=held)

    # --- share groups ---------------------------------------------------------------------------

    def share_heartbeat(self, req, *, client_id: str, client_host: str, now: int) -> dict:
        # (a write: it sees the group a refused commit left, which reads do not)
        group_id = req.group_id
        held = bool(group_id) and (self._held_against_share(group_id) or group_id in self.unwritten_simple)
        return self.share.heartbeat(req, client_id=client_id, client_host=client_host, now=now,
                                    held_elsewhere=held)

    def share_describe(self, group_id: str) -> dict:
        """ShareGroupDescribe of one id: a group of another kind holds it (Kafka's shareGroup())."""
        held = group_id not in self.share.coordinator.groups and self._held_against_share(group_id)
        return self.share.describe(group_id, held_elsewhere=held)

    def share_offsets_group(self, group_id: str, *, create: bool, missing_ok: bool = False) -> tuple[ErrorCode, str | None]:
        """AlterShareGroupOffsets (``create``: an unknown id becomes an empty share group;
        ``missing_ok``: an unknown id that is not created passes) and DeleteShareGroupOffsets:
        Kafka's checks of the group (GROUP_ID_NOT_FOUND for an unknown id or another kind of
        group, NON_EMPTY_GROUP while it has members)."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, "The group id is invalid."
        kind = self.kind_of(group_id)
        if kind is None and (self.offsets.has_group(group_id) or group_id in self.unwritten_simple):
            kind = CLASSIC  # (a write: it sees the group a refused commit left)
        if kind not in (None, SHARE):
            return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
        if kind is None:
            if not create:
                return (ErrorCode.NONE, None) if missing_ok else (ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            self.share.coordinator.ensure_group(group_id)
        elif self.share.coordinator.groups[group_id].members:
            return ErrorCode.NON_EMPTY_GROUP, "The group is not empty."
        return ErrorCode.NONE, None

    # --- offsets --------------------------------------------------------------------------------

    def commit_refused(self, group_id: str) -> None:
        """Every offset of a commit that made no group was refused by the coordinator."""
        if self.kind_of(group_id) is None:
            self.unwritten_simple.add(group_id)

    def _offsets_partition_written(self, partition: int) -> None:
        """A record was written to ``__consumer_offsets`` partition ``partition``: the unwritten
        simple groups there are in what it committed (Kafka reads a snapshot of the coordinator's
        state at the last committed offset), so its reads see them from now on."""
        if not self.unwritten_simple:
            return
        count = len(self.journal.topic().partitions)
        for group_id in [g for g in self.unwritten_simple if partition_for(g, count) == partition]:
            self.ensure_simple_group(group_id)

    def _unwritten(self, group_id: str, generation: int) -> ErrorCode | None:
        """A commit to an unwritten simple group: an empty classic group's answer (Kafka's
        ClassicGroup.validateOffsetCommit: -1 commits, a generation is a member check)."""
        if group_id not in self.unwritten_simple or self.kind_of(group_id) is not None:
            return None
        return ErrorCode.NONE if generation < 0 else ErrorCode.UNKNOWN_MEMBER_ID

    def validate_commit(self, group_id: str, member_id: str, epoch: int, instance_id: str | None,
                        api_version: int, partitions=()) -> ErrorCode:
        """OffsetCommit: member epochs for a consumer or streams group, generations for a
        classic one. ``partitions``: the (topic, partition) pairs committed. A share group
        takes no commits: its id is no group of theirs (Kafka's GROUP_ID_NOT_FOUND)."""
        if self.kind_of(group_id) == SHARE:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if self._streams_owns(group_id):
            return streams_queries.validate_commit(self.streams.groups[group_id], member_id, epoch, instance_id,
                                                   partitions, transactional=False, api_version=api_version)
        if self.consumer.owns(group_id):
            return self.consumer.validate_commit(group_id, member_id, epoch, api_version=api_version)
        unwritten = self._unwritten(group_id, epoch)
        if unwritten is not None:
            return unwritten
        return self.classic.validate_commit(group_id, member_id, epoch, instance_id, api_version=api_version)

    def validate_txn_commit(self, group_id: str, member_id: str, generation_id: int,
                            instance_id: str | None = None, *, api_version: int = -1, partitions=()) -> ErrorCode:
        """TxnOffsetCommit (Kafka's validateTransactionalOffsetCommit): older clients send
        no member and generation -1, which any group takes; a member or generation the
        client sends must be the group's."""
        if self.kind_of(group_id) == SHARE:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if self._streams_owns(group_id):
            code = streams_queries.validate_commit(self.streams.groups[group_id], member_id, generation_id,
                                                   instance_id, partitions, transactional=True,
                                                   api_version=api_version)
            # KIP-1319: STALE_MEMBER_EPOCH from v6; older versions get ILLEGAL_GENERATION
            return ErrorCode.ILLEGAL_GENERATION if code == ErrorCode.STALE_MEMBER_EPOCH and api_version < 6 else code
        if self.consumer.owns(group_id):
            return self.consumer.validate_commit(group_id, member_id, generation_id,
                                                 api_version=-1, transactional=True)
        unwritten = self._unwritten(group_id, generation_id)
        if unwritten is not None:
            return unwritten
        return self.classic.validate_commit(group_id, member_id, generation_id, instance_id, transactional=True,
                                            api_version=api_version)

    def validate_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+ by a consumer-group (KIP-848) or streams-group member."""
        if self._streams_owns(group_id):
            return streams_queries.validate_fetch(self.streams.groups[group_id], member_id, member_epoch)
        if self.consumer.owns(group_id):
            return self.consumer.validate_fetch(group_id, member_id, member_epoch)
        return ErrorCode.NONE

    # --- DeleteGroups and OffsetDelete (Kafka's validateDeleteGroup / validateOffsetDelete) --------

    def _exists(self, group_id: str) -> bool:
        """A group of any kind, or committed offsets (which make a simple group)."""
        return self.kind_of(group_id) is not None or self.offsets.has_group(group_id)

    def delete_group(self, group_id: str, now: int) -> ErrorCode:
        """Delete an empty group of any kind with its committed offsets (and, for a
        share group, its share-partition state). Kafka's answer carries no message."""
        if not self._exists(group_id):  # "" is a group id like another (Kafka)
            if group_id in self.unwritten_simple:  # Kafka's write path holds it: deleted
                self.unwritten_simple.discard(group_id)
                return ErrorCode.NONE
            return ErrorCode.GROUP_ID_NOT_FOUND
        kind = self.kind_of(group_id)
        if kind == CLASSIC:
            state = self.classic.groups[group_id].state
            if state == DEAD:
                return ErrorCode.GROUP_ID_NOT_FOUND
            if state != EMPTY:
                return ErrorCode.NON_EMPTY_GROUP
        elif kind == CONSUMER and self.consumer.groups[group_id].members:
            return ErrorCode.NON_EMPTY_GROUP
        elif kind == SHARE and self.share.coordinator.groups[group_id].members:
            return ErrorCode.NON_EMPTY_GROUP
        elif kind == STREAMS and self.streams.groups[group_id].members:
            return ErrorCode.NON_EMPTY_GROUP
        self.offsets.delete_group(group_id, now)
        if kind == CLASSIC:
            self.classic.delete_group(group_id, now)
        elif kind == CONSUMER:
            self.consumer.delete_group(group_id)
        elif kind == SHARE:
            self.share.group_deleted(group_id)
        elif kind == STREAMS:
            self.streams.delete_group(group_id, now)
        return ErrorCode.NONE

    def delete_offsets(self, group_id: str, topics, now: int) -> tuple[ErrorCode, list]:
        """OffsetDelete: ``topics`` are (name, [partition]); (top-level error,
        [(name, [(partition, error)])]). A topic the group consumes is refused with
        GROUP_SUBSCRIBED_TO_TOPIC; offsets that are not there delete nothing."""
        if not self._exists(group_id):
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        kind = self.kind_of(group_id)
        if kind == SHARE:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        if kind == CLASSIC:
            group = self.classic.groups[group_id]
            if group.state == DEAD:
                return ErrorCode.GROUP_ID_NOT_FOUND, []
            if group.state != EMPTY and group.protocol_type != "consumer":
                return ErrorCode.NON_EMPTY_GROUP, []
            known = self.classic.subscribed_topics(group_id)

            def subscribed(topic):
                return topic in known if known is not None else group.protocol_type == "consumer"
        elif kind == CONSUMER:
            def subscribed(topic):
                return self.consumer.subscribed_to(group_id, topic)
        elif kind == STREAMS:
            def subscribed(topic):
                return streams_queries.subscribed_to(self.streams.groups[group_id], topic)
        else:
            def subscribed(topic):
                return False
        out, gone = [], []
        for name, partitions in topics:
            code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if subscribed(name) else ErrorCode.NONE
            if code == ErrorCode.NONE:
                gone.extend((name, p) for p in partitions)
            out.append((name, [(p, code) for p in partitions]))
        self.offsets.delete(group_id, gone, now)
        return ErrorCode.NONE, out

    # --- every kind -----------------------------------------------------------------------------

    def list_groups(self, states: set[str], types: set[str]) -> list[dict]:
        """ListGroups: both filters are case-insensitive, as in Kafka (v4 states, v5 types)."""
        states = {s.strip().lower() for s in states}
        types = {t.strip().lower() for t in types}

        def wanted(row: dict) -> bool:
            state = "not_ready" if row["group_state"] == "NotReady" else row["group_state"].lower()  # Kafka's name
            return ((not states or state in states)
                    and (not types or row["group_type"] in types))

        rows = [{"group_id": g.group_id, "protocol_type": g.protocol_type or "",
                 "group_state": g.state, "group_type": CLASSIC} for g in self.classic.groups.values()]
        rows += self.consumer.list_groups() + self.share.coordinator.list_groups()
        if self.streams is not None:
            rows += [streams_queries.listed(g) for g in self.streams.groups.values()]
        return [row for row in rows if wanted(row)]

    def active_groups(self) -> set[str]:
        """Groups with members: their committed offsets do not expire."""
        classic = {g for g, group in self.classic.groups.items() if group.members}
        streams = {g for g, group in self.streams.groups.items() if group.members} if self.streams else set()
        return classic | self.consumer.active_groups() | streams

    def idle(self) -> bool:
        """No group, so nothing a tick could expire (the shell's timer then sleeps)."""
        return (not self.classic.groups and not self.consumer.groups and not self.mixed.pending
                and not (self.streams is not None and self.streams.groups))

    def tick(self, now: int) -> None:
        self.classic.tick(now)
        self.consumer.tick(now)
        self.mixed.tick(now)
        if self.streams is not None:
            self.streams.tick(now)
        for group_id in list(self.consumer.groups):
            self._maybe_downgrade(group_id, now)
