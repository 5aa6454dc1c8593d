"""protocol/otlp.py reads what the official OpenTelemetry encoder (opentelemetry-proto)
writes: every kind of metric, attribute values of every type, and refuses bytes that are
not a MetricsData message with OtlpError, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kipper.protocol import otlp
from tests.support import requires

# the official encoder, the dev extra's (the broker itself does not use it)
pb = requires.module("opentelemetry.proto.metrics.v1.metrics_pb2", "dev")
common = requires.module("opentelemetry.proto.common.v1.common_pb2", "dev")


def _attr(key, value):
    kv = common.KeyValue(key=key)
    if isinstance(value, bool):
        kv.value.bool_value = value
    elif isinstance(value, int):
        kv.value.int_value = value
    elif isinstance(value, float):
        kv.value.double_value = value
    else:
        kv.value.string_value = value
    return kv


def _payload() -> bytes:
    data = pb.MetricsData()
    rm = data.resource_metrics.add()
    rm.resource.attributes.append(_attr("client_id", "producer-1"))
    sm = rm.scope_metrics.add()
    g = sm.metrics.add(name="org.apache.kafka.producer.record.queue.time.avg", unit="ms")
    g.gauge.data_points.add(as_double=2.5, time_unix_nano=1_700_000_000_000_000_000,
                            attributes=[_attr("topic", "t"), _attr("partition", 3)])
    s = sm.metrics.add(name="org.apache.kafka.producer.record.send.total")
    s.sum.aggregation_temporality = pb.AGGREGATION_TEMPORALITY_DELTA
    s.sum.is_monotonic = True
    s.sum.data_points.add(as_int=42, attributes=[_attr("node_id", "1"), _attr("ok", True), _attr("ratio", 0.5)])
    h = sm.metrics.add(name="latency")
    h.histogram.aggregation_temporality = pb.AGGREGATION_TEMPORALITY_CUMULATIVE
    h.histogram.data_points.add(count=7, sum=70.0, bucket_counts=[1, 6], explicit_bounds=[10.0],
                                attributes=[_attr("k", "v")])
    q = sm.metrics.add(name="summary")
    q.summary.data_points.add(count=3, sum=9.0)
    return data.SerializeToString()


def test_every_kind_of_metric_as_the_official_encoder_writes_it():
    got = otlp.decode_metrics_data(_payload())
    assert got.resource == {"client_id": "producer-1"}
    gauge, total, hist, summary = got.metrics
    assert (gauge.name, gauge.unit, gauge.kind) == ("org.apache.kafka.producer.record.queue.time.avg", "ms", otlp.GAUGE)
    assert gauge.points[0].value == 2.5 and gauge.points[0].attributes == {"topic": "t", "partition": 3}
    assert gauge.points[0].time_unix_nano == 1_700_000_000_000_000_000
    assert (total.kind, total.temporality, total.monotonic) == (otlp.SUM, otlp.DELTA, True)
    assert total.points[0].value == 42.0 and total.points[0].attributes == {"node_id": "1", "ok": True, "ratio": 0.5}
    assert (hist.kind, hist.temporality, hist.points[0].count, hist.points[0].sum) == (otlp.HISTOGRAM, otlp.CUMULATIVE, 7, 70.0)
    assert hist.points[0].attributes == {"k": "v"}
    assert (summary.kind, summary.points[0].count, summary.points[0].sum) == (otlp.SUMMARY, 3, 9.0)


@pytest.mark.parametrize("cut", range(1, 40))
def test_a_truncated_payload_is_an_otlp_error(cut):
    data = _payload()
    try:
        otlp.decode_metrics_data(data[:-cut])
    except otlp.OtlpError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise_anything_but_otlp_error(data):
    try:
        otlp.decode_metrics_data(data)
    except otlp.OtlpError:
        pass


def test_too_many_metrics_are_refused():
    data = pb.MetricsData()
    sm = data.resource_metrics.add().scope_metrics.add()
    for i in range(5):
        sm.metrics.add(name=f"m{i}").gauge.data_points.add(as_double=1.0)
    with pytest.raises(otlp.OtlpError, match="more than 3"):
        otlp.decode_metrics_data(data.SerializeToString(), max_metrics=3)
