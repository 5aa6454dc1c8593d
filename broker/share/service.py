"""The broker's share groups: coordinator, share sessions and share-partition store together.

This is what the share handlers and the shell's timer talk to. It ties the
engines to each other: an assignment loads or creates the share-partitions, and
the records a member acquired are released when its *share session* ends (a
request with ShareSessionEpoch -1, its connection closing, the session idling
out), not when the member leaves the group: librdkafka sends the leave heartbeat
and the final ShareAcknowledge at once, on two connections, and the final
acknowledgements must count whichever arrives first (Kafka 4.x does the same:
SharePartitionManager releases on the session's end). A member evicted for
silence loses its session and its records at once. Synchronous; no asyncio here.
"""

from __future__ import annotations

import structlog

from kipper.broker.share import offsets
from kipper.broker.share.coordinator import LEFT, MEMBER_ID_MOST, TIMED_OUT, ShareGroupCoordinator
from kipper.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSessionCache
from kipper.broker.share.settings import ShareSettings
from kipper.broker.share.states import ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE
from kipper.broker.share.store import ShareStore
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

# a record state -> its count's key in partitions_snapshot
_STATE_KEYS = {AVAILABLE: "available", ACQUIRED: "acquired", ACKNOWLEDGED: "acknowledged",
               ARCHIVED: "archived"}

# ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge, and the offset APIs
# DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets
SHARE_API_KEYS = (76, 77, 78, 79, 90, 91, 92)


class ShareGroups:
    def __init__(self, settings: ShareSettings, topics, *, notify=None, group_config=None,
                 index_files=None, coordinated_here=None):
        self.settings = settings
        # in a cluster, whether this broker coordinates a group (its members are known here);
        # a share-partition's leader elsewhere takes a member on trust, as Kafka's does
        self.coordinated_here = coordinated_here or (lambda group_id: True)
        self.topics = topics
        self.store = ShareStore(settings, topics, on_available=notify, group_config=group_config,
                                index_files=index_files)
        # each group's share settings: its group configs over the broker's keys
        self.group_settings = self.store.group_settings
        self.coordinator = ShareGroupCoordinator(settings, topics, self.group_settings)
        self.sessions = ShareSessionCache()

    def snapshot(self) -> dict:
        """Counts for the metrics dump: the engines count, the shell exports."""
        loaded = self.store.loaded.values()
        return {
            "groups": len(self.coordinator.groups),
            "members": sum(len(g.members) for g in self.coordinator.groups.values()),
            "share_sessions": len(self.sessions),
            "share_partitions_loaded": len(self.store.loaded),
            "in_flight_records": sum(sp.window_records for sp in loaded),
            "available_records": sum(sp.available_records for sp in loaded),
            "checkpoints_written": self.store.writes[records.SHARE_CHECKPOINT],
            "deltas_written": self.store.writes[records.SHARE_DELTA],
            "recoveries": self.store.recoveries,
        }

    def partitions_snapshot(self) -> dict:
        """The metrics dumps' "share" section: each loaded share-partition's records by
        state (counted in its window at the snapshot) and by delivery count, and its
        cumulative lock expiries."""
        rows = []
        for sp in list(self.store.loaded.values()):
            row = {"group": sp.group_id, "topic": sp.topic, "partition": sp.partition,
                   "spso": sp.spso, "speo": sp.speo, "in_flight": sp.in_flight,
                   "in_flight_records": sp.window_records,
                   "max_record_locks": sp.max_in_flight_records,
                   "available": 0, "acquired": 0, "acknowledged": 0, "archived": 0}
            counts: dict[str, int] = {}
            for run in sp.runs:
                n = run.last - run.first + 1
                name = _STATE_KEYS.get(run.state)
                if name:
                    row[name] += n
                if run.count:
                    counts[str(run.count)] = counts.get(str(run.count), 0) + n
            row["delivery_counts"] = counts
            row["lock_expiries"] = sp.lock_expiries
            rows.append(row)
        rows.sort(key=lambda r: (r["group"], r["topic"], r["partition"]))
        return {"partitions": rows}

    # --- membership -----------------------------------------------------------------------

    def heartbeat(self, req, *, client_id: str, client_host: str, now: int,
                  held_elsewhere: bool = False) -> dict:
        body, events = self.coordinator.heartbeat(req, client_id=client_id, client_host=client_host,
                                                  now=now, held_elsewhere=held_elsewhere)
        self._handle(events, now)
        return body

    def _handle(self, events, now: int) -> None:
        for event in events:
            if event[0] == LEFT:
                self._member_left(event[1], event[2], now)
            elif event[0] == TIMED_OUT:
                self.close_session(event[1], event[2], now)
            elif event[0] == "assigned":
                topic = self.topics.get(event[2])
                if topic is not None:
                    self.store.get(event[1], topic, event[3], now)

    def _member_left(self, group_id: str, member_id: str, now: int) -> None:
        # With a share session open, the member's final ShareAcknowledge or ShareFetch
        # (epoch -1) may still be on its way: its records stay acquired until the
        # session ends. Without one there is nothing in flight.
        if (group_id, member_id) not in self.sessions.sessions:
            self.release(group_id, member_id, now)

    def release(self, group_id: str, member_id: str, now: int) -> None:
        """Make what ``member_id`` holds in the group available again (persisted)."""
        for key in self.store.group_keys(group_id):
            sp = self.store.loaded[key]
            self.store.persist(sp, sp.release_member(member_id), now)

    def connection_closed(self, connection, now: int) -> None:
        """A client connection went: the share sessions it was using end (Kafka 4.1+,
        KAFKA-19015), releasing what their members still hold."""
        for key, session in list(self.sessions.sessions.items()):
            if session.connection is connection:
                self.close_session(*key, now)

    def idle(self) -> bool:
        """No share group, session or loaded share-partition (no acquisition lock to
        expire); what a tick still does then (checkpoints of unloaded partitions) runs
        at seconds' intervals."""
        return not self.coordinator.groups and not self.sessions.sessions and not self.store.loaded

    def tick(self, now: int) -> None:
        self._handle(self.coordinator.tick(now), now)
        for session in list(self.sessions.sessions.values()):
            idle = now - self.group_settings.session_timeout_ms(session.group_id)
            if session.last_used < idle and not self.is_member(session.group_id, session.member_id):
                self.close_session(session.group_id, session.member_id, now)
        self.store.tick(now)
        unload_ms = self.settings.state_unload_ms
        for group in self.coordinator.groups.values():
            if not group.members and now - group.empty_since >= unload_ms:
                for key in self.store.group_keys(group.group_id):
                    self.store.unload(key, now)

    # --- share sessions -------------------------------------------------------------------

    def open_session(self, group_id: str, member_id: str, epoch: int, now: int, *, fetch: bool,
                     connection=None):
        """(error, message, session) for a ShareFetch (``fetch``) or ShareAcknowledge
        arriving on ``connection`` (the session ends if that connection closes)."""
        if not member_id or len(member_id) > MEMBER_ID_MOST or group_id is None:
            return ErrorCode.INVALID_REQUEST, None, None  # (Kafka's answer has no text)
        # (group "" has no members, so a ShareFetch opening a session there is a missing
        # member's; a ShareAcknowledge of group "" finds no session, as on Kafka)
        if epoch == INITIAL_EPOCH and fetch and not self.is_member(group_id, member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID, f"{member_id} is not a member of {group_id}", None
        code, session = self.sessions.open(group_id, member_id, epoch, now, may_create=fetch)
        if code != ErrorCode.NONE:
            return code, None, None
        if connection is not None:
            session.connection = connection
        return ErrorCode.NONE, None, session

    def close_session(self, group_id: str, member_id: str, now: int) -> None:
        """The share session ends (epoch -1, its connection closed, idle, or the member
        was evicted): what the member still holds is released."""
        self.sessions.close(group_id, member_id)
        self.release(group_id, member_id, now)

    def session_alive(self, session) -> bool:
        return self.sessions.sessions.get((session.group_id, session.member_id)) is session

    def describe(self, group_id: str, held_elsewhere: bool = False) -> dict:
        """ShareGroupDescribe's row of a share group (``held_elsewhere``: the id is another kind's)."""
        return self.coordinator.describe(group_id, held_elsewhere)

    def recover(self) -> int:
        """At start, with log.dirs: every share-partition's index entry from its snapshot
        file and the records after it (the shell runs it: broker/server.py), and an empty
        share group for each group that has state, as Kafka's persisted groups come back."""
        count = self.store.load()
        for group_id in self.store.groups_with_state():
            self.coordinator.ensure_group(group_id)
        return count

    # --- the share-group offset APIs (share/offsets.py) -------------------------------------

    def describe_offsets(self, group_id: str, wanted) -> list[dict]:
        return offsets.describe(self, self.topics, group_id, wanted)

    def alter_offsets(self, group_id: str, wanted, now: int) -> list[dict]:
        return offsets.alter(self, group_id, wanted, now)

    def alter_failed(self, group_id: str) -> None:
        """An AlterShareGroupOffsets that failed whole: nothing altered, but the group it made
        has its first epoch, as Kafka's coordinator bumped it before the state was refused."""
        self.coordinator.offsets_altered(group_id)

    def delete_offsets(self, group_id: str, names) -> list[dict]:
        return offsets.delete(self, self.topics, group_id, names)

    def lock_duration_ms(self, group_id: str) -> int:
        """The acquisition lock of the group's records (share.record.lock.duration.ms)."""
        return self.group_settings.lock_duration_ms(group_id)

    def is_member(self, group_id: str, member_id: str) -> bool:
        if not self.coordinated_here(group_id):
            return True
        return self.coordinator.is_member(group_id, member_id)

    def topic_deleted(self, topic: str) -> None:
        self.store.topic_deleted(topic)

    def group_deleted(self, group_id: str) -> int:
        """DeleteGroups: the group, its share sessions and its share-partition state."""
        self.coordinator.delete_group(group_id)
        for key in [k for k in self.sessions.sessions if k[0] == group_id]:
            self.sessions.close(*key)
        return self.store.group_deleted(group_id)

    # --- records --------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic, partition: int, now: int):
        return self.store.get(group_id, topic, partition, now)

    def acknowledge(self, group_id: str, member_id: str, topic, partition: int, batches,
                    now: int, *, allow_renew: bool = False) -> tuple[ErrorCode, str | None]:
        """The partition's error and its text (Kafka's, or None): its first refused batch's."""
        sp = self.store.get(group_id, topic, partition, now)
        if sp is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        messages: list = []
        errors, changes = sp.acknowledge(member_id, batches, now, allow_renew=allow_renew,
                                         renew_enabled=self.group_settings.renew_enabled(group_id),
                                         messages=messages)
        self.store.persist(sp, changes, now)
        return next(((e, m) for e, m in zip(errors, messages) if e != ErrorCode.NONE), (ErrorCode.NONE, None))

    def loading(self, group_id: str, topic, partition: int, now: int) -> bool:
        """The share-partition has not been read by a ShareFetch since it was loaded here:
        Kafka loads a share-partition's state (from its share coordinator) when the first
        ShareFetch names it, and its fetches pass over the partition until the load is done
        (SharePartition's INITIALIZING state)."""
        sp = self.store.get(group_id, topic, partition, now)
        return sp is not None and not sp.fetch_ready

    def loaded(self, group_id: str, topic, partition: int, now: int) -> None:
        """The load ``loading`` waits for is done (the fetch path says when)."""
        sp = self.store.get(group_id, topic, partition, now)
        if sp is not None:
            sp.fetch_ready = True

    def acquirable(self, group_id: str, topic, partition: int, now: int) -> bool:
        """Kafka's check before a fetch reads a share-partition (DelayedShareFetch's
        acquirable partitions): its state is loaded, and it may acquire: records to deliver
        again, or room under the record-lock cap."""
        sp = self.store.get(group_id, topic, partition, now)
        return sp is not None and sp.fetch_ready and (sp.available_records > 0 or not sp.at_cap())

    def ready_bytes(self, group_id: str, topic, partition: int, cap: int, now: int) -> int:
        """Bytes a fetch could acquire now, counted up to ``cap`` (ShareFetch MinBytes)."""
        sp = self.store.get(group_id, topic, partition, now)
        if sp is None:
            return 0
        if sp.available_records:
            return cap
        if sp.at_cap():
            return 0
        total = 0
        for _, _, size in self.store.view(group_id, topic.partitions[partition]).data_spans(sp.speo):
            total += size
            if total >= cap:
                break
        return total

    def acquire(self, group_id: str, member_id: str, topic, partition: int, now: int, *,
                max_records: int, max_bytes: int, batch_optimized: bool = True):
        """(acquired ranges, batches holding them) for one share-partition."""
        sp = self.store.get(group_id, topic, partition, now)
        if sp is None:
            return [], []
        p = topic.partitions[partition]
        ranges = sp.acquire(member_id, now, self.store.view(group_id, p), max_records=max_records,
                            max_bytes=max_bytes, batch_optimized=batch_optimized)
        return ranges, batches_for(p, ranges) if ranges else []


def batches_for(partition, ranges) -> list[bytes]:
    """The stored data batches that hold the acquired ``ranges`` (control batches left out)."""
    out = []
    taken_end = 0  # offsets below this are in batches already looked at
    for first, last, _ in ranges:
        for base, data in partition.batches_from(max(first, taken_end)):
            if base > last:
                break
            h = b.read_header(data)
            taken_end = base + h.last_offset_delta + 1
            if not h.attributes & b.CONTROL:
                out.append(data)
    return out


__all__ = ["ShareGroups", "FINAL_EPOCH", "INITIAL_EPOCH", "SHARE_API_KEYS", "batches_for"]
