"""Kafka's client quotas through a whole broker's dispatcher (no sockets, manual clock):
AlterClientQuotas / DescribeClientQuotas for user, client-id and (user, client-id)
entities as Kafka answers them, the values kept in config.dir, and producer_byte_rate /
consumer_byte_rate throttling Produce and Fetch (throttle time, muted connection,
Kafka's empty Fetch answer)."""

from __future__ import annotations

from kipper.broker.context import Session
from kipper.broker.handlers.replies import Reply
from kipper.broker.quota.client_quotas import ClientQuotaStore
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from tests.unit.test_quota_produce import ALTER, DESCRIBE, PRODUCE, Broker

FETCH = APIS[1]
ADMIN = Session("PLAINTEXT", "admin")


def alter(b, entity: dict, ops: dict, validate=False):
    body = {"entries": [{"entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
                         "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops.items()]}],
            "validate_only": validate}
    return b.call(ALTER, 1, body, ADMIN).entries[0]


def describe(b, components, strict=False):
    resp = b.call(DESCRIBE, 1, {"components": [{"entity_type": t, "match_type": m, "match": n}
                                               for t, m, n in components], "strict": strict}, ADMIN)
    return resp.error_code, sorted(
        (tuple(sorted((e.entity_type, e.entity_name or "<default>") for e in entry.entity)),
         {v.key: v.value for v in entry["values"]}) for entry in resp.entries or [])


def produce(b, nbytes: int):
    batch = records.build_batch([(None, b"x" * nbytes, 0)])
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}
    resp = b.call(PRODUCE, 9, body, ADMIN)
    return resp.responses[0].partition_responses[0].error_code, resp.throttle_time_ms


def fetch(b, max_bytes=1 << 20):
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": max_bytes, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [{"topic": "t", "partitions": [
                {"partition": 0, "fetch_offset": 0, "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    b.cid += 1
    frame = encode_request(FETCH, 12, b.cid, "test", body)[4:]
    [result], _ = b.dispatcher.dispatch([frame], 0, ADMIN)
    b.mute_ms = result.mute_ms if type(result) is Reply else 0
    if type(result) is Reply:
        result = result.body
    if isinstance(result, list):  # the answer's buffers, stored batches among them
        result = b"".join(bytes(x) for x in result)
    return decode_response(FETCH, 12, result[4:])[1]


def test_byte_rates_on_every_client_entity_are_stored_and_described(tmp_path):
    b = Broker(tmp_path)
    assert alter(b, {"user": "u"}, {"producer_byte_rate": 1024.0, "request_percentage": 50.5}).error_code == 0
    assert alter(b, {"user": "u", "client-id": "c"}, {"consumer_byte_rate": 2048.0}).error_code == 0
    assert alter(b, {"user": "u", "client-id": None}, {"producer_byte_rate": 10.0}).error_code == 0
    assert alter(b, {"client-id": "c"}, {"controller_mutation_rate": 2.5}).error_code == 0
    assert describe(b, [("user", 0, "u")], strict=True) == (0, [
        ((("user", "u"),), {"producer_byte_rate": 1024.0, "request_percentage": 50.5})])
    # Kafka's "specified" matches defaults too; not strict: entities with more types as well
    assert [e for e, _ in describe(b, [("user", 0, "u"), ("client-id", 2, None)])[1]] == [
        (("client-id", "<default>"), ("user", "u")), (("client-id", "c"), ("user", "u"))]
    assert len(describe(b, [("client-id", 0, "c")])[1]) == 2
    # the values survive a restart (config.dir/quotas.json)
    assert len(ClientQuotaStore(str(tmp_path / "cfg")).quotas) == 4


def test_values_are_checked_as_kafka_checks_them(tmp_path):
    b = Broker(tmp_path)
    for entity, ops, message in [
            ({"user": "u"}, {"producer_byte_rate": 1.5}, "producer_byte_rate cannot be a fractional value."),
            ({"user": "u"}, {"consumer_byte_rate": -10.0}, "Quota consumer_byte_rate must be greater than 0"),
            ({"client-id": "c"}, {"producer_ids_rate": 5.0}, "Invalid configuration key producer_ids_rate"),
            ({"user": "u"}, {"connection_creation_rate": 5.0}, "Invalid configuration key connection_creation_rate"),
            ({}, {"producer_byte_rate": 5.0}, "Invalid empty client quota entity"),
            ({"client-id": ""}, {"producer_byte_rate": 5.0}, "Empty client-id not supported")]:
        got = alter(b, entity, ops)
        assert (got.error_code, got.error_message) == (ErrorCode.INVALID_REQUEST, message)
    # removing what was never set (even an unknown key) is no error, as in Kafka
    assert alter(b, {"user": "u"}, {"no_such_quota": None}).error_code == 0
    assert describe(b, [])[1] == []


def test_describe_filters_are_refused_as_kafka_refuses_them(tmp_path):
    b = Broker(tmp_path)
    assert describe(b, [("planet", 0, "x")])[0] == ErrorCode.UNSUPPORTED_VERSION
    for components in ([("user", 0, None)], [("user", 1, "a")], [("user", 2, "a")], [("user", 7, None)],
                       [("user", 0, "a"), ("user", 0, "b")], [("user", 0, "a"), ("ip", 2, None)], [("", 0, "a")]):
        assert describe(b, components)[0] == ErrorCode.INVALID_REQUEST, components


def test_a_producer_over_its_byte_rate_is_throttled_and_muted(tmp_path):
    b = Broker(tmp_path, **{"quota.window.num": "2", "quota.window.size.seconds": "1"})
    assert alter(b, {"client-id": "test"}, {"producer_byte_rate": 1000.0}).error_code == 0
    assert produce(b, 500) == (0, 0)
    code, throttle = produce(b, 2000)  # ~2600 B in a 1 s window: 2.6x the quota
    assert code == 0 and 1000 <= throttle <= 2000  # appended anyway, as in Kafka
    assert b.mute_ms == throttle
    assert b.state.topics.get("t").partitions[0].log_end_offset == 2


def test_a_consumer_over_its_byte_rate_gets_an_empty_throttled_fetch(tmp_path):
    b = Broker(tmp_path, **{"quota.window.num": "2", "quota.window.size.seconds": "1"})
    for _ in range(4):
        produce(b, 1000)
    assert alter(b, {"user": "ANONYMOUS"}, {"consumer_byte_rate": 1500.0}).error_code == 0
    first = fetch(b)
    # a fetch is capped at what the quota allows in (samples - 1) windows: 1500 B (one batch)
    got = bytes(first.responses[0].partitions[0].records)
    assert first.throttle_time_ms == 0 and 1000 < len(got) < 2000
    second = fetch(b)
    assert second.throttle_time_ms > 0 and second.responses == [] and b.mute_ms == second.throttle_time_ms
    b.now += 5000  # the bytes of the throttled answer were taken back: after the windows, data again
    assert fetch(b).responses[0].partitions[0].records


def test_a_client_over_its_request_percentage_is_throttled_one_window_at_most(tmp_path):
    b = Broker(tmp_path, **{"quota.window.num": "2", "quota.window.size.seconds": "1"})
    produce(b, 100)
    # the time any request takes is far over a millionth of a percent of a thread
    assert alter(b, {"client-id": "test"}, {"request_percentage": 1e-6}).error_code == 0
    assert produce(b, 100) == (0, 1000)  # Kafka bounds the request quota's throttle by one window
    assert b.mute_ms == 1000
    throttled_fetch = fetch(b)
    assert throttled_fetch.throttle_time_ms == 1000 and throttled_fetch.responses == []
    assert alter(b, {"client-id": "test"}, {"request_percentage": 400.0}).error_code == 0
    assert produce(b, 100) == (0, 0) and b.mute_ms == 0


def test_altering_needs_alter_configs_and_describing_describe_configs_on_the_cluster(tmp_path):
    """Kafka's ControllerApis: AlterClientQuotas is ALTER_CONFIGS on the cluster (which implies
    DESCRIBE_CONFIGS), DescribeClientQuotas DESCRIBE_CONFIGS; describing alone allows no change."""
    from kipper.broker.acl.model import ALLOW, ALTER_CONFIGS, CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS, LITERAL, AclBinding

    b = Broker(tmp_path, **{"authorizer.class.name": "standard"})
    reader, writer = Session("PLAINTEXT", "reader"), Session("PLAINTEXT", "writer")
    reader.principal, writer.principal = "User:reader", "User:writer"
    b.state.acls.authorizer.add([AclBinding(CLUSTER, CLUSTER_NAME, LITERAL, "User:reader", "*", DESCRIBE_CONFIGS, ALLOW),
                                 AclBinding(CLUSTER, CLUSTER_NAME, LITERAL, "User:writer", "*", ALTER_CONFIGS, ALLOW)])
    body = {"entries": [{"entity": [{"entity_type": "user", "entity_name": "alice"}],
                         "ops": [{"key": "producer_byte_rate", "value": 1000.0, "remove": False}]}],
            "validate_only": False}
    assert b.call(ALTER, 1, body, reader).entries[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert b.call(ALTER, 1, body, writer).entries[0].error_code == ErrorCode.NONE
    wanted = {"components": [], "strict": False}
    assert b.call(DESCRIBE, 1, wanted, reader).error_code == ErrorCode.NONE
    assert b.call(DESCRIBE, 1, wanted, writer).error_code == ErrorCode.NONE  # (ALTER_CONFIGS implies it)
