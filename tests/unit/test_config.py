"""broker/config.py: .properties parsing, defaults, ranges, listeners and
cross-key checks. No sockets: everything goes through ``load`` and friends."""

from __future__ import annotations

import pytest

from kipper.broker.config import (
    KEYS, BrokerConfig, ConfigError, Listener, load, parse_listeners, parse_overrides,
    read_properties,
)

_INT32 = 2**31 - 1
_INT64 = 2**63 - 1


def write(tmp_path, text: str, name: str = "broker.properties"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- .properties files -------------------------------------------------------------

def test_properties_file_skips_hash_and_bang_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "# a comment\n! another comment\n\n   \nnum.partitions=3\n  # indented comment\n")
    assert read_properties(path) == {"num.partitions": "3"}


def test_properties_accept_colon_as_separator(tmp_path):
    path = write(tmp_path, "log.level: DEBUG\nnode.id :7\n")
    assert read_properties(path) == {"log.level": "DEBUG", "node.id": "7"}


def test_properties_split_on_first_separator_so_values_keep_colons_and_equals(tmp_path):
    path = write(tmp_path, "listeners=PLAINTEXT://127.0.0.1:9092\ncluster.id: a=b:c\n")
    assert read_properties(path) == {"listeners": "PLAINTEXT://127.0.0.1:9092",
                                     "cluster.id": "a=b:c"}


def test_properties_strip_whitespace_around_keys_and_values(tmp_path):
    path = write(tmp_path, "   num.partitions   =   5   \n")
    assert read_properties(path) == {"num.partitions": "5"}


def test_backslash_continues_a_value_on_the_next_line_without_its_indentation(tmp_path):
    path = write(tmp_path, "listeners=PLAINTEXT://127.0.0.1:9092,\\\n"
                           "          INTERNAL://127.0.0.1:9093\n"
                           "node.id=2\n")
    assert read_properties(path) == {
        "listeners": "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093", "node.id": "2"}


def test_continuation_over_several_lines(tmp_path):
    path = write(tmp_path, "cluster.id=a\\\n  b\\\n  c\n")
    assert read_properties(path) == {"cluster.id": "abc"}


def test_continued_line_starting_with_hash_is_part_of_the_value(tmp_path):
    path = write(tmp_path, "cluster.id=a\\\n#b\n")
    assert read_properties(path) == {"cluster.id": "a#b"}


def test_comment_ending_in_backslash_does_not_swallow_the_next_line(tmp_path):
    path = write(tmp_path, "# a comment \\\nnode.id=4\n")
    assert read_properties(path) == {"node.id": "4"}


def test_continuation_on_the_last_line_keeps_the_entry(tmp_path):
    path = write(tmp_path, "node.id=4\nnum.partitions=6\\")
    assert read_properties(path) == {"node.id": "4", "num.partitions": "6"}


def test_later_duplicate_key_in_file_wins(tmp_path):
    path = write(tmp_path, "node.id=1\nnode.id=2\n")
    assert read_properties(path) == {"node.id": "2"}


def test_line_without_separator_is_rejected_with_file_and_line_number(tmp_path):
    path = write(tmp_path, "node.id=1\njust-a-word\n")
    with pytest.raises(ConfigError, match=r"broker\.properties:2: expected key=value"):
        read_properties(path)


def test_line_with_empty_key_is_rejected(tmp_path):
    path = write(tmp_path, "=5\n")
    with pytest.raises(ConfigError, match="expected key=value"):
        read_properties(path)


def test_missing_config_file_is_a_config_error_naming_the_file(tmp_path):
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConfigError, match="cannot read config file .*nope.properties"):
        load(missing)


# --- overrides and layering ------------------------------------------------------------

def test_override_splits_on_first_equals_and_strips_the_key():
    assert parse_overrides([" cluster.id =a=b", "node.id=3"]) == {"cluster.id": "a=b", "node.id": "3"}


def test_override_without_equals_is_rejected():
    with pytest.raises(ConfigError, match="'node.id' is not key=value"):
        parse_overrides(["node.id"])


def test_overrides_win_over_the_file(tmp_path):
    path = write(tmp_path, "num.partitions=4\nnode.id=9\n")
    config = load(path, {"num.partitions": "2"})
    assert config["num.partitions"] == 2
    assert config["node.id"] == 9


def test_explicit_lists_keys_from_file_and_overrides_only(tmp_path):
    path = write(tmp_path, "num.partitions=4\n")
    config = load(path, {"node.id": "5"})
    assert config.explicit == frozenset({"num.partitions", "node.id"})


# --- defaults ----------------------------------------------------------------------------

def test_defaults_without_file_or_overrides():
    config = load()
    assert config["listeners"] == (Listener("PLAINTEXT", "127.0.0.1", 9092),)
    assert config["advertised.listeners"] == ()
    assert config["node.id"] == 1
    assert config["num.partitions"] == 1
    assert config["auto.create.topics.enable"] is True
    assert config["socket.request.max.bytes"] == 104857600  # Kafka's default
    assert config["message.max.bytes"] == 1048588  # Kafka's default
    assert config["retention.ms"] == 604800000
    assert config["retention.bytes"] == -1
    assert config["producer.state.mode"] == "latest"
    assert config["log.level"] == "INFO"
    assert config["listener.security.protocol.map"]["PLAINTEXT"] == "PLAINTEXT"
    assert config.explicit == frozenset()


def test_every_declared_key_has_a_value_after_load():
    assert set(load()) == set(KEYS)


def test_integer_and_boolean_defaults_load_as_declared():
    config = load()
    for name, key in KEYS.items():
        if isinstance(key.default, (int, bool)):
            assert config[name] == key.default, name


def test_config_is_read_only():
    config = load()
    with pytest.raises(AttributeError):
        config.explicit = frozenset({"x"})
    with pytest.raises(TypeError):
        config["node.id"] = 2  # type: ignore[index]
    assert isinstance(config, BrokerConfig)


# --- unknown keys --------------------------------------------------------------------------

def test_unknown_override_key_is_rejected_by_name():
    with pytest.raises(ConfigError, match="unknown configuration key.*nosuch.key"):
        load(overrides={"nosuch.key": "1"})


def test_unknown_key_in_file_is_rejected_by_name(tmp_path):
    path = write(tmp_path, "log.retention.weeks=1\n")
    with pytest.raises(ConfigError, match="log.retention.weeks"):
        load(path)


def test_all_unknown_keys_are_named_sorted():
    with pytest.raises(ConfigError, match="zz.key, aa.key|aa.key, zz.key") as info:
        load(overrides={"zz.key": "1", "aa.key": "2"})
    assert "aa.key, zz.key" in str(info.value)


# --- ranges ---------------------------------------------------------------------------------

# (key, lowest accepted, highest accepted): None means unbounded on that side.
INT_RANGES = [
    ("node.id", 0, _INT32),
    ("socket.request.max.bytes", 1024, _INT32),
    ("socket.send.buffer.bytes", -1, _INT32),
    ("socket.receive.buffer.bytes", -1, _INT32),
    ("num.partitions", 1, 100000),
    ("message.max.bytes", 0, _INT32),
    ("retention.ms", -1, _INT64),
    ("retention.bytes", -1, _INT64),
    ("log.retention.check.interval.ms", 1, _INT64),
    ("log.message.timestamp.before.max.ms", 0, _INT64),
    ("log.message.timestamp.after.max.ms", 0, _INT64),
    ("log.segment.bytes", 14, _INT32),
    ("log.roll.ms", -1, _INT64),
    ("log.roll.hours", 1, _INT32),
    ("log.retention.hours", -1, _INT32),
    ("log.index.interval.bytes", 0, _INT32),
    ("log.flush.interval.messages", 1, _INT64),
    ("log.flush.interval.ms", -1, _INT64),
    ("log.flush.offset.checkpoint.interval.ms", 0, _INT32),
    ("log.cleaner.threads", 1, 64),
    ("log.cleaner.backoff.ms", 1, _INT64),
    ("log.cleaner.delete.retention.ms", 0, _INT64),
    ("log.cleaner.min.compaction.lag.ms", 0, _INT64),
    ("log.cleaner.max.compaction.lag.ms", 1, _INT64),
    ("offsets.topic.num.partitions", 1, 1000),
    ("offsets.topic.segment.bytes", 14, _INT32),
    ("transaction.state.log.num.partitions", 1, 1000),
    ("transaction.state.log.segment.bytes", 14, _INT32),
    ("max.in.flight.sequence.number.per.connection", 1, 2**30 - 1),
    ("producer.id.expiration.ms", 1, _INT32),
    ("producer.id.expiration.check.interval.ms", 1, _INT32),
    ("transaction.max.timeout.ms", 1, _INT32),
    ("transaction.abort.timed.out.transaction.cleanup.interval.ms", 1, _INT32),
    ("transactional.id.expiration.ms", 1, _INT32),
    ("group.initial.rebalance.delay.ms", 0, _INT32),
    ("group.min.session.timeout.ms", 1, _INT32),
    ("group.max.session.timeout.ms", 1, _INT32),
    ("group.max.size", 1, _INT32),
    ("offsets.retention.minutes", 1, _INT32),
    ("group.consumer.session.timeout.ms", 1, _INT32),
    ("group.consumer.min.session.timeout.ms", 1, _INT32),
    ("group.consumer.max.session.timeout.ms", 1, _INT32),
    ("group.consumer.heartbeat.interval.ms", 1, _INT32),
    ("group.consumer.min.heartbeat.interval.ms", 1, _INT32),
    ("group.consumer.max.heartbeat.interval.ms", 1, _INT32),
    ("group.consumer.max.size", 1, _INT32),
    ("group.streams.session.timeout.ms", 1, _INT32),
    ("group.streams.min.session.timeout.ms", 1, _INT32),
    ("group.streams.max.session.timeout.ms", 1, _INT32),
    ("group.streams.heartbeat.interval.ms", 1, _INT32),
    ("group.streams.min.heartbeat.interval.ms", 1, _INT32),
    ("group.streams.max.heartbeat.interval.ms", 1, _INT32),
    ("group.streams.max.size", 1, _INT32),
    ("group.streams.num.standby.replicas", 0, _INT32),
    ("group.streams.max.standby.replicas", 0, _INT32),
    ("group.streams.initial.rebalance.delay.ms", 0, _INT32),
    ("group.streams.assignment.interval.ms", 0, _INT32),
    ("group.streams.task.offset.interval.ms", 1, _INT32),
    ("group.streams.acceptable.recovery.lag", 0, _INT64),
    ("metrics.dump.interval.ms", 100, _INT32),
    ("metrics.dump.max.bytes", 4096, _INT64),
    ("metrics.dump.max.files", 1, 100000),
    ("telemetry.max.bytes", 1, _INT32),
    ("client.telemetry.max.series", 0, _INT32),
    ("sasl.server.max.receive.size", 1024, _INT32),
    ("quota.window.num", 1, 1000),
    ("quota.window.size.seconds", 1, _INT32),
    ("producer.id.quota.window.num", 1, 1000),
    ("producer.id.quota.window.size.seconds", 1, _INT32),
    ("producer.id.quota.cache.cleanup.scheduler.interval.ms", 1, _INT32),
    ("producer.id.quota.bloom.filter.expected.items", 1, 100_000_000),
    ("broker.session.timeout.ms", 1, _INT32),
    ("broker.heartbeat.interval.ms", 1, _INT32),
    ("replica.lag.time.max.ms", 1, _INT64),
    ("replica.fetch.wait.max.ms", 0, _INT32),
    ("replica.fetch.max.bytes", 0, _INT32),
    ("replica.fetch.response.max.bytes", 0, _INT32),
    ("replica.fetch.backoff.ms", 0, _INT32),
    ("default.replication.factor", 1, 32767),
    ("offsets.topic.replication.factor", 1, 32767),
    ("transaction.state.log.replication.factor", 1, 32767),
    ("leader.imbalance.check.interval.seconds", 1, _INT64),
]


def _load_one(key: str, value: str):
    if key.startswith(("group.consumer.", "group.streams.")):
        # the key's own range only: the session and heartbeat keys are also checked
        # against each other (tests/unit/test_consumer_group_config.py)
        try:
            return {key: KEYS[key].parse(value)}
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    overrides = {key: value}
    # keep the cross-key session check out of the way of single-key range checks
    if key == "group.min.session.timeout.ms":
        overrides["group.max.session.timeout.ms"] = str(_INT32)
    if key == "group.max.session.timeout.ms":
        overrides["group.min.session.timeout.ms"] = "1"
    return load(overrides=overrides)


def test_range_table_covers_every_integer_key():
    # share-group keys have cross-key checks; tests/unit/test_share_records_config.py covers them
    int_keys = {name for name, key in KEYS.items()
                if isinstance(key.default, int) and not isinstance(key.default, bool)
                and key.section != "share"}
    assert int_keys == {row[0] for row in INT_RANGES}


@pytest.mark.parametrize("key,lo,hi", INT_RANGES)
def test_integer_key_accepts_its_bounds(key, lo, hi):
    assert _load_one(key, str(lo))[key] == lo
    assert _load_one(key, str(hi))[key] == hi


@pytest.mark.parametrize("key,lo,hi", INT_RANGES)
def test_integer_key_rejects_one_below_minimum(key, lo, hi):
    with pytest.raises(ConfigError, match=rf"^{key}: {lo - 1} is below the minimum {lo}$"):
        _load_one(key, str(lo - 1))


@pytest.mark.parametrize("key,lo,hi", INT_RANGES)
def test_integer_key_rejects_one_above_maximum(key, lo, hi):
    with pytest.raises(ConfigError, match=rf"^{key}: {hi + 1} is above the maximum {hi}$"):
        _load_one(key, str(hi + 1))


@pytest.mark.parametrize("text", ["abc", "1.5", "", "0x10", "1e3"])
def test_integer_key_rejects_non_integers(text):
    with pytest.raises(ConfigError, match=r"^num.partitions: .* is not an integer"):
        load(overrides={"num.partitions": text})


def test_integer_value_may_carry_surrounding_whitespace():
    assert load(overrides={"num.partitions": "  7 "})["num.partitions"] == 7


@pytest.mark.parametrize("text,value", [("true", True), ("false", False), ("TRUE", True),
                                        (" False ", False)])
def test_boolean_key_accepts_true_and_false_in_any_case(text, value):
    assert load(overrides={"auto.create.topics.enable": text})["auto.create.topics.enable"] is value


@pytest.mark.parametrize("text", ["yes", "1", "on", ""])
def test_boolean_key_rejects_anything_else(text):
    with pytest.raises(ConfigError, match="^auto.create.topics.enable: .* is not true or false"):
        load(overrides={"auto.create.topics.enable": text})


@pytest.mark.parametrize("key,good,bad", [
    ("log.level", "WARNING", "TRACE"),
    ("log.level", "DEBUG", "debug"),
    ("log.format", "json", "xml"),
    ("producer.state.mode", "window5", "window6"),
])
def test_choice_key_accepts_only_its_choices(key, good, bad):
    assert load(overrides={key: good})[key] == good
    with pytest.raises(ConfigError, match=f"^{key}: '{bad}' is not one of"):
        load(overrides={key: bad})


def test_group_min_session_timeout_above_max_is_rejected():
    with pytest.raises(ConfigError, match="group.min.session.timeout.ms is above"):
        load(overrides={"group.min.session.timeout.ms": "10000",
                        "group.max.session.timeout.ms": "9999"})


def test_group_min_session_timeout_equal_to_max_is_accepted():
    config = load(overrides={"group.min.session.timeout.ms": "5000",
                             "group.max.session.timeout.ms": "5000"})
    assert config["group.min.session.timeout.ms"] == config["group.max.session.timeout.ms"] == 5000


# --- listeners -------------------------------------------------------------------------------

def test_listeners_parse_names_hosts_and_ports():
    assert parse_listeners("PLAINTEXT://127.0.0.1:9092, INTERNAL_2://kafka.local:19092") == (
        Listener("PLAINTEXT", "127.0.0.1", 9092), Listener("INTERNAL_2", "kafka.local", 19092))


def test_listener_with_empty_host_binds_all_interfaces():
    assert parse_listeners("PLAINTEXT://:9092") == (Listener("PLAINTEXT", "", 9092),)


def test_listener_with_bracketed_ipv6_host():
    assert parse_listeners("PLAINTEXT://[::1]:9092") == (Listener("PLAINTEXT", "::1", 9092),)


def test_listener_port_zero_is_allowed_for_an_ephemeral_port():
    assert load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"})["listeners"][0].port == 0


def test_listener_str_round_trips():
    text = "PLAINTEXT://127.0.0.1:9092"
    assert str(parse_listeners(text)[0]) == text


def test_empty_items_in_listener_list_are_ignored():
    assert len(parse_listeners("PLAINTEXT://h:1,,")) == 1


@pytest.mark.parametrize("text,message", [
    ("127.0.0.1:9092", "is not of the form NAME://host:port"),
    ("PLAINTEXT://127.0.0.1", "has no port"),
    ("PLAINTEXT://127.0.0.1:", "has no port"),
    ("PLAINTEXT://127.0.0.1:http", "PLAINTEXT://127.0.0.1:http"),
    ("PLAINTEXT://127.0.0.1:65536", "out of range"),
    ("plaintext://127.0.0.1:9092", "must be upper case"),
    ("PLAIN-TEXT://127.0.0.1:9092", "must be upper case"),
    ("://127.0.0.1:9092", "must be upper case"),
    ("PLAINTEXT://a:1,PLAINTEXT://b:2", "each listener name may appear once"),
])
def test_bad_listener_strings_are_rejected(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_listeners(text)


def test_bad_listener_error_names_the_key_once():
    with pytest.raises(ConfigError) as info:
        load(overrides={"listeners": "garbage"})
    message = str(info.value)
    assert message.startswith("listeners: ")
    assert message.count("listeners:") == 1


def test_empty_listeners_are_rejected():
    with pytest.raises(ConfigError, match="at least one listener is required"):
        load(overrides={"listeners": ""})


def test_listener_name_missing_from_security_protocol_map_is_rejected():
    with pytest.raises(ConfigError, match="no entry for listener INTERNAL"):
        load(overrides={"listeners": "INTERNAL://127.0.0.1:0"})


def test_custom_listener_name_mapped_to_a_protocol_is_accepted():
    config = load(overrides={"listeners": "INTERNAL://127.0.0.1:0",
                             "listener.security.protocol.map": "INTERNAL:PLAINTEXT"})
    assert config["listener.security.protocol.map"] == {"INTERNAL": "PLAINTEXT"}


@pytest.mark.parametrize("text,message", [
    ("INTERNAL:TCP", "'TCP' is not one of"),
    ("INTERNAL", "'INTERNAL' is not NAME:PROTOCOL"),
])
def test_bad_security_protocol_map_is_rejected(text, message):
    with pytest.raises(ConfigError, match=f"^listener.security.protocol.map: {message}"):
        load(overrides={"listener.security.protocol.map": text})


# --- advertised.listeners ---------------------------------------------------------------------

def test_advertised_listener_for_a_bound_listener_is_accepted():
    config = load(overrides={"listeners": "PLAINTEXT://0.0.0.0:0",
                             "advertised.listeners": "PLAINTEXT://kafka.example:9092"})
    assert config["advertised.listeners"] == (Listener("PLAINTEXT", "kafka.example", 9092),)


def test_advertised_listener_name_not_in_listeners_is_rejected():
    with pytest.raises(ConfigError, match="advertised.listeners: EXTERNAL is not in listeners"):
        load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0",
                        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
                        "advertised.listeners": "EXTERNAL://kafka.example:9092"})


def test_advertised_listener_with_port_zero_is_rejected():
    with pytest.raises(ConfigError, match="needs a host and a non-zero port"):
        load(overrides={"advertised.listeners": "PLAINTEXT://kafka.example:0"})


def test_advertised_listener_without_host_is_rejected():
    with pytest.raises(ConfigError, match="needs a host and a non-zero port"):
        load(overrides={"advertised.listeners": "PLAINTEXT://:9092"})


def test_bad_advertised_listener_error_names_its_key():
    with pytest.raises(ConfigError, match="^advertised.listeners: 'nonsense' is not of the form"):
        load(overrides={"advertised.listeners": "nonsense"})


def test_environment_variables_sit_between_the_file_and_overrides(tmp_path):
    f = tmp_path / "b.properties"
    f.write_text("num.partitions=2\nnode.id=5\n")
    cfg = load(f, {"node.id": "9"}, {"KIPPER_NUM_PARTITIONS": "3", "KIPPER_NODE_ID": "7", "OTHER": "x"})
    assert cfg["num.partitions"] == 3 and cfg["node.id"] == 9


def test_unknown_kipper_environment_variable_is_refused():
    with pytest.raises(ConfigError, match="KIPPER_NO_SUCH"):
        load(environ={"KIPPER_NO_SUCH": "1"})


def test_the_project_tools_variables_are_not_taken_for_broker_settings():
    # scripts/kafka-reference and the conformance suite read these; a shell exporting them
    # (KIPPER_CONFORMANCE_REPORT=... make test) must still start brokers
    environ = {"KIPPER_CACHE": "/tmp/c", "KIPPER_KAFKA_VERSION": "4.4.0", "KIPPER_KAFKA_HEAP": "512m",
               "KIPPER_CONFORMANCE_REPORT": "/tmp/r.json", "KIPPER_KAFKA_CLUSTER": "1", "KIPPER_FRANZ_FULL": "1",
               "KIPPER_CONFLUENT_KAFKA_PYTHON_TAG": "v2.15.0", "KIPPER_CONFLUENT_KAFKA_PYTHON_GIT": "/tmp/ck",
               "KIPPER_NUM_PARTITIONS": "4"}
    assert load(environ=environ)["num.partitions"] == 4
