"""kafka-dump-log reads kipper's durable log directory as Kafka's own (docs/STORAGE.md): the same
requests go to Apache Kafka 4.4 and to a kipper with ``log.dirs``, and Kafka's DumpLogSegments
prints each broker's segment, offset index, time index and transaction index alike.

The batches are byte for byte the same on both (built here, with fixed timestamps); what each
broker gives its own way is masked: the file's path, producer ids (and so the CRC of a batch
that carries one) and the time a transaction marker was written. Segments roll every MiB on
both; the indexes compared are the rolled segments' (Kafka keeps the active segment's mapped,
kipper writes its own when the segment rolls or the broker stops)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conformance.harness import Run
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios.versions import wait_txn_state
from kipper.broker.groups.journal import partition_for
from tests.support.broker import BrokerProcess
from tests.support.reference import SHARED, Reference, warm_up

DUMP = "org.apache.kafka.tools.DumpLogSegments"
TS = 1_700_000_000_000
# 120 batches of 10 records of 3,000 bytes: some 3.5 MiB, an index entry every 4 KiB, in segments
# of 1 MiB (Kafka 4's least segment.bytes)
BATCHES, RECORDS, VALUE = 120, 10, 3000
SEGMENT_BYTES = 1 << 20
# (a conformance run's form of name: the other tests on the shared Kafka leave it out of listings)
TOKEN = "c9990"
# the coordinators' topics' partitions, as the shared Kafka has them (one each)
COORDINATOR_PARTITIONS = {"__consumer_offsets": "offsets.topic.num.partitions",
                          "__transaction_state": "transaction.state.log.num.partitions"}


@pytest.fixture(scope="module")
def durable_kipper(tmp_path_factory):
    logs = tmp_path_factory.mktemp("kipper-durable") / "logs"
    proc = BrokerProcess({"log.dirs": str(logs), **{k: SHARED[k] for k in COORDINATOR_PARTITIONS.values()}}).start()
    warm_up(proc.bootstrap)  # (the coordinators' topics, as the shared references have them)
    yield proc, logs
    proc.stop()


def _records(batch: int) -> list:
    return [(f"k{batch}-{i}".encode(), (f"v{batch}-{i}-" * (VALUE // 4))[:VALUE].encode(), TS + batch * 1000 + i,
             [("h", f"{i}".encode())] if i % 3 == 0 else []) for i in range(RECORDS)]


def _write(ref: Reference, token: str) -> str:
    """The same batches (plain and gzip), then a transaction committed and one aborted, in a topic
    whose segments roll every MiB and are kept (the records are stamped in 2023)."""
    run = Run(ref, token)
    try:
        topic = k.create_topic(run, configs={"segment.bytes": SEGMENT_BYTES, "retention.ms": -1})
        for b in range(BATCHES):
            k.produce(run, topic, k.batch(recs=_records(b), compression_type=1 if b % 4 == 3 else 0))
        for n, committed in enumerate((True, False)):
            txn = run.name(f"txn{n}")
            pid, epoch = (lambda r: (r["producer_id"], r["producer_epoch"]))(k.init_producer_id(run, txn))
            k.add_partitions(run, txn, pid, epoch, topic)
            k.produce(run, topic, k.batch(recs=_records(100 + n), producer_id=pid, producer_epoch=epoch,
                                          base_sequence=0, transactional=True), transactional_id=txn)
            k.end_txn(run, txn, pid, epoch, committed)
            wait_txn_state(run, txn, "CompleteCommit" if committed else "CompleteAbort")
        for offset, text in ((42, "m"), (43, None)):  # (a simple consumer's commits: no member, no generation)
            k.commit(run, run.name("g"), topic, offset, metadata_text=text)
        k.commit(run, run.name("g"), run.name("none"), 7)  # (a topic that does not exist: no record on either)
        return topic
    finally:
        run.close()


def _masked(text: str) -> str:
    text = re.sub(r"\S*/(?=\d{20}\.)", "<dir>/", text)  # (each broker's own directory)
    # a producer's id is the broker's to give, and the CRC of its batches covers it
    text = re.sub(r"producerId: (?!-1\b)\d+", "producerId: <id>", text)
    text = re.sub(r"(producerId: <id>.*?)crc: \d+", r"\1crc: <crc>", text)
    # a transaction marker is stamped when the coordinator writes it
    return re.sub(r"(isControl: true .*?CreateTime: )\d+", r"\1<now>", re.sub(
        r"(\| offset: \d+ CreateTime: )\d+(?= keySize: 4 valueSize: 6 sequence: -1 headerKeys: \[\] endTxnMarker)",
        r"\1<now>", text))


def _dump(tools, path: Path, *extra: str) -> str:
    result = tools.servers["kafka"].run(DUMP, ["--files", str(path), *extra])
    assert result.exit == 0, result.stderr
    return _masked(result.stdout)


def test_kafka_dump_log_prints_kippers_segments_and_indexes_as_kafkas(tools, kafka_reference, durable_kipper):
    proc, logs = durable_kipper
    kafka_topic = _write(kafka_reference, TOKEN)
    try:
        _compare(tools, kafka_reference.data_dir / f"{kafka_topic}-0", proc, logs)
    finally:  # (the shared Kafka's listings must not show it to the tests after this one; and
        # the deletion's tombstones of the group's offsets are compared in the next test)
        for ref in (kafka_reference, _kipper(proc)):
            run = Run(ref, TOKEN)
            run.call(k.DELETE_TOPICS, 6, {"topics": [{"name": kafka_topic, "topic_id": None}], "timeout_ms": 30000})
            run.close()


def _kipper(proc) -> Reference:
    return Reference("kipper", proc.bootstrap, proc.bootstrap, "kipper")


def _compare(tools, kafka_dir: Path, proc, logs: Path) -> None:
    kipper_topic = _write(_kipper(proc), TOKEN)
    dirs = {"kafka": kafka_dir, "kipper": logs / f"{kipper_topic}-0"}
    segments = {name: sorted(p.stem for p in d.glob("*.log")) for name, d in dirs.items()}
    assert segments["kipper"] == segments["kafka"] and len(segments["kafka"]) >= 3  # (rolled where Kafka rolls)
    dumps = []
    for n, segment in enumerate(segments["kafka"]):
        files = [(".log", ["--deep-iteration", "--print-data-log"]), (".log", [])]
        if n < len(segments["kafka"]) - 1:  # (a rolled segment's indexes: Kafka maps the active one's)
            files += [(".index", ["--index-sanity-check"]), (".index", []), (".timeindex", [])]
        files += [(".txnindex", [])] if (dirs["kafka"] / f"{segment}.txnindex").exists() else []
        for suffix, extra in files:
            kafka, kipper = (_dump(tools, d / (segment + suffix), *extra) for d in dirs.values())
            assert kipper == kafka, f"kafka-dump-log {segment}{suffix} {' '.join(extra)}"
            dumps.append(kafka)
    # (what was compared: every batch, both markers, index entries, the aborted transaction)
    text = "\n".join(dumps)
    assert text.count("isTransactional: true") == 8 and "endTxnMarker: ABORT" in text  # (each .log dumped twice)
    assert text.count("| offset: ") == BATCHES * RECORDS + 2 * (RECORDS + 1) and "lastStableOffset" in text
    # (a batch is some 30 KiB: an index entry each, but the first of each segment's)
    assert len(re.findall(r"^offset: \d+ position: \d+$", text, flags=re.M)) > BATCHES // 2


# what a coordinator stamps with its clock (commit times, a transaction's start and update times)
# and what each broker gives its own way (topic and producer ids)
NOW_FIELDS = re.compile(r'"(commitTimestamp|transactionStartTimestampMs|transactionLastUpdateTimestampMs|topicId|'
                        r'producerId|previousProducerId)":("[^"]*"|\d+)')


def _coordinator_dump(tools, directory: Path, decoder: str) -> list[str]:
    """The records of the sequence's own group or transactional ids in a coordinator's partition,
    decoded by kafka-dump-log (each segment, in order), their clocks masked."""
    lines = []
    for log in sorted(directory.glob("*.log")):
        text = NOW_FIELDS.sub(r'"\1":<now>', _dump(tools, log, decoder))
        lines += [line.split("| ", 1)[-1] for line in text.splitlines() if TOKEN in line and "| offset:" in line]
    return [re.sub(r"offset: \d+ CreateTime: \d+", "offset: <n> CreateTime: <now>", line) for line in lines]


def test_kafka_dump_log_decodes_kippers_offsets_and_transaction_logs_as_kafkas(tools, kafka_reference, durable_kipper):
    proc, logs = durable_kipper
    # the records the other test made (run again: a second InitProducerId of each transactional
    # id bumps its epoch, whose Empty record is compared too)
    test_kafka_dump_log_prints_kippers_segments_and_indexes_as_kafkas(tools, kafka_reference, durable_kipper)
    for topic, key, decoder in (("__consumer_offsets", f"{TOKEN}-g", "--offsets-decoder"),
                                ("__transaction_state", f"{TOKEN}-txn0", "--transaction-log-decoder"),
                                ("__transaction_state", f"{TOKEN}-txn1", "--transaction-log-decoder")):
        partition = f"{topic}-{partition_for(key, int(SHARED[COORDINATOR_PARTITIONS[topic]]))}"
        kafka, kipper = (_coordinator_dump(tools, d / partition, decoder) for d in (kafka_reference.data_dir, logs))
        assert kafka, f"Kafka wrote none of {key}'s records to {partition}"
        assert kipper == kafka, f"kafka-dump-log {decoder} of {partition}"
