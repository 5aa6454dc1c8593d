"""Log compaction on the in-memory log and the on-disk log alike, with a manual clock:
the latest record per key stays, offsets never change, tombstones live until their
delete horizon, the lags and the dirty ratio decide when, transactions by Kafka's rules."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kipper.broker.cleaner.compaction import CleaningPass, cleanable
from kipper.broker.cleaner.service import LogCleaner
from kipper.broker.storage.log_config import LogConfig
from kipper.broker.storage.memory_log import MemoryLog
from kipper.broker.log.partition import Partition
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.log.topics import TopicManager
from kipper.broker.storage.file_log import FileLog
from kipper.protocol import batch as b
from kipper.protocol import records

DAY = 86_400_000


def compact_config(**kw) -> LogConfig:
    return LogConfig(**{"compact": True, "delete": False, "segment_bytes": 1 << 30,
                        "delete_retention_ms": DAY, "min_cleanable_dirty_ratio": 0.0, **kw})


def make_partition(kind: str, tmp_path, config: LogConfig) -> Partition:
    log = MemoryLog(config) if kind == "memory" else FileLog.create(tmp_path / "t-0", config, 0)
    return Partition("t", 0, log, ProducerStateSettings())


@pytest.fixture(params=["memory", "disk"])
def kind(request):
    return request.param


def put(p: Partition, key, value, now: int = 0, *, roll: bool = False) -> int:
    if roll:
        roll_segment(p, now)
    data = records.build_batch([(key, value, now)])
    return p.append(data, b.split_batches(data), now).base_offset


def roll_segment(p: Partition, now: int = 0) -> None:
    if isinstance(p.log, MemoryLog):
        p.log.maybe_roll(0, 1 << 62, 1 << 62)  # a batch time past segment.ms
    else:
        p.log.roll(now)


def clean(p: Partition, now: int) -> bool:
    plan = cleanable(p, p.log.config, now)
    if plan is None:
        return False
    cleaning = CleaningPass(p, p.log.config, plan, now)
    while cleaning.step(1.0):
        pass
    return True


def stored(p: Partition) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    for chunk in p.read(0, 1 << 30).chunks:
        for batch in records.decode_all(chunk, verify_crc=False):
            if not batch.header.is_control:
                out += [(r.offset, r.key, r.value) for r in batch.records]
    return out


def latest(p: Partition) -> dict:
    view = {}
    for _, key, value in stored(p):
        if value is None:
            view.pop(key, None)
        else:
            view[key] = value
    return view


# --- what the cleaner keeps -------------------------------------------------------------------

def test_the_latest_record_per_key_stays_at_its_offset(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config())
    for i in range(10):
        put(p, b"k%d" % (i % 3), b"v%d" % i)
    roll_segment(p)
    put(p, b"k0", b"active")  # the active segment is never cleaned
    assert clean(p, 1000)
    assert stored(p) == [(7, b"k1", b"v7"), (8, b"k2", b"v8"), (9, b"k0", b"v9"), (10, b"k0", b"active")]
    assert p.log_end_offset == 11


def test_a_fetch_from_a_removed_offset_gets_the_next_record_still_there(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config())
    for i in range(6):
        put(p, b"same" if i < 5 else b"other", b"v%d" % i)
    roll_segment(p)
    put(p, b"x", b"y")
    clean(p, 1000)
    got = p.read(2, 1 << 20)
    first = [r.offset for c in got.chunks for bt in records.decode_all(c) for r in bt.records]
    assert first[0] == 4 and 2 not in first


def test_tombstones_stay_until_delete_retention_passed_since_their_first_cleaning(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config(delete_retention_ms=1000))
    put(p, b"k", b"v")
    put(p, b"k", None)
    roll_segment(p)
    put(p, b"z", b"z")
    clean(p, 10_000)  # first cleaning: the horizon becomes 11,000
    assert stored(p)[0] == (1, b"k", None)
    p.log.cleaner_checkpoint = 0  # clean the same data again
    clean(p, 10_900)
    assert stored(p)[0] == (1, b"k", None), "before the horizon the tombstone stays"
    p.log.cleaner_checkpoint = 0
    clean(p, 11_001)
    assert stored(p) == [(2, b"z", b"z")]


def test_keyless_records_are_dropped_by_the_cleaner(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config())
    put(p, None, b"no key")
    put(p, b"k", b"v")
    roll_segment(p)
    put(p, b"a", b"a")
    clean(p, 1)
    assert [k for _, k, _ in stored(p)] == [b"k", b"a"]


# --- when it cleans -----------------------------------------------------------------------------

def test_nothing_is_cleaned_below_the_dirty_ratio_unless_max_lag_forces_it(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config(min_cleanable_dirty_ratio=0.5,
                                                      max_compaction_lag_ms=5000))
    for i in range(4):
        put(p, b"k", b"v%d" % i, now=1000)
    roll_segment(p)
    put(p, b"x", b"y", now=1000)
    assert clean(p, 1000)  # all dirty: ratio 1
    for i in range(2):
        put(p, b"k", b"w%d" % i, now=2000, roll=i == 0)
    roll_segment(p)
    put(p, b"x", b"y", now=2000)
    plan = cleanable(p, p.log.config, 2000)
    assert plan is not None  # dirty 2 of 3 batches: above 0.5
    p.log.config.min_cleanable_dirty_ratio = 0.9
    assert cleanable(p, p.log.config, 2000) is None
    assert cleanable(p, p.log.config, 7001).forced  # dirty data older than max.compaction.lag.ms


def test_min_compaction_lag_keeps_young_segments_dirty(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config(min_compaction_lag_ms=1000))
    put(p, b"k", b"old", now=0)
    roll_segment(p)
    put(p, b"k", b"young", now=5000)
    roll_segment(p)
    put(p, b"z", b"z", now=5000)
    assert clean(p, 5500)  # only the first segment is old enough: nothing in it is superseded yet
    assert latest(p)[b"k"] == b"young" and len(stored(p)) == 3
    assert clean(p, 6500)
    assert [v for _, k, v in stored(p) if k == b"k"] == [b"young"]


def test_the_active_segment_is_never_cleaned(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config())
    for i in range(5):
        put(p, b"k", b"v%d" % i)
    assert not clean(p, 1)
    assert len(stored(p)) == 5


# --- transactions -------------------------------------------------------------------------------

def _txn(p: Partition, pid: int, seq: int, key: bytes, value: bytes) -> None:
    data = records.build_batch([(key, value, 0)], producer_id=pid, producer_epoch=0, base_sequence=seq,
                               transactional=True)
    p.append(data, b.split_batches(data), 0)


def _marker(p: Partition, pid: int, commit: bool) -> None:
    p.append_batch(records.build_control_batch(records.COMMIT if commit else records.ABORT,
                                               records.end_txn_marker(0), producer_id=pid,
                                               producer_epoch=0, transactional=True, timestamp=0), 0)


def markers(p: Partition) -> list[int]:
    return [bt.header.base_offset for c in p.read(0, 1 << 30).chunks
            for bt in records.decode_all(c, verify_crc=False) if bt.header.is_control]


def test_aborted_data_goes_and_its_marker_stays_until_nothing_of_it_is_left(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config(delete_retention_ms=100))
    _txn(p, 7, 0, b"k", b"aborted")  # 0
    _marker(p, 7, commit=False)  # 1
    _txn(p, 8, 0, b"k", b"committed")  # 2
    _marker(p, 8, commit=True)  # 3
    roll_segment(p)
    put(p, b"z", b"z")
    clean(p, 1000)
    assert stored(p)[0] == (2, b"k", b"committed")
    assert markers(p) == [1, 3], "markers stay while their transactions' batches were just seen"
    p.log.cleaner_checkpoint = 0
    clean(p, 2000)
    assert markers(p) == [3], "the abort's data is gone, so its marker goes; the commit's is still there"
    put(p, b"k", b"later", roll=True)
    roll_segment(p)
    put(p, b"z2", b"z2")
    clean(p, 3000)
    p.log.cleaner_checkpoint = 0
    clean(p, 4000)
    assert markers(p) == [], "past their horizon with no data left, both markers go"
    assert latest(p)[b"k"] == b"later"


def test_open_transactions_are_never_cleaned(kind, tmp_path):
    p = make_partition(kind, tmp_path, compact_config())
    _txn(p, 9, 0, b"k", b"open")
    roll_segment(p)
    put(p, b"k", b"plain")
    roll_segment(p)
    put(p, b"z", b"z")
    assert cleanable(p, p.log.config, 1) is None  # the LSO is 0: nothing below it to clean


# --- the model -----------------------------------------------------------------------------------

OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("roll"), st.just(0), st.just(False)),
    st.tuples(st.just("clean"), st.just(0), st.just(False))), max_size=60)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, kind=st.sampled_from(["memory", "disk"]))
# a roll of an empty active segment made a second segment of the same base offset on disk,
# sharing its file, and the cleaner's rewrite missed the record it held (hypothesis, 2026-12-06)
@example(ops=[("roll", 0, False), ("put", 0, False), ("roll", 0, False), ("put", 0, True), ("roll", 0, False),
              ("put", 1, False), ("clean", 0, False), ("roll", 0, False), ("clean", 0, False)], kind="disk")
# an empty active segment made the cleaner take the last segment for the active one: its
# rewrite was refused, the checkpoint moved past it anyway, and a key deleted by a tombstone
# came back when the tombstone's horizon passed (hypothesis, 2026-12-07)
@example(ops=[("put", 1, False), ("put", 1, True), ("roll", 0, False), ("clean", 0, False), ("put", 0, False),
              ("roll", 0, False), ("put", 0, False), ("clean", 0, False), ("roll", 0, False), ("clean", 0, False)],
         kind="memory")
def test_reading_a_compacted_log_gives_the_same_map_as_a_dict(tmp_path_factory, ops, kind):
    directory = tmp_path_factory.mktemp("model")
    p = make_partition(kind, directory, compact_config(delete_retention_ms=0))
    model: dict[bytes, bytes] = {}
    now = 0
    for op, key, tombstone in ops:
        now += 1
        if op == "put":
            k = b"k%d" % key
            value = None if tombstone else b"v%d" % now
            put(p, k, value, now)
            if value is None:
                model.pop(k, None)
            else:
                model[k] = value
        elif op == "roll":
            roll_segment(p, now)
        else:
            clean(p, now)
        offsets = [o for o, _, _ in stored(p)]
        assert offsets == sorted(set(offsets)), "offsets strictly increase"
        assert latest(p) == model


def test_the_cleaner_service_picks_compacted_partitions_and_counts(tmp_path):
    topics = TopicManager(num_partitions=1, auto_create=False)
    _, _, topic = topics.create("c", 1, configs={"cleanup.policy": "compact"})
    p = topic.partitions[0]
    p.log.config = compact_config()
    for i in range(5):
        put(p, b"k", b"v%d" % i)
    roll_segment(p)
    put(p, b"z", b"z")
    cleaner = LogCleaner(topics)
    assert cleaner.clean_now(1000) == 1
    snap = cleaner.snapshot()
    assert snap["runs"] == 1 and snap["records_removed"] == 4 and snap["bytes_read"] > snap["bytes_written"]
    assert snap["partitions"] == [{"topic": "c", "partition": 0, "dirty_ratio": 0.0}]


def test_a_batch_that_does_not_parse_makes_the_partition_uncleanable(kind, tmp_path):
    """Kafka marks such a partition uncleanable: nothing is rewritten, nothing dropped."""
    from tests.support import malformed

    topics = TopicManager(num_partitions=1, auto_create=False)
    _, _, topic = topics.create("c", 1, configs={"cleanup.policy": "compact"})
    p = make_partition(kind, tmp_path, compact_config())
    topic.partitions[0] = p
    for i in range(3):
        put(p, b"k", b"v%d" % i)
    case = malformed.MALFORMED["negative header count"]
    bad = malformed.batch(case.payload, case.count, base_offset=p.log.log_end_offset)
    p.log.append(bad, b.split_batches(bad), 0)  # stored as an older broker might have: not by Produce
    roll_segment(p)
    put(p, b"z", b"z")
    before = [(o, k, v) for o, k, v in stored(p)]
    cleaner = LogCleaner(topics)
    cleaner.clean_now(1000)
    assert stored(p) == before  # three records of one key: the pass would have removed two
    snap = cleaner.snapshot()
    assert snap["runs"] == 0
    assert snap["uncleanable"] == [{"topic": "c", "partition": 0, "reason": (
        "the batch at offset 3 does not parse: record 0: header count -1 is negative")}]
    assert not cleaner.tick(2000)  # left alone from then on


def test_a_rebuilt_batch_that_does_not_parse_replaces_nothing(kind, tmp_path, monkeypatch):
    """The cleaner's own copies go through the parser before they are written."""
    real = records.rebuild_steps

    def broken(h, kept, **kw):
        data = bytearray((yield from real(h, kept, **kw)))
        data += b"\x00"  # a byte after the last record
        return malformed_recrc(data)

    from tests.support.malformed import recrc as malformed_recrc

    monkeypatch.setattr(records, "rebuild_steps", broken)
    p = make_partition(kind, tmp_path, compact_config())
    data = records.build_batch([(b"k", b"a", 0), (b"j", b"b", 0)])
    p.append(data, b.split_batches(data), 0)
    put(p, b"k", b"new")  # the batch above keeps only j: the cleaner rebuilds it
    roll_segment(p)
    put(p, b"z", b"z")
    before = stored(p)
    plan = cleanable(p, p.log.config, 1000)
    cleaning = CleaningPass(p, p.log.config, plan, 1000)
    while cleaning.step(1.0):
        pass
    assert "as the cleaner rebuilt it does not parse: 1 bytes follow the last of the 1 records" in str(cleaning.failed)
    assert stored(p) == before


def test_a_segment_is_read_in_chunks_that_survive_retention_in_front(kind, tmp_path, monkeypatch):
    import kipper.broker.storage.memory_log as memory

    monkeypatch.setattr(memory, "SEGMENT_CHUNK", 4)  # many chunk boundaries in a small segment
    p = make_partition(kind, tmp_path, compact_config())
    offsets = [put(p, b"k%d" % i, b"v") for i in range(11)]
    roll_segment(p)
    put(p, b"k", b"active")
    reader = p.log.segment_batches(offsets[0])
    seen = [next(reader)[0] for _ in range(5)]
    p.log.delete_records_before(offsets[3])  # DeleteRecords in front of where the reader is
    seen += [base for base, _ in reader]
    assert seen == offsets, "every batch of the segment once, in order, and none of the next one"


def test_a_pass_on_disk_swaps_in_its_copy_after_the_background_fsync(tmp_path):
    p = make_partition("disk", tmp_path, compact_config())
    for i in range(50):
        put(p, b"k%d" % (i % 5), b"v%d" % i)
    roll_segment(p)
    put(p, b"k0", b"active")
    assert clean(p, 0)
    assert latest(p) == {b"k%d" % k: b"v%d" % (45 + k) for k in range(5)} | {b"k0": b"active"}
    assert len(stored(p)) == 6 and not list(tmp_path.glob("t-0/*.cleaned"))


def test_the_cleaner_paces_itself_idle_at_full_speed_busy_with_pauses_and_waits_for_the_disk(tmp_path):
    from kipper.broker.cleaner.service import CLEANER_PAUSE_S, CLEANER_WAIT_S

    cleaner = LogCleaner(TopicManager(num_partitions=1, auto_create=False))
    assert cleaner.next_step_in(clients_active=True) is None  # nothing runs
    p = make_partition("disk", tmp_path, compact_config())
    for i in range(50):
        put(p, b"k%d" % (i % 5), b"v%d" % i)
    roll_segment(p)
    put(p, b"k0", b"active")
    cleaning = CleaningPass(p, p.log.config, cleanable(p, p.log.config, 0), 0)
    cleaner.running.append(("t", 0, cleaning))
    assert cleaner.next_step_in(clients_active=False) == 0.0  # the next loop turn
    assert cleaner.next_step_in(clients_active=True) == CLEANER_PAUSE_S
    delays = set()
    while cleaning.step(1.0):
        delays.add(cleaner.next_step_in(clients_active=False))
    assert CLEANER_WAIT_S in delays, "the pass waited for the cleaned copy's fsync on the storage thread"


def test_a_large_batch_is_read_and_rewritten_over_many_steps(kind, tmp_path):
    from kipper.broker.cleaner.compaction import RECORDS_PER_STEP

    p = make_partition(kind, tmp_path, compact_config())
    n = 40 * RECORDS_PER_STEP
    data = records.build_batch([(b"k%d" % (i % (n // 2)), b"v%d" % i, 0) for i in range(n)])
    p.append(data, b.split_batches(data), 0)  # one producer batch; half its records superseded
    roll_segment(p)
    put(p, b"z", b"active")
    cleaning = CleaningPass(p, p.log.config, cleanable(p, p.log.config, 0), 0)
    steps = 1
    while cleaning.step(0.0):  # every yield ends a step: the pass's granularity
        steps += 1
    assert steps >= 2 * n // RECORDS_PER_STEP, "the batch is read twice and rewritten in small steps"
    assert latest(p) == {b"k%d" % k: b"v%d" % (n // 2 + k) for k in range(n // 2)} | {b"z": b"active"}
    assert cleaning.stats().records_removed == n // 2
