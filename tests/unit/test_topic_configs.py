"""Kafka's topic config set: names, defaults and validation (LogConfig), values in
effect with their source and synonyms (ConfigHelper), and what the append path
does with them (LogValidator): LogAppendTime, timestamp limits, recompression."""

from __future__ import annotations

import pytest

from kipper.broker.log import validate
from kipper.broker.log.validate import AppendPolicy
from kipper.broker.log.topic_configs import TOPIC_CONFIGS, describable, validate_topic_configs
from kipper.broker.log.validate import Rejected
from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.inproc import InProcessBroker

# Kafka 4.x's LogConfig (non-internal names) plus KIP-932's share.auto.offset.reset
KAFKA_TOPIC_CONFIGS = {
    "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages",
    "flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
    "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
    "max.compaction.lag.ms", "max.message.bytes", "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.log.copy.disable",
    "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes", "retention.ms",
    "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
    "unclean.leader.election.enable", "share.auto.offset.reset",
    # Kafka 4.4's (the conformance suite found them in CreateTopics answers, issue 29)
    "errors.deadletterqueue.group.enable", "max.decompressed.message.bytes", "remote.copy.lag.bytes",
    "remote.copy.lag.ms",
}
NOW = 1_700_000_000_000


def test_every_kafka_topic_config_is_known_and_its_default_is_valid():
    assert set(describable()) == KAFKA_TOPIC_CONFIGS
    for name in describable():
        assert validate_topic_configs({name: TOPIC_CONFIGS[name].default}) is None, name


@pytest.mark.parametrize("configs,message", [
    ({"segment.bytes": "1000"}, "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"),
    ({"cleanup.policy": "shred"}, "String must be one of: compact, delete"),
    ({"retention.ms": "-2"}, "Value must be at least -1"),
    ({"flush.ms": "soon"}, "Not a number of type LONG"),
    ({"max.message.bytes": str(2**31)}, "Not a number of type INT"),
    ({"preallocate": "yes"}, "Expected value to be either true or false"),
    ({"min.cleanable.dirty.ratio": "1.5"}, "Value must be no more than 1"),
    ({"compression.zstd.level": "23"}, "[-131072,...,22] or 3"),
    ({"leader.replication.throttled.replicas": "0-1"}, "[partitionId]:[brokerId]"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
    ({"remote.storage.enable": "true"}, "Tiered Storage functionality is disabled in the broker"),
    ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
])
def test_invalid_values_get_kafkas_message(configs, message):
    assert message in validate_topic_configs(configs)


def test_valid_lists_and_internal_segment_bytes_are_accepted():
    assert validate_topic_configs({"cleanup.policy": "compact,delete",
                                   "leader.replication.throttled.replicas": "0:1,1:1",
                                   "internal.segment.bytes": "1024"}) is None
    assert "internal.segment.bytes" not in describable()


def test_null_values_are_refused():
    assert "Null value" in validate_topic_configs({"retention.ms": None})


def test_create_topics_refuses_null_config_values_before_unknown_names_and_counts():
    # Kafka: INVALID_CONFIG naming every null config, checked before the names and the counts
    from kipper.broker.log.topics import TopicManager
    topics = TopicManager(num_partitions=1, auto_create=False)
    code, message, _ = topics.check_new("t", 0, 0, {"retention.ms": None, "no.such": "1", "segment.ms": None})
    assert (code, message) == (ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms,segment.ms")
    assert "t" not in topics


# --- values in effect ----------------------------------------------------------------------

def test_a_topic_value_wins_and_its_synonyms_follow_in_kafkas_order():
    broker = InProcessBroker(**{"log.message.timestamp.type": "LogAppendTime"})
    view = broker.state.topic_configs
    row = view.row({}, "message.timestamp.type", include_synonyms=True)
    assert (row["value"], row["config_source"]) == ("LogAppendTime", 4)  # STATIC_BROKER_CONFIG
    assert [(s["name"], s["source"]) for s in row["synonyms"]] == [
        ("log.message.timestamp.type", 4), ("log.message.timestamp.type", 5)]
    row = view.row({"message.timestamp.type": "CreateTime"}, "message.timestamp.type",
                   include_synonyms=True)
    assert (row["value"], row["config_source"]) == ("CreateTime", 1)  # DYNAMIC_TOPIC_CONFIG
    assert row["synonyms"][0] == {"name": "message.timestamp.type", "value": "CreateTime", "source": 1}


def test_dynamic_broker_configs_sit_between_the_topic_and_the_properties_file():
    broker = InProcessBroker()
    dynamic = broker.state.dynamic_configs
    broker.state.alter_broker_configs("", {"log.retention.ms": "1000"})
    row = broker.state.topic_configs.row({}, "retention.ms", include_synonyms=True)
    assert (row["value"], row["config_source"]) == ("1000", 3)  # DYNAMIC_DEFAULT_BROKER_CONFIG
    broker.state.alter_broker_configs(dynamic.node, {"log.retention.ms": "2000"})
    row = broker.state.topic_configs.row({}, "retention.ms", include_synonyms=True)
    assert (row["value"], row["config_source"]) == ("2000", 2)  # DYNAMIC_BROKER_CONFIG
    assert [s["source"] for s in row["synonyms"]] == [2, 3, 5]
    assert broker.state.dynamic_configs.view["retention.ms"] == 2000


def test_segment_ms_and_flush_ms_defaults_come_from_kippers_broker_keys():
    view = InProcessBroker(**{"log.roll.hours": "2"}).state.topic_configs
    assert view.value({}, "segment.ms") == str(2 * 3_600_000)
    assert view.value({}, "flush.ms") == str(2**63 - 1)


def test_describe_lists_synonyms_as_kafkas_config_helper():
    """DescribeConfigs as Kafka 4.4 answers it (measured, issue 29): no DEFAULT synonym under
    a topic config's own name, broker synonyms under Kafka's names, and log.retention.ms,
    which has no default in Kafka, lists none until set (then log.retention.hours follows)."""
    broker = InProcessBroker()
    view = broker.state.topic_configs
    row = view.row({}, "retention.ms", include_synonyms=True)
    assert (row["value"], row["config_source"], row["synonyms"]) == ("604800000", 5, [])
    row = view.row({"retention.ms": "3600000"}, "retention.ms", include_synonyms=True)
    assert row["synonyms"] == [{"name": "retention.ms", "value": "3600000", "source": 1}]
    assert view.row({}, "segment.ms", include_synonyms=True)["synonyms"] == []
    row = view.row({}, "retention.bytes", include_synonyms=True)
    assert row["synonyms"] == [{"name": "log.retention.bytes", "value": "-1", "source": 5}]
    broker.state.alter_broker_configs("", {"log.retention.ms": "1000"})
    assert [(s["name"], s["value"], s["source"]) for s in
            view.row({}, "retention.ms", include_synonyms=True)["synonyms"]] == [
        ("log.retention.ms", "1000", 3), ("log.retention.hours", "168", 5)]


def test_broker_and_group_rows_name_kafkas_broker_configs():
    broker = InProcessBroker(**{"log.retention.hours": "2"})
    assert broker.state.topic_configs.value({}, "retention.ms") == str(2 * 3_600_000)
    rows = {r.name: r for r in broker.call(32, 4, {"resources": [
        {"resource_type": 4, "resource_name": "1",
         "configuration_keys": ["log.retention.ms", "log.retention.hours", "log.cleanup.policy"]},
        {"resource_type": 32, "resource_name": "g", "configuration_keys": ["share.record.lock.duration.ms",
                                                                          "share.auto.offset.reset"]}],
        "include_synonyms": True, "include_documentation": False}).results[0].configs}
    assert (rows["log.retention.ms"].value, rows["log.retention.ms"].synonyms) == (None, [])
    assert (rows["log.retention.hours"].value, rows["log.retention.hours"].config_source) == ("2", 4)
    assert rows["log.cleanup.policy"].config_type == 7  # LIST
    group = {r.name: r for r in broker.call(32, 4, {"resources": [
        {"resource_type": 32, "resource_name": "g", "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False}).results[0].configs}
    assert [(s.name, s.source) for s in group["share.record.lock.duration.ms"].synonyms] == [
        ("group.share.record.lock.duration.ms", 5)]
    assert [(s.name, s.source) for s in group["share.auto.offset.reset"].synonyms] == [
        ("share.auto.offset.reset", 5)]


# --- the append path -----------------------------------------------------------------------

def _spans(data: bytes):
    return b.split_batches(data)


def test_log_append_time_stamps_the_header_and_keeps_the_crc_valid():
    data = records.build_batch([(b"k", b"v1", 5), (b"k", b"v2", 9)], producer_id=7, producer_epoch=1,
                               base_sequence=0)
    policy = AppendPolicy(log_append_time=True)
    out, spans = validate.rewrite(policy, data, _spans(data), NOW)
    [(start, end, h)] = spans
    assert h.attributes & b.TIMESTAMP_TYPE and h.max_timestamp == NOW
    assert b.crc_valid(out, start, end, h)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (7, 1, 0)
    assert [r.value for r in records.decode_batch(out).records] == [b"v1", b"v2"]


def test_topic_compression_type_recompresses_and_keeps_the_records():
    data = records.build_batch([(b"k%d" % i, b"value" * 20, NOW) for i in range(5)],
                               compression_type=compression.GZIP, producer_id=3, producer_epoch=0,
                               base_sequence=10)
    policy = AppendPolicy(codec=compression.ZSTD, level=3)
    out, [(start, end, h)] = validate.rewrite(policy, data, _spans(data), NOW)
    assert h.compression == compression.ZSTD and b.crc_valid(out, start, end, h)
    assert h.base_sequence == 10 and h.records_count == 5
    assert [r.key for r in records.decode_batch(out).records] == [b"k%d" % i for i in range(5)]


def test_producer_codec_keeps_the_bytes_as_they_came():
    data = records.build_batch([(None, b"v", NOW)], compression_type=compression.LZ4)
    out, _ = validate.checked_batch(data, AppendPolicy(), NOW)
    assert out is data


def test_a_record_too_far_in_the_future_gets_invalid_timestamp():
    data = records.build_batch([(None, b"v", NOW + 3_600_001)])
    with pytest.raises(Rejected) as exc:
        validate.check_timestamps(AppendPolicy(), data, _spans(data), NOW, NOW + 3_600_001)
    assert exc.value.code == ErrorCode.INVALID_TIMESTAMP
    assert exc.value.message == "One or more records have been rejected due to invalid timestamp"
    assert exc.value.record_errors == ((0, f"Timestamp {NOW + 3_600_001} of message with offset 0 is out of range. "
                                           f"The timestamp should be within [{NOW - 2**63 + 1}, {NOW + 3_600_000}]"),)
    validate.check_timestamps(AppendPolicy(log_append_time=True), data, _spans(data), NOW, NOW + 3_600_001)  # ignored


def test_before_max_ms_reads_every_record():
    data = records.build_batch([(None, b"new", NOW), (None, b"old", NOW - 10_000)])
    validate.check_timestamps(AppendPolicy(before_max_ms=20_000), data, _spans(data), NOW, NOW)
    with pytest.raises(Rejected) as exc:
        validate.check_timestamps(AppendPolicy(before_max_ms=5_000), data, _spans(data), NOW, NOW)
    assert exc.value.code == ErrorCode.INVALID_TIMESTAMP
    assert [i for i, _ in exc.value.record_errors] == [1]


def test_produce_answers_with_the_log_append_time_and_stores_it():
    broker = InProcessBroker()
    broker.state.topics.create("t", 1, configs={"message.timestamp.type": "LogAppendTime",
                                                "compression.type": "lz4"})
    answer = broker.produce("t", 0, [(None, b"v", 1)])
    assert (answer.error_code, answer.log_append_time_ms) == (0, broker.now)
    [(_, stored)] = broker.state.topics.get("t").partitions[0].batches()
    h = b.read_header(stored)
    assert h.compression == compression.LZ4 and h.max_timestamp == broker.now


def test_produce_refuses_a_future_timestamp_by_default_and_takes_it_when_allowed():
    broker = InProcessBroker()
    broker.state.topics.create("t", 1)
    answer = broker.produce("t", 0, [(None, b"v", broker.now + 7_200_000)])
    assert answer.error_code == ErrorCode.INVALID_TIMESTAMP
    broker.state.topics.create("late", 1, configs={"message.timestamp.after.max.ms": str(2**63 - 1)})
    assert broker.produce("late", 0, [(None, b"v", broker.now + 7_200_000)]).error_code == 0


def test_max_message_bytes_and_retention_follow_a_dynamic_broker_default():
    broker = InProcessBroker()
    broker.state.topics.create("t", 1)
    broker.state.alter_broker_configs("", {"message.max.bytes": "100"})
    assert broker.produce("t", 0, [(None, b"x" * 500, broker.now)]).error_code == ErrorCode.MESSAGE_TOO_LARGE
    broker.state.alter_broker_configs("", {})
    assert broker.produce("t", 0, [(None, b"x" * 500, broker.now)]).error_code == 0


def test_compact_only_topics_keep_their_data_from_retention():
    broker = InProcessBroker()
    broker.state.topics.create("kept", 1, configs={"cleanup.policy": "compact", "retention.ms": "1"})
    broker.state.topics.create("gone", 1, configs={"retention.ms": "1"})
    for topic in ("kept", "gone"):
        for i in range(3):
            assert broker.produce(topic, 0, [(b"k%d" % i, b"v", broker.now)]).error_code == 0
    broker.now += 10_000
    broker.state.apply_retention(broker.now)
    assert broker.state.topics.partition("kept", 0).log_start_offset == 0
    assert broker.state.topics.partition("gone", 0).log_start_offset == 3  # all of it: Kafka rolls the active one


def test_docs_admin_names_every_topic_config_and_the_inert_ones_as_inert():
    from pathlib import Path

    from kipper.broker.log.topic_configs import INERT

    text = (Path(__file__).resolve().parents[2] / "docs" / "ADMIN.md").read_text(encoding="utf-8")
    inert_row = next(line for line in text.splitlines() if line.startswith("| accepted, no effect"))
    for name in describable():
        assert f"`{name}`" in text, name
        assert (f"`{name}`" in inert_row) == (TOPIC_CONFIGS[name].effect == INERT), name


def test_broker_id_is_a_static_config_kafka_refuses_to_alter():
    b = InProcessBroker()
    r = b.call(44, 1, {"resources": [{"resource_type": 4, "resource_name": "1", "configs": [
        {"name": "broker.id", "config_operation": 0, "value": "7"}]}], "validate_only": False})
    assert r.responses[0].error_code == ErrorCode.INVALID_REQUEST


def test_share_auto_offset_reset_takes_kafkas_by_duration_and_refuses_with_its_words():
    """Kafka 4.4's ShareGroupAutoOffsetResetStrategy: earliest, latest, or by_duration: and a
    Java ISO-8601 duration that is not negative; case as written."""
    from kipper.broker.config_values import java_duration_ms, share_reset_problem

    for good in ("earliest", "latest", "by_duration:PT1H", "by_duration:P1D", "by_duration:PT0S",
                 "by_duration:pt1h", "by_duration:P-1DT25H", "by_duration:PT1.5S"):
        assert share_reset_problem(good) is None, good
    for bad in ("Earliest", "BY_DURATION:PT1H", "by_duration:", "by_duration:-PT1H", "by_duration:PT-1S",
                "by_duration:1h", "by_duration :PT1H", "by_duration:P1DT", "by_duration:PT", "none"):
        assert share_reset_problem(bad) == (
            f"Invalid value `{bad}` for configuration share.auto.offset.reset. The value must be either "
            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."), bad
    assert [java_duration_ms(t) for t in ("PT1H", "-PT1.5S", "P1DT2H3M4.005S")] == [3_600_000, -1500, 93_784_005]
