"""Client telemetry (KIP-714) under a manual clock: client-metrics subscriptions as Kafka
validates them, GetTelemetrySubscriptions and PushTelemetry as Kafka's ClientMetricsManager
answers them, and what clients push kept (compressed as they send it) for /metrics."""

from __future__ import annotations

import uuid

import pytest

from kipper.broker.client_metrics_export import client_metric_families
from kipper.broker.storage.metadata import MetadataStore
from kipper.broker.telemetry import ClientTelemetry, Invalid, Subscriptions, validate
from kipper.protocol import compression
from kipper.protocol.errors import ErrorCode as E
from tests.support import requires
from tests.support.inproc import InProcessBroker

pb = requires.module("opentelemetry.proto.metrics.v1.metrics_pb2", "dev")
common = requires.module("opentelemetry.proto.common.v1.common_pb2", "dev")

ZERO = uuid.UUID(int=0)
T0 = 1_700_000_000_000  # the broker's clock: epoch milliseconds
CLIENT = {"client_id": "producer-1", "client_software_name": "apache-kafka-java", "client_software_version": "4.4.0",
          "client_source_address": "127.0.0.1", "client_source_port": "5555"}


def payload(value=1.0, name="org.apache.kafka.producer.record.send.total", delta=True, topic="t") -> bytes:
    data = pb.MetricsData()
    m = data.resource_metrics.add().scope_metrics.add().metrics.add(name=name)
    m.sum.aggregation_temporality = pb.AGGREGATION_TEMPORALITY_DELTA if delta else pb.AGGREGATION_TEMPORALITY_CUMULATIVE
    m.sum.is_monotonic = True
    m.sum.data_points.add(as_double=value, attributes=[common.KeyValue(key="topic", value=common.AnyValue(string_value=topic))])
    return data.SerializeToString()


def engine(configs=None, **kw) -> ClientTelemetry:
    subs = Subscriptions()
    for name, c in (configs or {"all": {"metrics": "*", "interval.ms": "1000"}}).items():
        subs.replace(name, c)
    return ClientTelemetry(subs, max_bytes=kw.pop("max_bytes", 1 << 20), **kw)


def subscribe(t, now=0, client=CLIENT, conn="c1"):
    return t.get_subscriptions(ZERO, client, conn, T0 + now)


# --- subscriptions -------------------------------------------------------------------------

@pytest.mark.parametrize("configs, code, message", [
    ({"nope": "1"}, E.INVALID_REQUEST, "Unknown client metrics configuration: nope"),
    ({"interval.ms": "50"}, E.INVALID_REQUEST, "Invalid value 50 for interval.ms, interval must be between 100 and "
                                               "3600000 (1 hour)"),
    ({"interval.ms": "abc"}, E.INVALID_CONFIG, "Invalid value abc for configuration interval.ms: Not a number of type INT"),
    ({"match": "client_id"}, E.INVALID_CONFIG, "Illegal client matching pattern: client_id"),
    ({"match": "who=x"}, E.INVALID_CONFIG, "Illegal client matching pattern: who=x"),
    ({"match": "client_id=("}, E.INVALID_CONFIG, "Illegal client matching pattern: client_id=("),
    # Java's split drops the trailing empty value: no pattern (found by the tool generator)
    ({"match": "client_id="}, E.INVALID_CONFIG, "Illegal client matching pattern: client_id="),
    ({"match": "client_id=x,client_software_name=="}, E.INVALID_CONFIG,
     "Illegal client matching pattern: client_software_name=="),
    ({"metrics": "a,a"}, E.INVALID_CONFIG, "Configuration 'metrics' values must not be duplicated."),
])
def test_subscriptions_are_validated_as_kafka_validates_them(configs, code, message):
    with pytest.raises(Invalid) as err:
        validate("sub", configs)
    assert (err.value.code, str(err.value)) == (code, message)


def test_subscriptions_are_kept_in_the_metadata_store(tmp_path):
    subs = Subscriptions(MetadataStore(tmp_path))
    subs.replace("sub", {"metrics": "org.apache.kafka.", "interval.ms": "2000"})
    again = Subscriptions(MetadataStore(tmp_path).load())
    assert again.active["sub"].interval_ms == 2000 and again.names() == ["sub"]
    again.replace("sub", {})
    assert Subscriptions(MetadataStore(tmp_path).load()).names() == []


# --- GetTelemetrySubscriptions ------------------------------------------------------------

def test_a_new_client_gets_an_instance_id_and_the_matching_subscriptions():
    t = engine({"producers": {"metrics": "org.apache.kafka.producer.", "interval.ms": "2000",
                              "match": "client_software_name=apache-kafka-java,client_id=producer-.*"},
                "others": {"metrics": "org.apache.kafka.consumer.", "match": "client_id=consumer-.*"},
                "everyone": {"metrics": "org.apache.kafka.client.", "interval.ms": "5000"}})
    r = subscribe(t)
    assert r["error_code"] == 0 and r["client_instance_id"] != ZERO
    assert r["requested_metrics"] == ["org.apache.kafka.client.", "org.apache.kafka.producer."]
    assert (r["push_interval_ms"], r["accepted_compression_types"], r["delta_temporality"]) == (2000, [4, 3, 1, 2], True)


def test_asking_again_before_the_interval_is_throttled_unless_the_subscriptions_changed():
    t = engine()
    r = subscribe(t, now=0)
    iid = r["client_instance_id"]
    assert t.get_subscriptions(iid, CLIENT, "c1", T0 + 500)["error_code"] == E.THROTTLING_QUOTA_EXCEEDED
    assert t.get_subscriptions(iid, CLIENT, "c1", T0 + 1000)["error_code"] == 0
    t.subscriptions.replace("all", {"metrics": "*", "interval.ms": "100"})
    again = t.get_subscriptions(iid, CLIENT, "c1", T0 + 1200)
    assert again["error_code"] == 0 and again["subscription_id"] != r["subscription_id"]


# --- PushTelemetry -------------------------------------------------------------------------

@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4,
                                   compression.ZSTD])
def test_a_push_is_decoded_whatever_the_codec(codec):
    t = engine()
    r = subscribe(t)
    data = payload(3.0)
    body = compression.compress(codec, data) if codec else data
    assert t.push(r["client_instance_id"], r["subscription_id"], False, codec, body, CLIENT, "c1", T0 + 10) == (E.NONE, None)
    [client] = t.snapshot()["clients"]
    [metric] = client["metrics"]
    assert (metric["name"], metric["attributes"], metric["value"]) == (
        "org.apache.kafka.producer.record.send.total", {"topic": "t"}, 3.0)
    assert client["client_id"] == "producer-1" and client["client_software_name"] == "apache-kafka-java"


def test_delta_sums_add_up_and_cumulative_ones_replace():
    t = engine()
    r = subscribe(t)
    iid, sid = r["client_instance_id"], r["subscription_id"]
    t.push(iid, sid, False, 0, payload(2.0), CLIENT, "c1", T0 + 10)
    t.push(iid, sid, False, 0, payload(5.0), CLIENT, "c1", T0 + 1010)
    t.push(iid, sid, False, 0, payload(7.0, name="cumulative", delta=False), CLIENT, "c1", T0 + 2010)
    t.push(iid, sid, False, 0, payload(9.0, name="cumulative", delta=False), CLIENT, "c1", T0 + 3010)
    values = {m["name"]: m["value"] for m in t.snapshot()["clients"][0]["metrics"]}
    assert values == {"org.apache.kafka.producer.record.send.total": 7.0, "cumulative": 9.0}


@pytest.mark.parametrize("change, code", [
    ({"subscription_id": 12345}, E.UNKNOWN_SUBSCRIPTION_ID),
    ({"codec": 9}, E.UNSUPPORTED_COMPRESSION_TYPE),
    ({"payload": b"x" * 101}, E.TELEMETRY_TOO_LARGE),
    ({"payload": b"\xff\xff\xff"}, E.INVALID_RECORD),
    ({"instance_id": ZERO}, E.INVALID_REQUEST),
])
def test_a_push_kafka_refuses_is_refused_with_its_error(change, code):
    t = engine(max_bytes=100)
    r = subscribe(t)
    args = {"instance_id": r["client_instance_id"], "subscription_id": r["subscription_id"], "codec": 0,
            "payload": payload(), **change}
    error, _ = t.push(args["instance_id"], args["subscription_id"], False, args["codec"], args["payload"], CLIENT, "c1", T0 + 10)
    assert error == code
    assert t.snapshot()["clients"][0]["metrics"] == []


def test_a_second_push_within_the_interval_is_throttled_and_nothing_after_terminating():
    t = engine()
    r = subscribe(t)
    iid, sid = r["client_instance_id"], r["subscription_id"]
    assert t.push(iid, sid, False, 0, payload(), CLIENT, "c1", T0 + 10)[0] == E.NONE  # right after the get
    assert t.push(iid, sid, False, 0, payload(), CLIENT, "c1", T0 + 500)[0] == E.THROTTLING_QUOTA_EXCEEDED
    assert t.push(iid, sid, True, 0, payload(), CLIENT, "c1", T0 + 600)[0] == E.NONE  # terminating: not throttled
    assert t.push(iid, sid, False, 0, payload(), CLIENT, "c1", T0 + 5000)[0] == E.INVALID_REQUEST


def test_series_are_bounded_and_what_comes_past_is_counted():
    t = engine(max_series=2)
    r = subscribe(t)
    for i, topic in enumerate("abc"):
        t.push(r["client_instance_id"], r["subscription_id"], False, 0, payload(topic=topic), CLIENT, "c1", T0 + 1000 * i)
    snap = t.snapshot()
    assert (snap["series"], snap["dropped_series"]) == (2, 1)


def test_instances_go_when_their_connection_closes_or_they_go_quiet():
    t = engine()
    subscribe(t, conn="c1")
    subscribe(t, conn="c2")
    t.disconnected("c1")
    assert t.snapshot()["instances"] == 1
    assert t.expire(T0 + 59_000) == 0 and t.expire(T0 + 60_000) == 1  # max(60 s, 3 x 1 s)


def test_pushed_metrics_on_prometheus_labelled_by_client_instance():
    t = engine()
    r = subscribe(t)
    t.push(r["client_instance_id"], r["subscription_id"], False, 0, payload(4.0), CLIENT, "c1", T0 + 10)
    families = {f.name: f for f in client_metric_families(t.snapshot())}
    [sample] = families["org_apache_kafka_producer_record_send_total"].samples
    assert sample.value == 4.0 and sample.labels == {
        "topic": "t", "client_instance_id": str(r["client_instance_id"]), "client_id": "producer-1",
        "client_software_name": "apache-kafka-java", "client_software_version": "4.4.0"}
    assert families["kafka_server_client_metrics_instance_count"].samples[0].value == 1


# --- a whole broker, real frames ---------------------------------------------------------------

def test_the_apis_are_served_only_when_the_broker_exports_metrics():
    def keys(b):
        resp = b.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        return {a.api_key for a in resp.api_keys}
    assert {71, 72} <= keys(InProcessBroker(**{"metrics.http.listener": "http://127.0.0.1:0"}))
    assert not {71, 72} & keys(InProcessBroker())
    assert 74 in keys(InProcessBroker())


def test_kafka_client_metrics_resources_through_the_config_apis():
    b = InProcessBroker(**{"metrics.http.listener": "http://127.0.0.1:0"})
    alter = b.call(44, 1, {"validate_only": False, "resources": [{"resource_type": 16, "resource_name": "sub", "configs": [
        {"name": "metrics", "config_operation": 0, "value": "org.apache.kafka.producer."},
        {"name": "interval.ms", "config_operation": 0, "value": "1000"}]}]})
    assert alter.responses[0].error_code == 0
    described = b.call(32, 4, {"resources": [{"resource_type": 16, "resource_name": "sub", "configuration_keys": None}],
                               "include_synonyms": False, "include_documentation": False}).results[0]
    rows = {c.name: (c.value, c.config_source) for c in described.configs}
    assert rows == {"metrics": ("org.apache.kafka.producer.", 7), "interval.ms": ("1000", 7), "match": ("", 5)}
    listed = b.call(74, 0, {}).config_resources
    assert [(r.resource_name) for r in listed] == ["sub"]
    bad = b.call(44, 1, {"validate_only": False, "resources": [{"resource_type": 16, "resource_name": "sub", "configs": [
        {"name": "interval.ms", "config_operation": 0, "value": "5"}]}]}).responses[0]
    assert bad.error_code == E.INVALID_REQUEST
    gone = b.call(44, 1, {"validate_only": False, "resources": [{"resource_type": 16, "resource_name": "sub", "configs": [
        {"name": "metrics", "config_operation": 1, "value": None}, {"name": "interval.ms", "config_operation": 1, "value": None}]}]})
    assert gone.responses[0].error_code == 0 and b.call(74, 1, {"resource_types": [16]}).config_resources == []


def test_what_clients_push_is_in_the_metrics_dumps_line():
    b = InProcessBroker(**{"metrics.http.listener": "http://127.0.0.1:0"})
    b.call(44, 1, {"validate_only": False, "resources": [{"resource_type": 16, "resource_name": "all", "configs": [
        {"name": "metrics", "config_operation": 0, "value": "*"}]}]})
    got = b.call(71, 0, {"client_instance_id": ZERO})
    assert b.call(72, 0, {"client_instance_id": got.client_instance_id, "subscription_id": got.subscription_id,
                          "terminating": False, "compression_type": 0, "metrics": payload(6.0)}).error_code == 0
    line = b.state.metrics.take_interval()
    [client] = line["client_telemetry"]["clients"]
    assert client["client_instance_id"] == str(got.client_instance_id) and client["metrics"][0]["value"] == 6.0
    assert line["api_versions"]["PushTelemetry"] == {"0": 1}
    assert line["features"]["finalized"]["transaction.version"] == 2
