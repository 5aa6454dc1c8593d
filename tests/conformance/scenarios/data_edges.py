"""Edges of the data path and the protocol that a new user of the protocol meets (issue 36,
items 1-8, 16-18): overlapping idempotent batches, batch headers that disagree with their
records, legacy message sets, acks=0 refusals, a partition named twice, fetch sessions and
epochs, partial batches at partition_max_bytes, ApiVersions' software names, and which
answers carry an error_message (null, "" or text) as Kafka's do."""

from __future__ import annotations

from kipper.protocol import records
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register, scenario
from tests.support import malformed as m

LOG_APPEND_TIME = 0x08


def _idempotent(run, t: str | None = None):
    t = t or k.create_topic(run)
    resp = k.init_producer_id(run, None)
    return t, resp.get("producer_id", -1), resp.get("producer_epoch", -1)


def _send(run, t, pid, epoch, seq, n=1, start=0, label="produce", acks=-1):
    return k.produce(run, t, k.batch(n, start=start, producer_id=pid, producer_epoch=epoch, base_sequence=seq),
                     label=label, acks=acks)


# --- item 1: a batch overlapping the latest ------------------------------------------------

@scenario("edges/idempotent-overlapping-batch")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 3, label="sequences 0-2")
    _send(run, t, pid, epoch, 1, 3, start=1, label="sequences 1-3: past the latest")
    _send(run, t, pid, epoch, 2, 5, start=2, label="sequences 2-6: past the latest")
    _send(run, t, pid, epoch, 0, 3, label="0-2 again: the exact retry")
    _send(run, t, pid, epoch, 3, 1, start=3, label="3: the next in order")
    k.list_offsets(run, t, -1)
    k.fetch(run, t, 0)


# --- items 2, 3: what the header says about timestamps ----------------------------------------

@scenario("edges/log-append-time-flag-on-a-create-time-topic")
def _(run):
    t = k.create_topic(run)
    recs = [(b"k0", b"v0", k.TS), (b"k1", b"v1", k.TS + 5), (b"k2", b"v2", k.TS + 2)]
    k.produce(run, t, records.assemble(b"".join(records.encode_record(i, ts - k.TS, key, v)
                                                for i, (key, v, ts) in enumerate(recs)),
                                       3, k.TS, k.TS + 5, extra_attributes=LOG_APPEND_TIME))
    k.produce(run, t, m.with_header(k.batch(2, start=3), attributes=LOG_APPEND_TIME, max_timestamp=k.TS + 50),
              label="the flag and a max timestamp past the records")
    k.fetch(run, t, 0)
    k.list_offsets(run, t, -3, label="max timestamp")
    k.list_offsets(run, t, k.TS + 4, label="by timestamp")


for _codec, _name in ((0, "uncompressed"), (1, "gzip"), (4, "zstd")):
    def _disagreeing(run, codec=_codec):
        t = k.create_topic(run)
        k.produce(run, t, m.with_header(k.batch(3, compression_type=codec), max_timestamp=k.TS + 100),
                  label="header max above the records")
        k.produce(run, t, m.with_header(k.batch(3, start=3, compression_type=codec), max_timestamp=k.TS),
                  label="header max below the records")
        k.produce(run, t, m.with_header(k.batch(2, start=10, compression_type=codec), max_timestamp=-1),
                  label="header max unknown")
        k.fetch(run, t, 0)
        for label, ts in (("max timestamp", -3), ("by timestamp, inside", k.TS + 4),
                          ("by timestamp, past the records", k.TS + 50), ("latest", -1)):
            k.list_offsets(run, t, ts, label=label)
    register(f"edges/header-max-timestamp-disagrees-{_name}", _disagreeing)


@scenario("edges/timestamp-too-far-ahead-behind-a-low-header")
def _(run):
    t = k.create_topic(run, configs={"message.timestamp.after.max.ms": "1000"})
    far = 4_000_000_000_000
    k.produce(run, t, m.with_header(k.batch(recs=[(b"k", b"v", k.TS), (b"k", b"w", far)]), max_timestamp=k.TS))
    k.list_offsets(run, t, -1)


# --- item 4: base offset ------------------------------------------------------------------------

@scenario("edges/base-offset-not-zero")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, m.with_header(k.batch(2), base_offset=5), label="base offset 5")
    k.produce(run, t, m.with_header(k.batch(1), base_offset=-1), label="base offset -1")
    k.list_offsets(run, t, -1)


# --- item 5: MAX_TIMESTAMP over records without timestamps -------------------------------------

@scenario("edges/max-timestamp-without-timestamps")
def _(run):
    t = k.create_topic(run)
    k.list_offsets(run, t, -3, label="empty partition")
    k.produce(run, t, records.assemble(b"".join(records.encode_record(i, 0, b"k", b"v") for i in range(2)),
                                       2, -1, -1))
    k.list_offsets(run, t, -3, label="records at -1")
    k.list_offsets(run, t, 0, label="by timestamp 0")
    k.fetch(run, t, 0)
    k.produce(run, t, k.batch(1, start=2), label="a record with a timestamp")
    k.list_offsets(run, t, -3, label="after one with a timestamp")


# --- item 6: acks=0 refusals close the connection -----------------------------------------

def _acks0(run, topic: str, data: bytes, label: str, partition: int = 0):
    conn = f"acks0-{label}"
    run.send(k.PRODUCE, k.top(k.PRODUCE), {
        "transactional_id": None, "acks": 0, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "topic_id": k.NO_TOPIC_ID,
                        "partition_data": [{"index": partition, "records": data}]}]}, conn=conn,
        label=f"acks=0: {label}")
    _still_open(run, conn, label)


def _still_open(run, conn: str, after: str) -> None:
    """Whether ``conn`` still answers (an ApiVersions), then drop it."""
    run.call(k.API_VERSIONS, 3, {"client_software_name": "conformance", "client_software_version": "1.0"},
             conn=conn, label=f"the same connection after {after}")
    run.drop(conn)


@scenario("edges/acks-0-refusals")
def _(run):
    t = k.create_topic(run, configs={"max.message.bytes": "300"})
    _acks0(run, run.name("missing"), k.batch(1), "unknown topic")
    _acks0(run, t, k.batch(1), "unknown partition", partition=4)
    _acks0(run, t, k.batch(recs=[(b"k", b"x" * 400, k.TS)]), "message too large")
    bad = bytearray(k.batch(1))
    bad[-1] ^= 0xFF
    _acks0(run, t, bytes(bad), "bad CRC")
    _acks0(run, t, k.batch(1), "a good one")
    k.list_offsets(run, t, -1)


@scenario("edges/acks-0-out-of-order")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 1)
    _acks0(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=7), "sequence gap")
    k.list_offsets(run, t, -1)


# --- item 7: legacy message sets ----------------------------------------------------------------

@scenario("edges/magic-v0-and-v1")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, m.legacy_message(0, b"k", b"v"), label="magic 0")
    k.produce(run, t, m.legacy_message(1, b"k", b"v"), label="magic 1")
    k.produce(run, t, m.legacy_message(1, b"k", b"v") + k.batch(1), label="magic 1 then a v2 batch")
    k.produce(run, t, k.batch(1)[:40], label="a truncated batch")
    k.list_offsets(run, t, -1)


# --- item 8: a partition twice in one request ------------------------------------------------

@scenario("edges/same-partition-twice")
def _(run):
    t = k.create_topic(run, partitions=2)
    run.call(k.PRODUCE, k.top(k.PRODUCE), {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [
            {"index": 0, "records": k.batch(2)}, {"index": 1, "records": k.batch(1)},
            {"index": 0, "records": k.batch(3, start=10)}]}]}, label="partition 0 twice in one topic entry")
    run.call(k.PRODUCE, k.top(k.PRODUCE), {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [{"index": 1, "records": k.batch(2, start=20)}]},
        {"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [{"index": 1, "records": k.batch(1, start=30)}]}]},
        label="the topic twice")
    for p in (0, 1):
        k.list_offsets(run, t, -1, partition=p, label=f"end of partition {p}")
        k.fetch(run, t, 0, partition=p, label=f"fetch partition {p}")


# --- item 16: fetch sessions, epochs, partial batches ------------------------------------------

def _fetch(run, t, *, session_id=0, session_epoch=-1, offset=0, last_fetched_epoch=-1, partition_max_bytes=1 << 20,
           max_bytes=1 << 20, partitions=(0,), version=None, label="fetch"):
    v = k.top(k.FETCH) if version is None else version
    return run.call(k.FETCH, v, {
        "cluster_id": None, "replica_id": -1, "max_wait_ms": 50, "min_bytes": 1, "max_bytes": max_bytes,
        "isolation_level": 0, "session_id": session_id, "session_epoch": session_epoch,
        "topics": [{"topic": t, "topic_id": k.topic_id(run, t) if v >= 13 else k.NO_TOPIC_ID,
                    "partitions": [{"partition": p, "current_leader_epoch": -1, "fetch_offset": offset,
                                    "last_fetched_epoch": last_fetched_epoch, "log_start_offset": -1,
                                    "partition_max_bytes": partition_max_bytes} for p in partitions]}],
        "forgotten_topics_data": [], "rack_id": ""}, label=label)


@scenario("edges/fetch-unknown-session")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(1))
    _fetch(run, t, session_id=123456, session_epoch=1, label="unknown session, epoch 1")
    _fetch(run, t, session_id=123456, session_epoch=7, label="unknown session, epoch 7")
    _fetch(run, t, session_id=0, session_epoch=3, label="no session, epoch 3")
    _fetch(run, t, session_id=123456, session_epoch=-1, label="unknown session, final epoch")


@scenario("edges/fetch-last-fetched-epoch")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(2))
    _fetch(run, t, offset=1, last_fetched_epoch=5, label="last fetched epoch above the leader's")
    _fetch(run, t, offset=1, last_fetched_epoch=0, label="the leader's epoch")
    _fetch(run, t, offset=2, last_fetched_epoch=0, label="the leader's epoch at the end")
    _fetch(run, t, offset=7, last_fetched_epoch=0, label="past the end of the leader's epoch")
    _fetch(run, t, offset=7, label="past the end, no epoch")
    _fetch(run, t, offset=1, last_fetched_epoch=5, version=11, label="v11 has no last fetched epoch")


@scenario("edges/fetch-partition-max-bytes-cuts-a-batch")
def _(run):
    t = k.create_topic(run, partitions=2)
    first = k.batch(3)
    k.produce(run, t, first)
    k.produce(run, t, k.batch(3, start=3))
    k.produce(run, t, k.batch(2, start=50), partition=1)
    _fetch(run, t, partition_max_bytes=len(first) + 30, label="cut 30 bytes into the second batch")
    _fetch(run, t, partition_max_bytes=len(first) + 5, label="cut 5 bytes into the second batch")
    _fetch(run, t, partition_max_bytes=len(first), label="exactly one batch")
    _fetch(run, t, partition_max_bytes=20, partitions=(0, 1), label="the second partition below one batch")
    _fetch(run, t, max_bytes=len(first) + 40, partitions=(0, 1), label="the response's max_bytes cuts partition 1")


# --- item 17: ApiVersions' software name and version ------------------------------------------

@scenario("edges/api-versions-software-names")
def _(run):
    for i, (name, version) in enumerate((("ok-client", "1.0.0"), ("", "1.0"), ("-lead", "1"), ("trail-", "1"),
                                         ("a b", "1"), ("a_b", "1"), ("a", "1.0!"), ("a", ""), ("x.y-z", "v2"))):
        conn = f"av{i}"
        run.conn(conn, negotiate=False)
        run.call(k.API_VERSIONS, k.top(k.API_VERSIONS), {"client_software_name": name, "client_software_version": version},
                 conn=conn, label=f"name {name!r} version {version!r}")
        _still_open(run, conn, f"{name!r} {version!r}")


# --- item 18: error_message -----------------------------------------------------------------

@scenario("edges/produce-error-messages")
def _(run):
    t = k.create_topic(run, configs={"max.message.bytes": "300"})
    k.produce(run, t, k.batch(recs=[(b"k", b"x" * 400, k.TS)]), label="message too large")
    bad = bytearray(k.batch(1))
    bad[-1] ^= 0xFF
    k.produce(run, t, bytes(bad), label="bad CRC")
    k.produce(run, t, b"", label="empty records")
    k.produce(run, t, m.with_header(k.batch(2), records_count=3), label="count does not match")
    k.produce(run, t, k.batch(1) + k.batch(1), label="two batches")
    k.produce(run, t, records.build_batch([(b"k", b"v", k.TS)], control=True), label="control batch")
    t2, pid, epoch = _idempotent(run, k.create_topic(run, "t2"))
    _send(run, t2, pid, epoch, 0, 1)
    _send(run, t2, pid, epoch, 5, 1, label="sequence gap")
    _send(run, t2, pid, epoch + 3, 2, 1, label="a new epoch not at 0")
    k.produce(run, t2, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=run.name("nobody"), label="transactional batch, no transaction")


@scenario("edges/describe-error-messages")
def _(run):
    t = k.create_topic(run)
    run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), {
        "resources": [{"resource_type": k.TOPIC, "resource_name": t, "configuration_keys": ["retention.ms"]}],
        "include_synonyms": False, "include_documentation": False}, label="describe configs")
    for v in (1, 2, 3, 4):
        run.call(k.DESCRIBE_CONFIGS, v, {
            "resources": [{"resource_type": k.TOPIC, "resource_name": t, "configuration_keys": ["retention.ms"]}],
            "include_synonyms": False, "include_documentation": False}, label=f"describe configs v{v}")
    run.call(k.DESCRIBE_CLIENT_QUOTAS, k.top(k.DESCRIBE_CLIENT_QUOTAS), {"components": [
        {"entity_type": "user", "match_type": 0, "match": run.name("nobody")}], "strict": True},
        label="describe client quotas")
    run.call(k.DESCRIBE_SCRAM, k.top(k.DESCRIBE_SCRAM), {"users": [{"name": "alice"}]}, label="describe scram: alice")
    for v in range(k.DESCRIBE_PRODUCERS.min_version, k.top(k.DESCRIBE_PRODUCERS) + 1):
        run.call(k.DESCRIBE_PRODUCERS, v, {"topics": [{"name": run.name("missing"), "partition_indexes": [0]},
                                                      {"name": t, "partition_indexes": [0, 3]}]},
                 label=f"describe producers v{v}")
