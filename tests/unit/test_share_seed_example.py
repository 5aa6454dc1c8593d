"""Seed 004's worked example, operation by operation, against the engine and the store.

The control records written must carry the seed's contents (only the offsets
at which they land differ), and recovering from the log after every step must
give back the live state with acquisitions dropped. One deliberate difference:
the seed's first checkpoint says StartOffset/EndOffset 110 while its own table
starts at SPSO=SPEO=100 and then acknowledges 100-109; we write 100, the value
the table implies.
"""

from __future__ import annotations

import pytest

from kipper.broker.log.topics import TopicManager
from kipper.broker.share.log_view import PartitionLogView
from kipper.broker.share.recovery import read_share_record
from kipper.broker.share.settings import ShareSettings
from kipper.broker.share.states import ACCEPT, RELEASE
from kipper.broker.share.store import ShareStore
from kipper.protocol import records
from kipper.protocol import share_records as sr

LOCK = 30_000


def _seed_log():
    topics = TopicManager(num_partitions=1, auto_create=False)
    _, _, topic = topics.create("seed", 1)
    plog = topic.partitions[0]
    # offsets 0-99 in one batch, 100-121 one record per batch
    plog.append_batch(records.build_batch([(None, b"x")] * 100), 0)
    for i in range(100, 122):
        plog.append_batch(records.build_batch([(None, f"r{i}".encode())]), 0)
    plog.delete_records_before(100)  # the share group starts at the earliest offset, 100
    return topics, topic, plog


class Harness:
    def __init__(self):
        self.topics, self.topic, self.plog = _seed_log()
        self.store = ShareStore(ShareSettings(record_lock_duration_ms=LOCK,
                                              checkpoint_max_deltas=1000,
                                              auto_offset_reset="earliest"), self.topics)
        self.now = 1_000
        self.sp = self.store.get("G1", self.topic, 0, self.now)
        self.view = PartitionLogView(self.plog)
        self.written = []  # (offset, seed json) of every share record so far
        self._collect()

    def _collect(self):
        for base, data in self.plog.batches():
            if base < 122 or base in {o for o, _ in self.written}:
                continue
            found = sr.decode_batch(data)
            assert found is not None
            self.written.append((base, sr.to_seed_json(*found)))

    def fetch(self, member, n):
        got = self.sp.acquire(member, self.now, self.view, max_records=n)
        self._collect()
        return got

    def ack(self, member, first, last, ack_type):
        errors, changes = self.sp.acknowledge(member, [(first, last, [ack_type])], self.now)
        assert errors == [0]
        self.store.persist(self.sp, changes, self.now)
        self._collect()

    def expire(self, now):
        self.now = now
        self.store.persist(self.sp, self.sp.expire(now), now)
        self._collect()

    def new_records(self):
        """Share records written since the last call, with offsets."""
        out, self._seen = self.written[len(getattr(self, "_seen", [])):], list(self.written)
        return out

    def recovered_view(self):
        durable = self.store.index[("seed", 0)]["G1"]
        sp = self.store.recover("G1", "seed", self.plog, durable)
        return sp.durable_view(self.view)

    def check_recovery(self):
        assert self.recovered_view() == self.sp.durable_view(self.view)


def _delta(back, *states):
    return {"GroupId": "G1", "CheckpointEpoch": 1, "BackOffset": back,
            "States": [{"BaseOffset": b, "LastOffset": last, "State": s, "DeliveryCount": n}
                       for b, last, s, n in states]}


@pytest.fixture
def h():
    return Harness()


def test_seed_worked_example_writes_the_seed_records_and_recovers_after_every_step(h):
    (cp_offset, cp), = h.new_records()
    assert cp == {"GroupId": "G1", "CheckpointEpoch": 1, "StartOffset": 100, "EndOffset": 100,
                  "States": []}
    assert (h.sp.spso, h.sp.speo) == (100, 100)
    h.check_recovery()

    # Fetch records 100-109: acquired, delivery count 1; nothing written
    assert h.fetch("A", 10) == [(100, 109, 1)]
    assert (h.sp.spso, h.sp.speo) == (100, 110)
    assert h.new_records() == []
    h.check_recovery()

    # Acknowledge 100-109
    h.ack("A", 100, 109, ACCEPT)
    (o131, d), = h.new_records()
    assert d == _delta(cp_offset, (100, 109, 2, 1))
    assert (h.sp.spso, h.sp.speo) == (110, 110)
    h.check_recovery()

    # Fetch records 110-119 (in two fetches, 110-112 first, so that later only
    # the locks of 111-112 run out, as in the seed)
    assert h.fetch("A", 3) == [(110, 112, 1)]
    h.now += 1_000
    assert h.fetch("A", 7) == [(113, 119, 1)]
    assert h.new_records() == []
    h.check_recovery()

    # Release 110
    h.ack("A", 110, 110, RELEASE)
    (o132, d), = h.new_records()
    assert d == _delta(o131, (110, 110, 0, 1))
    h.check_recovery()

    # Acknowledge 119
    h.ack("A", 119, 119, ACCEPT)
    (o133, d), = h.new_records()
    assert d == _delta(o132, (111, 118, 0, 0), (119, 119, 2, 1))
    h.check_recovery()

    # Fetch records 110, 120
    assert h.fetch("A", 2) == [(110, 110, 2), (120, 120, 1)]
    assert (h.sp.spso, h.sp.speo) == (110, 121)
    assert h.new_records() == []
    h.check_recovery()

    # Lock timeout elapsed 111, 112
    h.expire(1_000 + LOCK)
    (o134, d), = h.new_records()
    assert d == _delta(o133, (111, 112, 0, 1))
    h.check_recovery()

    # Acknowledge 113-118
    h.ack("A", 113, 118, ACCEPT)
    (o135, d), = h.new_records()
    assert d == _delta(o134, (113, 118, 2, 1))
    h.check_recovery()

    # Fetch records 111, 112
    assert h.fetch("A", 2) == [(111, 112, 2)]
    h.check_recovery()

    # Acknowledge 110
    h.ack("A", 110, 110, ACCEPT)
    (o136, d), = h.new_records()
    assert d == _delta(o135, (110, 110, 2, 2))
    assert h.sp.spso == 111
    h.check_recovery()

    # Acknowledge 111, 112
    h.ack("A", 111, 112, ACCEPT)
    (o137, d), = h.new_records()
    assert d == _delta(o136, (111, 112, 2, 2))
    assert (h.sp.spso, h.sp.speo) == (120, 121)
    h.check_recovery()

    # ... or alternatively, a new checkpoint
    h.store.checkpoint(h.sp, h.now)
    h._collect()
    (_, cp2), = h.new_records()
    assert cp2 == {"GroupId": "G1", "CheckpointEpoch": 2, "StartOffset": 120, "EndOffset": 120,
                   "States": []}
    h.check_recovery()
    # record 120 was in its first delivery: recovery puts the SPEO back to 120
    assert h.recovered_view() == (120, 120, [])


def test_recovery_walks_the_back_offsets_of_the_chain(h):
    h.fetch("A", 10)
    h.ack("A", 100, 104, ACCEPT)
    h.ack("A", 105, 105, RELEASE)
    durable = h.store.index[("seed", 0)]["G1"]
    kind, value = read_share_record(h.plog, durable.head_offset)
    assert kind == records.SHARE_DELTA
    kind, prev = read_share_record(h.plog, value.back_offset)
    assert kind == records.SHARE_DELTA
    kind, first = read_share_record(h.plog, prev.back_offset)
    assert kind == records.SHARE_CHECKPOINT
    assert durable.checkpoint_offset == prev.back_offset
