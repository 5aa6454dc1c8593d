"""A burst of Produce requests answered as runs (Dispatcher.dispatch, handle_produce)
gets the answers, and leaves the logs, that the same requests get one at a time.

Two whole brokers (``build_broker``, one clock) each serve one connection
(``KafkaConnection`` on a recording transport). One is fed every request in a single
read, so requests repeating a head the connection kept are answered as runs; the
other's dispatcher answers no runs, so each request is a run of one.
The requests mix what a run must get right: repeated heads with records of other sizes,
idempotent sequences with duplicates, gaps and fenced epochs, corrupt batches, other
partitions, topics that do not exist, acks 0 and invalid acks, transactional ids
without a transaction, and other versions and client ids that end a run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kipper.broker import config as cfg
from kipper.broker.composition import build_broker
from kipper.broker.connection import KafkaConnection
from kipper.broker.context import Session
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.handlers import HANDLERS
from kipper.broker.security.service import PRE_AUTH_APIS
from kipper.protocol import records
from kipper.protocol.header import encode_request
from kipper.protocol.messages.produce import PRODUCE

from tests.support.transport import RecordingTransport

NOW = 1_700_000_000_000
TOPICS = ("a", "b")


def _broker(runs: bool, **overrides):
    broker = build_broker(cfg.load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0", "log.level": "WARNING",
                                              **overrides}), clock=lambda: NOW)
    broker.dispatcher = Dispatcher(broker, dict(HANDLERS), pre_auth_apis=PRE_AUTH_APIS, runs=runs)
    for name in TOPICS:
        broker.topics.create(name, 2)
    transport = RecordingTransport()
    conn = KafkaConnection(broker.dispatcher, lambda t, peer: Session("PLAINTEXT", peer), set(), max_frame=1 << 20)
    conn.connection_made(transport)
    return broker, conn, transport


@st.composite
def requests(draw):
    """(version, client id, acks, transactional id, topic, partition, batch) tuples; most
    repeat the one before them but for the batch."""
    out = []
    sequence = {}
    head = (9, "c", 1, None, "a", 0)
    for _ in range(draw(st.integers(1, 40))):
        if out and draw(st.integers(0, 9)) < 7:
            version, client, acks, tid, topic, partition = head
        else:
            version = draw(st.sampled_from([3, 7, 9, 9, 11]))
            client = draw(st.sampled_from(["c", "c", "d"]))
            acks = draw(st.sampled_from([1, 1, -1, 0, 2]))
            tid = draw(st.sampled_from([None, None, None, "txn"]))
            topic = draw(st.sampled_from(TOPICS + ("missing",)))
            partition = draw(st.sampled_from([0, 0, 1, 5]))
            head = (version, client, acks, tid, topic, partition)
        kind = draw(st.sampled_from(["plain", "idempotent", "idempotent", "idempotent", "corrupt"]))
        values = [(None, draw(st.binary(min_size=0, max_size=draw(st.sampled_from([8, 120, 300])))), NOW - 5)
                  for _ in range(draw(st.integers(1, 3)))]
        if kind == "plain":
            batch = records.build_batch(values)
        else:
            pid = draw(st.sampled_from([7, 8]))
            key = (pid, topic, partition)
            base = sequence.get(key, 0) + draw(st.sampled_from([0, 0, 0, 0, -len(values), 1]))  # retries, gaps
            epoch = draw(st.sampled_from([0, 0, 0, 1]))
            batch = records.build_batch(values, producer_id=pid, producer_epoch=epoch, base_sequence=max(base, 0))
            sequence[key] = max(sequence.get(key, 0), max(base, 0) + len(values))
            if kind == "corrupt":
                batch = bytearray(batch)
                batch[-1] ^= 0xFF  # the CRC no longer matches
                batch = bytes(batch)
        out.append((version, client, acks, tid, topic, partition, batch))
    return out


def _frames(reqs) -> list[bytes]:
    return [encode_request(PRODUCE, version, cid, client, {
        "transactional_id": tid, "acks": acks, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
        for cid, (version, client, acks, tid, topic, partition, batch) in enumerate(reqs)]


def _written(transport) -> bytes:
    return b"".join(b"".join(bytes(b) for b in f) if isinstance(f, list) else bytes(f) for f in transport.frames)


def _logs(broker) -> dict:
    return {(name, p.partition): [(base, bytes(batch)) for base, batch in p.log.batches_from(0)]
            for name in TOPICS for p in broker.topics.get(name).partitions}


@settings(max_examples=150, deadline=None)
@given(reqs=requests(), split=st.integers(1, 40))
def test_runs_answer_and_store_what_one_request_at_a_time_does(reqs, split):
    frames = _frames(reqs)
    ran, ran_conn, ran_out = _broker(runs=True)
    data = b"".join(frames)
    cut = sum(len(f) for f in frames[:split])  # two reads: a run may end at a read's end
    ran_conn.data_received(data[:cut])
    ran_conn.data_received(data[cut:])
    alone, alone_conn, alone_out = _broker(runs=False)
    for frame in frames:
        alone_conn.data_received(frame)
    assert _written(ran_out) == _written(alone_out)
    assert _logs(ran) == _logs(alone)
    counted, alone_counted = ran.metrics.cumulative(), alone.metrics.cumulative()
    assert counted["totals"] == alone_counted["totals"]
    assert counted["partitions"] == alone_counted["partitions"]
    assert {name: h.count for name, h in counted["apis"].items()} == \
        {name: h.count for name, h in alone_counted["apis"].items()}


def test_a_burst_of_repeated_requests_goes_through_one_run():
    """The run path is the one taken (so the test above compares two paths, not one)."""
    broker, conn, transport = _broker(runs=True)
    batches = [records.build_batch([(None, b"v%d" % i, NOW)]) for i in range(10)]
    calls = []
    handler = broker.dispatcher.handlers[PRODUCE.key]

    def counting(run, ctx):
        if len(run) > 1:  # (a request alone is a run of one)
            calls.append(len(run))
        return handler(run, ctx)
    broker.dispatcher.handlers[PRODUCE.key] = counting
    conn.data_received(b"".join(_frames([(9, "c", 1, None, "a", 0, b) for b in batches])))
    assert calls == [9]  # the first request keeps the head; the nine after it repeat it
    assert broker.topics.get("a").partitions[0].log_end_offset == 10
    assert len(_written(transport)) > 0


def test_refusals_are_counted_per_request_in_a_run():
    """Under an authorizer with no ACL, every Produce is refused; a run counts each refusal
    (Kafka logs and counts each), as requests one at a time do."""
    reqs = [(9, "c", 1, tid, "a", 0, records.build_batch([(None, b"v", NOW)])) for tid in [None] * 4 + ["txn"] * 3]
    frames = _frames(reqs)
    ran, ran_conn, ran_out = _broker(runs=True, **{"authorizer.class.name": "standard"})
    ran_conn.data_received(b"".join(frames))
    alone, alone_conn, alone_out = _broker(runs=False, **{"authorizer.class.name": "standard"})
    for frame in frames:
        alone_conn.data_received(frame)
    assert _written(ran_out) == _written(alone_out)
    assert ran.acls.denied == alone.acls.denied == {"Produce": 7}  # 4 on the topic, 3 on the transactional id


def test_a_run_stops_at_a_throttled_answer_and_the_rest_wait(tmp_path):
    """With a producer-id quota (seed 002: a burst of 20 new ids here) the 21st new producer id is throttled:
    its answer ends the run, the connection mutes, and the requests after it are held,
    exactly as when they are handled one at a time."""
    from kipper.protocol.messages import APIS

    async def serve(runs: bool, where):
        overrides = {"producer.id.quota.window.num": "2", "producer.id.quota.window.size.seconds": "10",
                     "config.dir": str(where)}
        broker, conn, transport = _broker(runs, **overrides)
        alter = {"entries": [{"entity": [{"entity_type": "user", "entity_name": "ANONYMOUS"}],
                              "ops": [{"key": "producer_ids_rate", "value": 1.0, "remove": False}]}],
                 "validate_only": False}
        broker.dispatcher.dispatch([encode_request(APIS[49], 1, 1, "admin", alter)[4:]], 0, Session("PLAINTEXT", "a"))
        batches = [records.build_batch([(None, b"v", NOW)], producer_id=pid, producer_epoch=0, base_sequence=seq)
                   for pid, seq in [(pid, 0) for pid in range(1, 23)] + [(1, 1), (2, 1)]]
        conn.data_received(b"".join(_frames([(9, "c", -1, None, "a", 0, b) for b in batches])))
        held = len(conn._held)
        conn.close()
        return _written(transport), held, _logs(broker)

    import asyncio

    ran = asyncio.run(serve(True, tmp_path / "ran"))
    alone = asyncio.run(serve(False, tmp_path / "alone"))
    assert ran == alone
    assert ran[1] == 3  # the three requests after the throttled one wait for the mute to end


def test_a_frame_too_short_for_a_header_ends_the_run_and_the_connection():
    """The requests before it are answered; it closes the connection, as it does alone."""
    batches = [records.build_batch([(None, b"v%d" % i, NOW)]) for i in range(3)]
    frames = _frames([(9, "c", 1, None, "a", 0, b) for b in batches])
    data = b"".join(frames) + (4).to_bytes(4, "big") + b"\x00\x00\x00\x09"
    outcomes = []
    for runs in (True, False):
        broker, conn, transport = _broker(runs)
        conn.data_received(data)
        outcomes.append((_written(transport), conn.closing, _logs(broker)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] and outcomes[0][2][("a", 0)][-1][0] == 2  # closed, the three stored
