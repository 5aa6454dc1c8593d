"""What the generator's twelfth run found (issue 36, docs/FUZZ_FINDINGS.md), each the sequence a
difference shrank to or a few variants of it, replayed as generated.py replays (every one
passes against Kafka 4.4; tests/unit/test_twelfth_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register, scenario
from tests.conformance.scenarios.generated import NO_SUCH_PID, T0, marker_step, produce_step, replay


def _commit(version: int, group: str, topic: str, generation: int, member: str, metadata) -> dict:
    return {"api": "OffsetCommit", "version": version, "body": {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member, "retention_time_ms": -1,
        "topics": [{"name": topic, "partitions": [
            {"partition_index": 1, "committed_offset": 0, "committed_metadata": metadata}]}]}}


def _txn_commit(generation: int, member: str, metadata) -> dict:
    return {"api": "TxnOffsetCommit", "version": 3, "body": {
        "transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": {"<pid>": "<T>-x0"},
        "producer_epoch": {"<epoch>": 0}, "generation_id": generation, "member_id": member, "group_instance_id": None,
        "topics": [{"name": "<T>-t0", "partitions": [
            {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1, "committed_metadata": metadata}]}]}}


def _join(version: int, protocol: str, member, also: str | None = None) -> dict:
    names = [protocol] + ([also] if also else [])
    return {"api": "JoinGroup", "version": version, "body": {
        "group_id": "<T>-g0", "member_id": member, "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000,
        "protocol_type": "consumer",
        "protocols": [{"name": name, "metadata": {"<subscription>": ["<T>-t0"]}} for name in names]}}


def _configs(api: str, version: int, *pairs) -> dict:
    """The same topic configs three ways: AlterConfigs, IncrementalAlterConfigs (SET) and a new
    topic's, each validated only."""
    if api == "CreateTopics":
        return {"api": api, "version": version, "body": {"timeout_ms": 30000, "validate_only": True, "topics": [
            {"name": "<T>-t1", "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": [{"name": k, "value": v} for k, v in pairs]}]}}
    op = {"config_operation": 0} if api == "IncrementalAlterConfigs" else {}
    return {"api": api, "version": version, "body": {"validate_only": True, "resources": [
        {"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": k, "value": v, **op} for k, v in pairs]}]}}


_BAD_TOGETHER = (
    (("cleanup.policy", "1"), ("", "1")),  # an unknown name before any value
    (("cleanup.policy", "1"), ("retention.ms", "x")),  # values in LogConfig's definition order
    (("no.such.b", "1"), ("no.such.a", "1"), ("zzz", "1"), ("aaa", "1")),  # the first unknown: a hash order
)
# (config, value as given, as described once taken; None: refused)
_NUMBERS = (("retention.ms", "+5000", "5000"), ("retention.ms", " 7000 ", "7000"), ("retention.ms", "1_000", None),
            ("retention.ms", "1e3", None), ("min.cleanable.dirty.ratio", "0.5d", "0.5"),
            ("min.cleanable.dirty.ratio", "NaN", "NaN"), ("min.cleanable.dirty.ratio", "nan", None),
            ("min.cleanable.dirty.ratio", "0x1p-2", "0.25"), ("min.cleanable.dirty.ratio", "1E-1F", "0.1"),
            ("compression.gzip.level", "+3", "3"))

RUN_12: dict[str, list[dict]] = {
    # a marker begins a producer's epoch with no batch: its first batch starts at sequence 0
    # (Kafka's checkSequence: NO_SEQUENCE, seed 11404)
    "generated/produce-after-a-marker-starts-at-sequence-zero": [
        T0, marker_step(NO_SUCH_PID, 0), produce_step(NO_SUCH_PID, 0, 1), produce_step(NO_SUCH_PID, 0, 0),
        produce_step(NO_SUCH_PID, 0, 1), marker_step(NO_SUCH_PID + 1, 2), produce_step(NO_SUCH_PID + 1, 3, 1),
    ],
    # Kafka's coordinator makes a simple group before it looks at the offsets: after a commit
    # whose every offset it refused (metadata too large) its writes see an empty group (an
    # unknown member is told so, DeleteGroups deletes it); a commit the broker refused first (an
    # unknown topic) makes none (seed 11414). Nothing was written, so its reads see the group
    # only once another write to the same __consumer_offsets partition commits it: not asked
    "generated/offset-commit-refused-by-the-coordinator-makes-the-group": [
        {**T0, "body": {**T0["body"], "topics": [{**T0["body"]["topics"][0], "num_partitions": 3}]}},
        _commit(5, "<T>-g0", "<T>-t0", -1, "<T>-m1", {"<long>": 5000}),
        _commit(2, "<T>-g0", "<T>-t0", 0, "<T>-m0", ""),
        _commit(5, "<T>-g1", "<T>-t9", -1, "", ""),
        _commit(2, "<T>-g1", "<T>-t0", 0, "<T>-m0", ""),
        {"api": "DeleteGroups", "version": 2, "body": {"groups_names": ["<T>-g0", "<T>-g1"]}},
        _commit(2, "<T>-g0", "<T>-t0", 0, "<T>-m0", ""),
    ],
    # the same for TxnOffsetCommit inside a transaction that holds the group's offsets
    "generated/txn-offset-commit-refused-by-the-coordinator-makes-the-group": [
        T0,
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "AddOffsetsToTxn", "version": 3, "body": {"transactional_id": "<T>-x0", "producer_id": {"<pid>": "<T>-x0"},
                                                          "producer_epoch": {"<epoch>": 0}, "group_id": "<T>-g0"}},
        _txn_commit(-1, "", {"<long>": 5000}),
        _txn_commit(0, "<T>-m0", ""),
    ],
    # a member rejoining with protocols no member has, its own current ones counted: a lone
    # member cannot switch to a wholly new protocol (Kafka's supportsProtocols, seed 11429)
    "generated/join-group-a-member-switching-protocols": [
        T0,
        _join(0, "range", {"<member>": 0}),
        _join(3, "range", {"<member>": 0}),
        _join(2, "", {"<member>": 0}),
        _join(2, "roundrobin", {"<member>": 0}, also="range"),
        _join(2, "roundrobin", {"<member>": 0}),
    ],
    # the default group resource (""): APPEND and SUBTRACT of a key that is no list are refused
    # before the name, as for a topic (seed 9405)
    "generated/alter-configs-of-the-default-group": [
        T0,
        *({"api": "IncrementalAlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
            {"resource_type": 32, "resource_name": "", "configs": [{"name": key, "config_operation": op, "value": "1"}]}]}}
          for key, op in (("retention.ms", 3), ("retention.ms", 2), ("consumer.session.timeout.ms", 0), ("no.such", 0))),
    ],
    # topic configs refused together: an unknown name first, then values in LogConfig's order,
    # whatever order the request gives them (seed 11408)
    "generated/topic-configs-refused-in-kafkas-order": [
        T0,
        *(_configs(api, version, *pairs) for pairs in _BAD_TOGETHER
          for api, version in (("AlterConfigs", 2), ("IncrementalAlterConfigs", 1), ("CreateTopics", 7))),
        {"api": "AlterConfigs", "version": 0, "body": {"validate_only": False, "resources": [
            {"resource_type": 32, "resource_name": "<T>-t0", "configs": [{"name": "retention.ms", "value": "1"}]},
            {"resource_type": 2, "resource_name": "<T>-t0", "configs": [
                {"name": "cleanup.policy", "value": "1"}, {"name": "", "value": "1"}]}]}},
    ],
}

for _name, _steps in RUN_12.items():
    register(_name, replay(_steps))


def _topic_config(run, topic: str, key: str, *, record: bool = True):
    return run.call(k.DESCRIBE_CONFIGS, 4, {"include_synonyms": True, "include_documentation": False, "resources": [
        {"resource_type": 2, "resource_name": topic, "configuration_keys": [key]}]}, record=record)


def _value_is(shown: str):
    """The topic's own value, as shown (DYNAMIC_TOPIC_CONFIG: a value equal to the default,
    0.5 say, shows before the broker has it, as the default)."""
    return lambda r: [(c["value"], c["config_source"]) for c in r["results"][0]["configs"]] == [(shown, 1)]


@scenario("generated/topic-config-numbers-as-java-reads-them")
def _(run):
    """Numbers as Java reads them: a sign, spaces around, a 'd' suffix, NaN and hex doubles are
    taken; '1_000', '1e3' for a LONG and 'nan' are not; what is taken is described as its
    type prints it, and a new topic's answer gives the text as given. (Kafka's broker learns a
    topic's configs from its controller a moment later: each is asked until it has them.)"""
    t = k.create_topic(run)
    for key, value, shown in _NUMBERS:
        run.call(k.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": t, "configs": [{"name": key, "config_operation": 0, "value": value}]}]})
        if shown is not None:
            run.poll(lambda key=key: _topic_config(run, t, key, record=False), _value_is(shown))
        _topic_config(run, t, key)
    run.call(k.CREATE_TOPICS, 7, {"timeout_ms": 30000, "validate_only": False, "topics": [
        {"name": run.name("t1"), "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": [
            {"name": "min.cleanable.dirty.ratio", "value": "0.5d"}, {"name": "retention.ms", "value": "+5000"}]}]})


# the broker's own values equal to its defaults, of no topic config (a new topic shows its
# broker's values as given, on Kafka also after they are deleted): no other scenario sees them
_HELD = {"log.cleaner.io.buffer.load.factor": "0.9d", "log.cleaner.threads": "+1"}


def _broker_configs(run, op: int, *, record: bool = True):
    return run.call(k.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
        {"resource_type": 4, "resource_name": "1", "configs": [
            {"name": key, "config_operation": op, "value": value if op == 0 else None} for key, value in _HELD.items()]}]},
        record=record)


def _described(run, name: str, *, record: bool = True):
    return run.call(k.DESCRIBE_CONFIGS, 4, {"include_synonyms": True, "include_documentation": False, "resources": [
        {"resource_type": 4, "resource_name": name, "configuration_keys": sorted(_HELD)}]}, record=record)


def _sources(source: int):
    return lambda r: [c["config_source"] for c in r["results"][0]["configs"]] == [source] * len(_HELD)


@scenario("generated/broker-config-numbers-described-as-held")
def _(run):
    """A broker describes a dynamic value as its KafkaConfig holds it, parsed and printed again
    ('+1' as 1, '0.5d' as 0.5), and lists the text as given among the synonyms. Kafka applies
    a broker's dynamic configs in its own time: the description is asked until it has them."""
    _broker_configs(run, 0)
    try:
        run.poll(lambda: _described(run, "1", record=False), _sources(2))
        _described(run, "1")
    finally:
        _broker_configs(run, 1, record=False)
        run.poll(lambda: _described(run, "1", record=False), _sources(5))
