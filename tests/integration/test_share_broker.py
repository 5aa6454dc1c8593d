"""Share groups on the real broker, spoken to with raw requests and with our client:
API versions, share sessions and their errors, long-polls, member removal,
recovery after unloading, limits, DeleteRecords, the tools and config errors."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid

import pytest

from kipper.client import admin
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import share_group_heartbeat
from kipper.client.producer_requests import produce as produce_request
from kipper.client.share_acks import AcknowledgeType
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.broker import ROOT, BrokerProcess, free_port

HB, DESCRIBE, FETCH, ACK = 76, 77, 78, 79
SESSION_MS = 1500


@pytest.fixture(scope="module")
def sbroker():
    proc = BrokerProcess({
        "group.share.min.session.timeout.ms": "1000", "group.share.session.timeout.ms": str(SESSION_MS),
        "group.share.min.heartbeat.interval.ms": "100", "group.share.heartbeat.interval.ms": "500",
        "group.share.state.unload.ms": "1000", "group.share.max.size": "10",
        "group.share.auto.offset.reset.groups": "early-1:earliest,early-2:earliest,early-3:earliest",
    }).start()
    yield proc
    proc.stop()


class Raw:
    """One member speaking the share protocol by hand."""

    def __init__(self, bootstrap, group, member=None):
        self.conn = connect_any(bootstrap)
        self.group = group
        self.member = member or uuid.uuid4().hex[:22]
        self.epoch = 0
        self.session_epoch = 0

    def heartbeat(self, topics=None, epoch=None):
        resp = share_group_heartbeat(self.conn, self.group, self.member,
                                     self.epoch if epoch is None else epoch, subscribed_topic_names=topics)
        if resp.error_code == 0:
            self.epoch = resp.member_epoch
        return resp

    def fetch(self, topic_id, *, acks=(), epoch=None, max_wait_ms=None, max_records=100,
              version=1, min_bytes=1, renew=False, mode=0):
        epoch = self.session_epoch if epoch is None else epoch
        if max_wait_ms is None:
            # a share-partition's first fetch passes it over while its state loads (Kafka):
            # the fetch that opens a session waits for it
            max_wait_ms = 1000 if epoch == 0 else 0
        max_bytes = 1 << 20
        if renew:  # KIP-1222: a renewal fetches nothing, every fetch limit 0 (else INVALID_REQUEST)
            max_wait_ms = min_bytes = max_bytes = max_records = 0
        body = {"group_id": self.group, "member_id": self.member, "share_session_epoch": epoch,
                "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
                "max_records": max_records, "batch_size": max_records, "is_renew_ack": renew,
                "share_acquire_mode": mode,
                "topics": [{"topic_id": topic_id, "partitions": [{
                    "partition_index": 0, "acknowledgement_batches": [
                        {"first_offset": f, "last_offset": last, "acknowledge_types": [t]}
                        for f, last, t in acks]}]}],
                "forgotten_topics_data": []}
        resp = self.conn.request(FETCH, body, version=version)
        if resp.error_code == 0 and epoch >= 0:
            self.session_epoch = epoch + 1
        return resp

    def ack(self, topic_id, acks, epoch=None, version=1, renew=False):
        epoch = self.session_epoch if epoch is None else epoch
        resp = self.conn.request(ACK, {
            "group_id": self.group, "member_id": self.member, "share_session_epoch": epoch,
            "is_renew_ack": renew,
            "topics": [{"topic_id": topic_id, "partitions": [{
                "partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": f, "last_offset": last, "acknowledge_types": [t]}
                    for f, last, t in acks]}]}]}, version=version)
        if resp.error_code == 0 and epoch >= 0:
            self.session_epoch = epoch + 1
        return resp

    def close(self):
        self.conn.close()


RECORD_LIMIT = 1  # ShareAcquireMode (KIP-1206)


def set_group_configs(conn, group, configs):
    resource = admin.ConfigResource(admin.ConfigResourceType.GROUP, group)
    ops = [admin.AlterConfigOp(k, v) for k, v in configs.items()]
    resp = admin.incremental_alter_configs(conn, {resource: ops})
    assert resp.responses[0].error_code == 0, resp


def acquired(resp):
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in resp.responses for p in t.partitions for a in p.acquired_records]


def values(resp):
    return [r.value for t in resp.responses for p in t.partitions
            for b in records.decode_all(p.records or b"") for r in b.records]


def make_topic(bootstrap, n=0, configs=None):
    name = f"st-{uuid.uuid4().hex[:8]}"
    with connect_any(bootstrap) as conn:
        resp = admin.create_topics(conn, [admin.NewTopic(name, 1, 1, configs or {})], timeout_ms=10000)
        assert resp.topics[0].error_code == 0
        topic_id = resp.topics[0].topic_id
    if n:
        produce(bootstrap, name, [f"v{i}".encode() for i in range(n)])
    return name, topic_id


def produce(bootstrap, topic, vals):
    with connect_any(bootstrap) as conn:
        resp = produce_request(conn, {(topic, 0): records.build_batch([(None, v) for v in vals])},
                               acks=1, timeout_ms=10000)
        assert resp.responses[0].partition_responses[0].error_code == 0


def joined(bootstrap, group, topic, member=None):
    m = Raw(bootstrap, group, member)
    resp = m.heartbeat([topic])
    assert resp.error_code == 0, resp
    return m


# --- advertising ----------------------------------------------------------------------------------

def test_share_apis_are_advertised_with_their_versions(sbroker):
    with connect_any(sbroker.bootstrap) as conn:
        versions = conn.negotiate()
    assert versions[HB] == (1, 1) and versions[DESCRIBE] == (1, 1)
    assert versions[FETCH] == (1, 2) and versions[ACK] == (1, 2)


def test_disabled_share_groups_are_not_advertised():
    with BrokerProcess({"group.share.enable": "false"}) as proc, connect_any(proc.bootstrap) as conn:
        versions = conn.negotiate()
    assert not {HB, DESCRIBE, FETCH, ACK} & set(versions)


# --- share sessions --------------------------------------------------------------------------------

def test_share_session_errors(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 5)
    m = joined(sbroker.bootstrap, "early-1", topic)
    assert m.fetch(tid, epoch=3).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert m.fetch(tid, epoch=0, acks=[(0, 0, 1)]).error_code == ErrorCode.INVALID_REQUEST
    assert m.ack(tid, [(0, 0, 1)], epoch=0).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    first = m.fetch(tid)
    assert first.error_code == 0 and acquired(first) == [(0, 4, 1)]
    assert m.fetch(tid, epoch=7).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    stranger = Raw(sbroker.bootstrap, "early-1")
    assert stranger.fetch(tid, epoch=0).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    for c in (m, stranger):
        c.close()


def test_acknowledgements_in_fetch_and_on_their_own(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 10)
    m = joined(sbroker.bootstrap, "early-2", topic)
    assert acquired(m.fetch(tid, max_records=4, version=2, mode=RECORD_LIMIT)) == [(0, 3, 1)]
    resp = m.fetch(tid, acks=[(0, 1, 1), (2, 2, 2), (3, 3, 3)], max_records=2, version=2,
                   mode=RECORD_LIMIT)
    part = resp.responses[0].partitions[0]
    assert part.acknowledge_error_code == 0
    assert acquired(resp) == [(2, 2, 2), (4, 4, 1)]  # the released record comes back first
    # 0 is acknowledged already, below the share-partition start: ignored, as by Kafka
    again = m.ack(tid, [(2, 2, 1), (0, 0, 1)])
    assert again.error_code == 0
    assert again.responses[0].partitions[0].error_code == 0
    # v2: RENEW keeps the lock, the record stays with the member
    renewed = m.ack(tid, [(4, 4, 4)], version=2, renew=True)
    assert renewed.responses[0].partitions[0].error_code == 0
    assert m.ack(tid, [(4, 4, 1)], epoch=-1).error_code == 0  # final: closes the session
    assert m.fetch(tid, epoch=9).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    m.close()


def test_share_fetch_long_polls_until_records_arrive_or_max_wait(sbroker):
    topic, tid = make_topic(sbroker.bootstrap)
    m = joined(sbroker.bootstrap, f"lp-{uuid.uuid4().hex[:6]}", topic)
    start = time.monotonic()
    empty = m.fetch(tid, max_wait_ms=500)
    assert acquired(empty) == [] and time.monotonic() - start >= 0.45
    threading.Timer(0.3, produce, (sbroker.bootstrap, topic, [b"late"])).start()
    start = time.monotonic()
    resp = m.fetch(tid, max_wait_ms=10_000)
    assert values(resp) == [b"late"] and time.monotonic() - start < 9
    m.close()


def test_min_bytes_holds_the_answer_until_enough_is_ready(sbroker):
    topic, tid = make_topic(sbroker.bootstrap)
    m = joined(sbroker.bootstrap, f"mb-{uuid.uuid4().hex[:6]}", topic)
    m.fetch(tid, max_records=0)  # open the session
    produce(sbroker.bootstrap, topic, [b"x"])
    threading.Timer(0.3, produce, (sbroker.bootstrap, topic, [b"y" * 2000])).start()
    resp = m.fetch(tid, max_wait_ms=5000, min_bytes=1000)
    assert values(resp) == [b"x", b"y" * 2000]
    m.close()


# --- members -----------------------------------------------------------------------------------------

def test_records_of_a_leaving_member_go_when_its_share_session_ends(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 5)
    group = "early-3"
    a = joined(sbroker.bootstrap, group, topic)
    b = joined(sbroker.bootstrap, group, topic)
    assert acquired(a.fetch(tid)) == [(0, 4, 1)]
    assert acquired(b.fetch(tid)) == []
    assert a.heartbeat(epoch=-1).member_epoch == -1
    assert acquired(b.fetch(tid)) == []  # the final acknowledgement may still come
    final = a.ack(tid, [(0, 1, 1)], epoch=-1)  # after the leave: still counts
    assert final.responses[0].partitions[0].error_code == 0
    assert acquired(b.fetch(tid)) == [(2, 4, 2)]  # the rest went with the session
    for c in (a, b):
        c.close()


def test_a_closed_connection_ends_the_share_session_and_releases(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 5)
    group = f"cc-{uuid.uuid4().hex[:6]}"
    with connect_any(sbroker.bootstrap) as conn:
        set_group_configs(conn, group, {"share.auto.offset.reset": "earliest"})
    a = joined(sbroker.bootstrap, group, topic)
    b = joined(sbroker.bootstrap, group, topic)
    assert acquired(a.fetch(tid)) == [(0, 4, 1)]
    a.close()  # no leave, no final request: the connection is all that ends
    deadline = time.time() + 10
    got = []
    while not got and time.time() < deadline:
        got = acquired(b.fetch(tid, max_wait_ms=200))
    assert got == [(0, 4, 2)]
    b.close()


def test_session_timeout_evicts_a_member_and_releases_its_records(sbroker):
    topic, tid = make_topic(sbroker.bootstrap)
    group = f"to-{uuid.uuid4().hex[:6]}"
    silent = joined(sbroker.bootstrap, group, topic)
    produce(sbroker.bootstrap, topic, [b"a", b"b"])
    held = acquired(silent.fetch(tid))
    assert [n for _, _, n in held] == [1]
    other = joined(sbroker.bootstrap, group, topic)
    deadline = time.time() + 10
    got = []
    while not got and time.time() < deadline:
        other.heartbeat()
        got = acquired(other.fetch(tid, max_wait_ms=200))
    assert [n for _, _, n in got] == [2]  # lock is 30 s: only the eviction can explain it
    assert silent.heartbeat().error_code == ErrorCode.UNKNOWN_MEMBER_ID
    for c in (silent, other):
        c.close()


def test_group_size_limit_and_describe(sbroker):
    topic, _ = make_topic(sbroker.bootstrap)
    group = f"full-{uuid.uuid4().hex[:6]}"
    members = [joined(sbroker.bootstrap, group, topic) for _ in range(10)]
    extra = Raw(sbroker.bootstrap, group).heartbeat([topic])
    assert extra.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    with connect_any(sbroker.bootstrap) as conn:
        d = admin.share_group_describe(conn, [group, "no-such-group"])
    assert d.groups[0].group_state == "Stable" and len(d.groups[0].members) == 10
    assert d.groups[0].members[0].assignment.topic_partitions[0].topic_name == topic
    assert d.groups[1].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    for m in members:
        m.close()


# --- where a group starts, recovery, log cleaning --------------------------------------------------

def test_latest_by_default_and_earliest_from_the_topic_config(sbroker):
    before, _ = make_topic(sbroker.bootstrap, 3)
    early, _ = make_topic(sbroker.bootstrap, 3, configs={"share.auto.offset.reset": "earliest"})
    group = f"reset-{uuid.uuid4().hex[:6]}"
    with ShareConsumer({"bootstrap.servers": sbroker.bootstrap, "group.id": group}) as c:
        c.subscribe([before, early])
        deadline = time.time() + 10
        got = []
        while len(got) < 3 and time.time() < deadline:
            got += c.poll(0.3)
        produce(sbroker.bootstrap, before, [b"after-join"])
        while len(got) < 4 and time.time() < deadline:
            got += c.poll(0.3)
    assert sorted((r.topic, r.value) for r in got) == sorted(
        [(early, b"v0"), (early, b"v1"), (early, b"v2"), (before, b"after-join")])


def test_state_unloaded_for_inactivity_is_recovered_from_the_log(sbroker):
    topic, _ = make_topic(sbroker.bootstrap, 6, configs={"share.auto.offset.reset": "earliest"})
    group = f"rec-{uuid.uuid4().hex[:6]}"
    config = {"bootstrap.servers": sbroker.bootstrap, "group.id": group,
              "share.acknowledgement.mode": "explicit"}
    with ShareConsumer(config) as c:
        c.subscribe([topic])
        recs = []
        while len(recs) < 6:
            recs += c.poll(0.5)
        for r in recs:
            c.acknowledge(r, AcknowledgeType.RELEASE if r.offset in (2, 4) else AcknowledgeType.ACCEPT)
        assert all(e is None for e in c.commit_sync().values())
    time.sleep(1.5)  # group empty for longer than group.share.state.unload.ms
    with ShareConsumer({"bootstrap.servers": sbroker.bootstrap, "group.id": group}) as c:
        c.subscribe([topic])
        again = []
        deadline = time.time() + 10
        while len(again) < 2 and time.time() < deadline:
            again += c.poll(0.5)
    assert [(r.offset, r.delivery_count) for r in again] == [(2, 2), (4, 2)]
    assert "share_partition_recovered" in sbroker.log_text() and group in sbroker.log_text()


def test_delete_records_never_passes_the_latest_share_checkpoint(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 10)
    m = joined(sbroker.bootstrap, f"dr-{uuid.uuid4().hex[:6]}", topic)  # checkpoint lands at 10
    produce(sbroker.bootstrap, topic, [b"more"] * 5)
    with connect_any(sbroker.bootstrap) as conn:
        resp = admin.delete_records(conn, {(topic, 0): -1}, timeout_ms=5000)
    assert resp.topics[0].partitions[0].low_watermark == 10
    m.close()


# --- tools and configuration ----------------------------------------------------------------------

def kipper(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "kipper", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_share_consume_tool_prints_records_with_their_delivery_count(sbroker):
    topic, _ = make_topic(sbroker.bootstrap, 3, configs={"share.auto.offset.reset": "earliest"})
    group = f"tool-{uuid.uuid4().hex[:6]}"
    released = kipper("share-consume", "--bootstrap-server", sbroker.bootstrap, "--group", group,
                      "--topic", topic, "--ack", "release", "--max-messages", "3",
                      "--timeout-ms", "5000")
    assert released.returncode == 0, released.stderr
    done = kipper("share-consume", "--bootstrap-server", sbroker.bootstrap, "--group", group,
                  "--topic", topic, "--print-delivery-count", "--max-messages", "3",
                  "--timeout-ms", "5000")
    assert done.stdout.splitlines() == ["2\tv0", "2\tv1", "2\tv2"], done
    assert "Processed a total of 3 messages" in done.stderr


def test_groups_tool_describes_share_and_classic_groups(sbroker):
    topic, _ = make_topic(sbroker.bootstrap)
    group = f"desc-{uuid.uuid4().hex[:6]}"
    m = joined(sbroker.bootstrap, group, topic, member="member-one")
    with connect_any(sbroker.bootstrap) as conn:  # a classic group, through JoinGroup
        conn.request(11, {"group_id": "classic-one", "session_timeout_ms": 10000,
                          "rebalance_timeout_ms": 10000, "member_id": "", "group_instance_id": None,
                          "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}],
                          "reason": None}, max_version=5)
    done = threading.Event()

    def keep_alive():  # the session is 1.5 s; a tool's start can take longer on a busy machine
        while not done.wait(0.3):
            m.heartbeat()
    beat = threading.Thread(target=keep_alive, daemon=True)
    beat.start()
    try:
        out = kipper("groups", "describe", "--bootstrap-server", sbroker.bootstrap,
                     "--group", group, "--group", "classic-one", "--members")
    finally:
        done.set()
        beat.join()
    assert out.returncode == 0, out.stderr
    assert f"GROUP {group}  TYPE share  STATE Stable" in out.stdout
    assert "member-one" in out.stdout and f"{topic}:0" in out.stdout
    assert "GROUP classic-one  TYPE classic" in out.stdout
    listed = kipper("groups", "list", "--bootstrap-server", sbroker.bootstrap)
    assert any(line.split()[:2] == [group, "share"] for line in listed.stdout.splitlines())
    missing = kipper("groups", "describe", "--bootstrap-server", sbroker.bootstrap, "--group", "nope")
    assert missing.returncode == 1 and "GROUP_ID_NOT_FOUND" in missing.stdout
    m.close()


@pytest.mark.parametrize("override,mentions", [
    ("group.share.delivery.count.limit=11", "group.share.delivery.count.limit: 11 is above the maximum 10"),
    ("group.share.record.lock.partition.limit=99", "is below the minimum 100"),
    ("group.share.max.size=5", "group.share.max.size: 5 is below the minimum 10"),
])
def test_out_of_range_share_config_is_a_clear_startup_error(override, mentions):
    result = kipper("broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
                    "--override", override, timeout=20)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and mentions in result.stderr


def test_default_acquire_mode_takes_whole_batches_and_record_limit_cuts_them(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 10, configs={"share.auto.offset.reset": "earliest"})
    whole = joined(sbroker.bootstrap, f"bo-{uuid.uuid4().hex[:6]}", topic)
    assert acquired(whole.fetch(tid, max_records=4)) == [(0, 9, 1)]  # v1: batch-optimized
    cut = joined(sbroker.bootstrap, f"rl-{uuid.uuid4().hex[:6]}", topic)
    assert acquired(cut.fetch(tid, max_records=4, version=2, mode=RECORD_LIMIT)) == [(0, 3, 1)]
    again = joined(sbroker.bootstrap, f"bo2-{uuid.uuid4().hex[:6]}", topic)
    assert acquired(again.fetch(tid, max_records=4, version=2)) == [(0, 9, 1)]
    for m in (whole, cut, again):
        m.close()


def test_share_fetch_v2_renews_locks_and_fetches(sbroker):
    topic, tid = make_topic(sbroker.bootstrap, 3, configs={"share.auto.offset.reset": "earliest"})
    m = joined(sbroker.bootstrap, f"v2-{uuid.uuid4().hex[:6]}", topic)
    assert acquired(m.fetch(tid, version=2, max_records=2, mode=RECORD_LIMIT)) == [(0, 1, 1)]
    renew = m.fetch(tid, version=2, acks=[(0, 1, 4)], renew=True)
    assert renew.responses[0].partitions[0].acknowledge_error_code == 0 and acquired(renew) == []
    rest = m.fetch(tid, version=2, acks=[(0, 1, 1)])
    assert rest.responses[0].partitions[0].acknowledge_error_code == 0
    assert acquired(rest) == [(2, 2, 1)]
    assert m.fetch(tid, version=1, acks=[(2, 2, 4)]).responses[0].partitions[0] \
        .acknowledge_error_code == ErrorCode.INVALID_REQUEST  # RENEW needs v2
    m.close()
