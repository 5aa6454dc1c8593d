"""The share-group offset APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets) from a raw client and from ``kipper groups``, against a broker process
with log.dirs: describe shows the SPSO and the lag, a reset with a member present is refused,
a reset to earliest redelivers, delete removes; and all of it survives a SIGKILL taken while a
producer is writing, counting every record."""

from __future__ import annotations

import threading
import time

import pytest

from kipper.client import admin
from kipper.client.blocking import connect_any
from kipper.client.share_acks import AcknowledgeType
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol.errors import ErrorCode
from tests.integration.test_admin_tools import err, kipper, out
from tests.support.broker import SHARE_QUICK, BrokerProcess, free_port
from tests.support.readback import read_topic
from tests.support.topics import create_topics


@pytest.fixture
def durable(tmp_path):
    broker = BrokerProcess({**SHARE_QUICK, "log.dirs": str(tmp_path / "data")},
                           port=free_port()).start()
    yield broker
    broker.stop()


def _produce(bootstrap: str, topic: str, n: int, partitions: int = 1) -> None:
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(n):
        p.produce(topic, value=b"%d" % i, partition=i % partitions)
    assert p.flush(30) == 0


def _consume(bootstrap, group, topic, want, *, accept=lambda r: True, timeout=25.0):
    """Poll (explicit acknowledgement) until ``want`` records came; [(partition, offset,
    delivery count)] of every record delivered, and the consumer, still a member."""
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "share.acknowledgement.mode": "explicit"})
    c.subscribe([topic])
    seen = []
    deadline = time.time() + timeout
    while len(seen) < want and time.time() < deadline:
        for r in c.poll(0.3):
            c.acknowledge(r, AcknowledgeType.ACCEPT if accept(r) else AcknowledgeType.RELEASE)
            seen.append((r.partition, r.offset, r.delivery_count))
        c.commit_sync()
    return seen, c


def _described(conn, group, topics=None) -> dict[tuple[str, int], tuple[int, int, int]]:
    body = admin.describe_share_group_offsets(conn, {group: topics})
    g = body.groups[0]
    assert g.error_code == 0
    return {(t.topic_name, p.partition_index): (p.start_offset, p.lag, p.error_code)
            for t in g.topics for p in t.partitions}


def _share_rows(text: str, topic: str) -> dict[int, tuple[str, str]]:
    """partition -> (START-OFFSET, LAG) from ``kipper groups describe`` of a share group."""
    rows = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) == 5 and cols[1] == topic and cols[2].isdigit():
            rows[int(cols[2])] = (cols[3], cols[4])
    return rows


def test_describe_reset_and_delete_from_a_raw_client_and_the_cli(durable, unique):
    topic, group = f"so-{unique}", f"sg-{unique}"
    b = durable.bootstrap
    create_topics(b, topic, partitions=1)
    _produce(b, topic, 50)
    seen, member = _consume(b, group, topic, 50, accept=lambda r: r.offset < 30)
    assert sorted(o for _, o, _ in seen) == list(range(50))
    try:
        # a member is present: the reset is refused, by the broker and by the tool
        with connect_any(b) as conn:
            body = admin.alter_share_group_offsets(conn, group, {(topic, 0): 0})
            assert body.error_code == ErrorCode.NON_EMPTY_GROUP
            body = admin.delete_share_group_offsets(conn, group, [topic])
            assert body.error_code == ErrorCode.NON_EMPTY_GROUP
        r = kipper("groups", "reset-offsets", "--bootstrap-server", b, "--group", group,
                   "--topic", topic, "--to-earliest", "--execute")
        assert r.returncode == 1 and "not empty" in err(r)
    finally:
        member.close()  # releases 30-49
    # 30-49 are left for redelivery. The start offset is the SPSO as the last state write
    # carried it (Kafka's): 0 when that write was the one accepting 0-29 (it moves the SPSO
    # only after writing), 30 when a later release (the member's close) wrote again
    with connect_any(b) as conn:
        described = _described(conn, group)
        start = described[(topic, 0)][0]
        assert start in (0, 30) and described == {(topic, 0): (start, 20, 0)}
        assert _described(conn, group, {topic: [0], "nosuch": [0]}) == {
            (topic, 0): (start, 20, 0), ("nosuch", 0): (-1, -1, 0)}
    r = kipper("groups", "describe", "--bootstrap-server", b, "--group", group)
    assert r.returncode == 0 and _share_rows(out(r), topic) == {0: (str(start), "20")}, out(r)

    # --shift-by moves the start offset it describes (a dry run: nothing changes)
    r = kipper("groups", "reset-offsets", "--bootstrap-server", b, "--group", group,
               "--topic", topic, "--shift-by", "5", "--dry-run")
    assert r.returncode == 0 and out(r).split()[-4:] == [group, topic, "0", str(start + 5)], out(r) + err(r)
    r = kipper("groups", "reset-offsets", "--bootstrap-server", b, "--group", group,
               "--topic", topic, "--to-earliest", "--execute")
    assert r.returncode == 0, err(r)
    with connect_any(b) as conn:
        assert _described(conn, group) == {(topic, 0): (0, 50, 0)}
    again, member = _consume(b, group, topic, 50)
    member.close()
    # redelivered from the start, each record once, as a first delivery (the state was reset)
    assert sorted(again) == [(0, o, 1) for o in range(50)]

    r = kipper("groups", "delete-offsets", "--bootstrap-server", b, "--group", group, "--topic", topic)
    assert r.returncode == 0 and "Successful" in out(r), out(r) + err(r)
    with connect_any(b) as conn:
        assert _described(conn, group) == {}
        assert _described(conn, group, {topic: [0]}) == {(topic, 0): (-1, -1, 0)}
        body = admin.delete_share_group_offsets(conn, group, [topic])
        assert [(t.topic_name, t.error_code) for t in body.responses] == [
            (topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]


class Writer(threading.Thread):
    """An idempotent confluent producer writing until stopped; the values it got acknowledged."""

    def __init__(self, bootstrap: str, topic: str, partitions: int):
        super().__init__(daemon=True)
        from confluent_kafka import Producer
        self.p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                           "linger.ms": 5, "message.timeout.ms": 60000})
        self.topic, self.partitions = topic, partitions
        self.acked: set[bytes] = set()
        self.failed = 0
        self.stopping = threading.Event()

    def _report(self, error, msg) -> None:
        if error is None:
            self.acked.add(msg.value())
        else:
            self.failed += 1

    def run(self) -> None:
        i = 0
        while not self.stopping.is_set():
            for _ in range(20):
                self.p.produce(self.topic, value=b"w%d" % i, partition=i % self.partitions,
                               on_delivery=self._report)
                i += 1
            self.p.poll(0.01)
        self.p.flush(60)


def test_a_reset_and_a_delete_survive_a_sigkill_under_load(durable, unique):
    topic, reset_group, deleted_group = f"sk-{unique}", f"reset-{unique}", f"gone-{unique}"
    b = durable.bootstrap
    create_topics(b, topic, partitions=2)
    writer = Writer(b, topic, 2)
    writer.start()
    try:
        for group in (reset_group, deleted_group):  # both consume a while, accepting all
            seen, member = _consume(b, group, topic, 300)
            member.close()
            assert len(seen) >= 300
        r = kipper("groups", "reset-offsets", "--bootstrap-server", b, "--group", reset_group,
                   "--all-topics", "--to-earliest", "--execute")
        assert r.returncode == 0, err(r)
        r = kipper("groups", "delete-offsets", "--bootstrap-server", b, "--group", deleted_group,
                   "--topic", topic)
        assert r.returncode == 0, err(r)
        time.sleep(0.5)  # the writer goes on
        durable.kill()
        time.sleep(0.5)
        durable.start()
        time.sleep(1.0)
    finally:
        writer.stopping.set()
        writer.join(90)
    assert writer.failed == 0 and len(writer.acked) > 600
    with connect_any(b) as conn:
        after = _described(conn, reset_group)
        assert sorted(after) == [(topic, 0), (topic, 1)]
        assert all(start == 0 and lag > 0 and code == 0 for start, lag, code in after.values()), after
        assert _described(conn, deleted_group) == {}
        listed = {g.group_id: g.group_type for g in admin.list_groups(conn).groups}
        assert listed.get(reset_group) == "share"  # the group comes back with its state
    seen, member = _consume(b, reset_group, topic, len(writer.acked), timeout=60)
    member.close()
    offsets = [(p, o) for p, o, _ in seen]
    assert len(offsets) == len(set(offsets)), "no record delivered twice after the reset"
    assert {n for _, _, n in seen} == {1}, "the reset started every record afresh"
    stored = {(p, r.offset): r.value for p, recs in read_topic(b, topic).items() for r in recs}
    delivered = {stored[po] for po in offsets}
    assert writer.acked <= delivered, f"{len(writer.acked - delivered)} acknowledged records not delivered"
