"""ShareConsumer: a share-group consumer (KIP-932, seed 004) over plain sockets.

A background thread keeps the membership alive (ShareGroupHeartbeat on the
group coordinator connection) and publishes the assignment. Everything else
runs on the application's thread: ``poll`` sends one ShareFetch per partition
leader, carrying the acknowledgements of the previous poll, and returns the
acquired records with their delivery counts; ``commit_sync``/``commit_async``
send ShareAcknowledge. Responses are read in order on the same thread, so the
acknowledgement commit callback always runs on the application thread.

    consumer = ShareConsumer({"bootstrap.servers": "localhost:9092", "group.id": "g"})
    consumer.subscribe(["orders"])
    for record in consumer.poll(1.0):
        ...                              # implicit mode: accepted on the next poll
    consumer.close()
"""

from __future__ import annotations

import base64
import select
import threading
import time
import uuid
from collections import deque
from typing import Callable

import structlog

from kipper.client.admin import metadata
from kipper.client.blocking import BlockingConnection, connect_any
from kipper.client.consumer_requests import find_coordinator, share_group_heartbeat
from kipper.client.share_acks import (
    AcknowledgeType, AckTracker, IllegalStateError, ShareRecord, TopicPartition, decode_partition,
)
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS

log = structlog.get_logger(__name__)

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
_SESSION_RESET = (ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH)

DEFAULTS = {
    "client.id": "kipper-share-consumer",
    "share.acknowledgement.mode": "implicit",
    "max.poll.records": 500,
    "fetch.max.wait.ms": 500,
    "fetch.min.bytes": 1,
    "fetch.max.bytes": 52428800,
    "request.timeout.ms": 30000,
    # KIP-1206: batch_optimized lets the broker hand out whole batches past
    # max.poll.records; record_limit cuts acquisition at it (ShareFetch v2)
    "share.acquire.mode": "batch_optimized",
}
ACQUIRE_MODES = {"batch_optimized": 0, "record_limit": 1}

__all__ = ["ShareConsumer", "ShareRecord", "AcknowledgeType", "TopicPartition", "IllegalStateError"]


class _Connection(BlockingConnection):
    """Requests go out at once; answers are read in order and handed to callbacks."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.waiting: deque = deque()

    def submit(self, api_key: int, body: dict, callback: Callable) -> None:
        api = APIS[api_key]
        version = self.pick_version(api_key)
        self.correlation_id += 1
        self.sock.sendall(encode_request(api, version, self.correlation_id, self.client_id, body))
        self.waiting.append((self.correlation_id, api, version, callback))

    def complete_one(self) -> None:
        frame = self._read_frame()
        cid, api, version, callback = self.waiting.popleft()
        got, body = decode_response(api, version, frame)
        if got != cid:
            raise ConnectionError(f"correlation id {got} does not match request {cid}")
        callback(body)

    def complete_ready(self) -> None:
        """Handle the answers that have already arrived, without blocking."""
        while self.waiting:
            if not self._frames:
                readable, _, _ = select.select([self.sock], [], [], 0)
                if not readable:
                    return
            self.complete_one()

    def complete_all(self) -> None:
        while self.waiting:
            self.complete_one()


class _Session:
    """One share session with one partition leader."""

    def __init__(self, conn: _Connection):
        self.conn = conn
        self.epoch = 0
        self.partitions: set = set()  # (topic_id, partition) the broker has in the session

    def next_epoch(self) -> int:
        epoch = self.epoch
        self.epoch = 1 if epoch == 2**31 - 1 else epoch + 1
        return epoch

    def reset(self) -> None:
        self.epoch = 0
        self.partitions = set()


class ShareConsumer:
    def __init__(self, config: dict, *, on_completion: Callable | None = None):
        unknown = set(config) - set(DEFAULTS) - {"bootstrap.servers", "group.id"}
        if unknown:
            raise ValueError(f"unknown ShareConsumer config: {', '.join(sorted(unknown))}")
        self.config = {**DEFAULTS, **config}
        for key in ("bootstrap.servers", "group.id"):
            if not self.config.get(key):
                raise ValueError(f"ShareConsumer needs {key}")
        mode = self.config["share.acknowledgement.mode"]
        if mode not in ("implicit", "explicit"):
            raise ValueError("share.acknowledgement.mode must be implicit or explicit")
        if self.config["share.acquire.mode"] not in ACQUIRE_MODES:
            raise ValueError("share.acquire.mode must be batch_optimized or record_limit")
        self.group_id = self.config["group.id"]
        self.member_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        self.on_completion = on_completion
        self.acks = AckTracker(implicit=mode == "implicit")
        self._lock = threading.Lock()
        self._wake = threading.Event()  # wakes the heartbeat thread
        self._assigned = threading.Event()  # set whenever a new assignment is published
        self._closed = False
        self._subscription: tuple[str, ...] = ()
        self._subscription_sent = False
        self._member_epoch = 0
        self._heartbeat_ms = 1000
        self._assignment: dict = {}  # (topic_id, partition) -> (topic name, leader node id)
        self._brokers: dict[int, tuple[str, int]] = {}
        self._sessions: dict[int, _Session] = {}
        self._routes: dict[TopicPartition, tuple[int, object]] = {}  # -> (leader, topic id)
        self._results: list[dict] = []  # acknowledgement results not yet given to the callback
        timeout = self.config["request.timeout.ms"] / 1000
        self._bootstrap = connect_any(self.config["bootstrap.servers"],
                                      client_id=self.config["client.id"], timeout=timeout)
        self._coordinator = self._find_coordinator(timeout)
        self._thread = threading.Thread(target=self._heartbeat_loop, name="share-heartbeat",
                                        daemon=True)
        self._thread.start()

    # --- public API -----------------------------------------------------------------------

    def subscribe(self, topics) -> None:
        topics = tuple(dict.fromkeys(topics))
        if any(not t for t in topics):
            raise ValueError("topic names must not be empty")
        with self._lock:
            self._subscription = topics
            self._subscription_sent = False
        self._wake.set()

    def subscription(self) -> list[str]:
        return list(self._subscription)

    def unsubscribe(self) -> None:
        self.subscribe(())

    def set_acknowledgement_commit_callback(self, callback: Callable | None) -> None:
        self.on_completion = callback

    def acknowledge(self, record: ShareRecord, ack_type: AcknowledgeType = AcknowledgeType.ACCEPT) -> None:
        if self.acks.implicit:
            raise IllegalStateError("acknowledge() needs share.acknowledgement.mode=explicit")
        if ack_type not in (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT):
            raise ValueError(f"cannot acknowledge with {ack_type!r}")
        self.acks.acknowledge(TopicPartition(record.topic, record.partition), record.offset, ack_type)

    def poll(self, timeout: float = 1.0) -> list[ShareRecord]:
        """Records acquired for this member (waits up to ``timeout`` seconds for some)."""
        self._check_open()
        if not self._subscription:
            raise IllegalStateError("poll() before subscribe()")
        deadline = time.monotonic() + max(timeout, 0)
        self.acks.close_poll()
        out: list[ShareRecord] = []
        while True:
            self._complete_ready()
            remaining = deadline - time.monotonic()
            by_leader = self._by_leader()
            if not by_leader:
                if self.acks.pending:
                    self._send_acks(final=False)
                self._run_callbacks()
                if remaining <= 0:
                    return out
                self._assigned.wait(min(remaining, 0.05))
                self._assigned.clear()
                continue
            wait_ms = int(min(max(remaining, 0) * 1000, self.config["fetch.max.wait.ms"]))
            for leader, keys in by_leader.items():
                self._fetch(leader, keys, wait_ms, out)
            if self.acks.pending:  # for partitions no longer assigned
                self._send_acks(final=False)
            for session in self._sessions.values():
                session.conn.complete_all()
            self._run_callbacks()
            if out or time.monotonic() >= deadline:
                return out

    def commit_sync(self, timeout: float = 30.0) -> dict:
        """Send pending acknowledgements and wait: {TopicPartition: None or KafkaError}."""
        self._check_open()
        self.acks.close_poll()
        results = self._send_acks(final=False)
        for session in self._sessions.values():
            session.conn.complete_all()
        self._run_callbacks()
        return {tp: err for batch in results for tp, err in batch.items()}

    def commit_async(self) -> None:
        self._check_open()
        self.acks.close_poll()
        self._send_acks(final=False)

    def close(self) -> None:
        """Accept (implicit mode) or send what was acknowledged, close the share
        sessions (the broker releases what is left) and leave the group."""
        if self._closed:
            return
        try:
            if self.acks.implicit:
                self.acks.close_poll()
            else:
                self.acks.delivered.clear()
            self._send_acks(final=True)
            for session in self._sessions.values():
                session.conn.complete_all()
            self._run_callbacks()
        finally:
            self._closed = True
            self._wake.set()
            self._thread.join(10)
            for session in self._sessions.values():
                session.conn.close()
            self._bootstrap.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- fetching ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("the share consumer is closed")

    def _by_leader(self) -> dict[int, dict]:
        with self._lock:
            assignment = dict(self._assignment)
        out: dict[int, dict] = {}
        for key, (name, leader) in assignment.items():
            out.setdefault(leader, {})[key] = name
        return out

    def _session(self, leader: int) -> _Session:
        session = self._sessions.get(leader)
        if session is None:
            host, port = self._brokers[leader]
            conn = _Connection(host, port, client_id=self.config["client.id"],
                               timeout=self.config["request.timeout.ms"] / 1000)
            conn.negotiate()
            session = self._sessions[leader] = _Session(conn)
        return session

    def _fetch(self, leader: int, keys: dict, wait_ms: int, out: list) -> None:
        session = self._session(leader)
        names = dict(keys)
        for (topic_id, partition), name in names.items():
            self._routes[TopicPartition(name, partition)] = (leader, topic_id)
        acks = self.acks.take({TopicPartition(n, p) for (_, p), n in names.items()})
        if session.epoch == 0 and acks:
            # acknowledgements cannot open a session: open it first
            self._submit_fetch(session, names, {}, 0, max_records=0, out=out)
        self._submit_fetch(session, names, acks, wait_ms, self.config["max.poll.records"], out)

    def _submit_fetch(self, session: _Session, names: dict, acks: dict, wait_ms: int,
                      max_records: int, out: list) -> None:
        ids = {tp: key for key, tp in ((k, TopicPartition(n, k[1])) for k, n in names.items())}
        wanted = set(names)
        listed: dict = {}
        for key in wanted - session.partitions:
            listed.setdefault(key, [])
        for tp, batches in acks.items():
            key = ids.get(tp)
            if key is not None:
                listed.setdefault(key, []).extend(batches)
        forget = session.partitions - wanted
        topics: dict = {}
        for (topic_id, partition), batches in listed.items():
            topics.setdefault(topic_id, []).append(
                {"partition_index": partition, "partition_max_bytes": 0,
                 "acknowledgement_batches": batches})
        forgotten: dict = {}
        for topic_id, partition in forget:
            forgotten.setdefault(topic_id, []).append(partition)
        body = {"group_id": self.group_id, "member_id": self.member_id,
                "share_session_epoch": session.next_epoch(), "max_wait_ms": wait_ms,
                "min_bytes": self.config["fetch.min.bytes"], "max_bytes": self.config["fetch.max.bytes"],
                "max_records": max_records, "batch_size": max_records,
                "share_acquire_mode": ACQUIRE_MODES[self.config["share.acquire.mode"]],
                "topics": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()],
                "forgotten_topics_data": [{"topic_id": t, "partitions": ps} for t, ps in forgotten.items()]}
        session.partitions = (session.partitions | wanted) - forget
        acked = {tp for tp in acks}

        def done(resp):
            self._on_fetch(session, resp, names, acked, out)
        session.conn.submit(SHARE_FETCH, body, done)

    def _on_fetch(self, session: _Session, resp, names: dict, acked: set, out: list) -> None:
        if resp.error_code:
            self._on_top_level_error(session, resp.error_code, acked)
            return
        results: dict = {}
        for t in resp.responses:
            for p in t.partitions:
                name = names.get((t.topic_id, p.partition_index))
                if name is None:
                    continue
                tp = TopicPartition(name, p.partition_index)
                if tp in acked:
                    results[tp] = (KafkaError(p.acknowledge_error_code, p.acknowledge_error_message or "")
                                   if p.acknowledge_error_code else None)
                if p.error_code:
                    log.warning("share_fetch_partition_error", topic=name, partition=p.partition_index,
                                error=ErrorCode(p.error_code).name)
                    continue
                recs, gaps = decode_partition(name, p.partition_index, p.records, p.acquired_records)
                if recs or gaps:
                    self.acks.delivered_records(tp, recs, gaps)
                    out.extend(recs)
        for tp in acked - set(results):
            results[tp] = KafkaError(ErrorCode.INVALID_RECORD_STATE, "no answer for the partition")
        if results:
            self._results.append(results)

    def _on_top_level_error(self, session: _Session, code: int, acked: set) -> None:
        if code in _SESSION_RESET:
            session.reset()
        elif code == ErrorCode.UNKNOWN_MEMBER_ID:
            time.sleep(0.05)  # the heartbeat thread is joining again
        log.info("share_fetch_failed", error=ErrorCode(code).name)
        if acked:
            self._results.append({tp: KafkaError(code) for tp in acked})

    # --- acknowledgements ---------------------------------------------------------------

    def _send_acks(self, *, final: bool) -> list[dict]:
        """ShareAcknowledge to every leader with something pending (epoch -1 if ``final``)."""
        results: list[dict] = []
        pending = self.acks.take()
        per_leader: dict = {}
        for tp, batches in pending.items():
            route = self._routes.get(tp)
            if route is None:
                continue  # never fetched here: nothing of it can be held
            per_leader.setdefault(route[0], []).append((route[1], tp, batches))
        leaders = set(per_leader) | (set(self._sessions) if final else set())
        for leader in leaders:
            session = self._sessions.get(leader)
            items = per_leader.get(leader, [])
            if session is None or (session.epoch == 0 and not items):
                continue
            if session.epoch == 0:  # acknowledgements cannot open a session: open it first
                self._submit_fetch(session, {(t, tp.partition): tp.topic for t, tp, _ in items},
                                   {}, 0, 0, [])
            topics: dict = {}
            for topic_id, tp, batches in items:
                topics.setdefault(topic_id, []).append({"partition_index": tp.partition,
                                                        "acknowledgement_batches": batches})
            names = {(topic_id, tp.partition): tp.topic for topic_id, tp, _ in items}
            epoch = -1 if final else session.next_epoch()
            body = {"group_id": self.group_id, "member_id": self.member_id,
                    "share_session_epoch": epoch,
                    "topics": [{"topic_id": t, "partitions": ps} for t, ps in topics.items()]}

            def done(resp, names=names, session=session, acked={tp for _, tp, _ in items}):
                if resp.error_code:
                    self._on_top_level_error(session, resp.error_code, acked)
                    return
                out = {}
                for t in resp.responses:
                    for p in t.partitions:
                        name = names.get((t.topic_id, p.partition_index))
                        if name is not None:
                            out[TopicPartition(name, p.partition_index)] = (
                                KafkaError(p.error_code, p.error_message or "") if p.error_code else None)
                for tp in acked - set(out):
                    out[tp] = KafkaError(ErrorCode.INVALID_RECORD_STATE, "no answer for the partition")
                if out:
                    self._results.append(out)
                    results.append(out)
            session.conn.submit(SHARE_ACKNOWLEDGE, body, done)
            if final:
                session.reset()
        return results

    def _complete_ready(self) -> None:
        for session in self._sessions.values():
            session.conn.complete_ready()

    def _run_callbacks(self) -> None:
        results, self._results = self._results, []
        if self.on_completion is None:
            return
        for batch in results:
            self.on_completion(batch)

    # --- membership (heartbeat thread) ----------------------------------------------------

    def _find_coordinator(self, timeout: float) -> BlockingConnection:
        coord = find_coordinator(self._bootstrap, self.group_id)
        conn = BlockingConnection(coord.host, coord.port, client_id=self.config["client.id"],
                                  timeout=timeout)
        conn.negotiate()
        return conn

    def _heartbeat_loop(self) -> None:
        conn = self._coordinator
        try:
            while not self._closed:
                if self._subscription or self._member_epoch > 0:
                    self._heartbeat(conn)
                self._wake.wait(self._heartbeat_ms / 1000)
                self._wake.clear()
            if self._member_epoch > 0:
                share_group_heartbeat(conn, self.group_id, self.member_id, -1)
        except (OSError, ConnectionError) as exc:
            log.warning("share_heartbeat_stopped", error=str(exc))
        finally:
            conn.close()

    def _heartbeat(self, conn: BlockingConnection) -> None:
        with self._lock:
            topics = None if self._subscription_sent and self._member_epoch > 0 else list(self._subscription)
            self._subscription_sent = True
        resp = share_group_heartbeat(conn, self.group_id, self.member_id, self._member_epoch,
                                     subscribed_topic_names=topics)
        if resp.error_code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH):
            self._member_epoch = 0
            with self._lock:
                self._subscription_sent = False
                self._assignment = {}
            self._heartbeat_ms = 100
            return
        if resp.error_code:
            log.warning("share_heartbeat_failed", error=ErrorCode(resp.error_code).name,
                        message=resp.error_message)
            self._heartbeat_ms = 1000
            return
        self._member_epoch = resp.member_epoch
        self._heartbeat_ms = max(resp.heartbeat_interval_ms, 50)
        if resp.assignment is not None:
            self._set_assignment(conn, resp.assignment)

    def _set_assignment(self, conn: BlockingConnection, assignment) -> None:
        ids = {tp.topic_id for tp in assignment.topic_partitions}
        meta = metadata(conn, topic_ids=ids)
        brokers = {b.node_id: (b.host, b.port) for b in meta.brokers}
        leaders = {}
        for t in meta.topics:
            for p in t.partitions:
                leaders[(t.topic_id, p.partition_index)] = (t.name, p.leader_id)
        new = {}
        for tp in assignment.topic_partitions:
            for partition in tp.partitions:
                found = leaders.get((tp.topic_id, partition))
                if found is not None:
                    new[(tp.topic_id, partition)] = found
        with self._lock:
            self._brokers.update(brokers)
            self._assignment = new
        self._assigned.set()
