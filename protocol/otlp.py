"""OpenTelemetry metrics (OTLP ``MetricsData``, opentelemetry/proto/metrics/v1) as KIP-714
clients push them, decoded from protobuf's wire format.

A small decoder of our own rather than ``opentelemetry-proto`` (and the ``protobuf`` runtime
under it): the broker reads a dozen fields of a schema that is stable (v1), the bytes come
from clients so every length and count is bounded here, and nothing else in the protocol
layer needs protobuf. What it reads: each metric's name, unit and kind, and its data points
(attributes, time, the value of a gauge or sum, the count and sum of a histogram or summary).
The tests check it against the official encoder (tests/unit/test_otlp.py) and real clients.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from kipper.protocol.primitives import decode_uvarint

GAUGE, SUM, HISTOGRAM, EXPONENTIAL_HISTOGRAM, SUMMARY = "gauge", "sum", "histogram", "exponential_histogram", "summary"
DELTA, CUMULATIVE = 1, 2  # AggregationTemporality
MAX_DEPTH = 8  # AnyValue nesting (arrays, kvlists) read at most this deep
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_DOUBLE = struct.Struct("<d")
_INT64 = struct.Struct("<q")
_UINT64 = struct.Struct("<Q")


class OtlpError(ValueError):
    """Bytes that are not a MetricsData message."""


@dataclass
class Point:
    attributes: dict[str, object]
    time_unix_nano: int = 0
    value: float | None = None  # gauge and sum
    count: int | None = None  # histogram and summary
    sum: float | None = None


@dataclass
class Metric:
    name: str
    unit: str = ""
    kind: str = ""
    temporality: int = 0  # sum and histogram: DELTA or CUMULATIVE
    monotonic: bool = False
    points: list[Point] = field(default_factory=list)


@dataclass
class MetricsData:
    resource: dict[str, object] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)


# --- the wire format -------------------------------------------------------------------------

def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    try:
        value, pos = decode_uvarint(buf, pos)
    except (IndexError, ValueError):
        raise OtlpError("truncated varint") from None
    if pos > end:
        raise OtlpError("a varint runs past its message")
    return value, pos


def _fields(buf, pos: int, end: int):
    """(field number, wire type, value) of each field in buf[pos:end]: an int for varints and
    fixed fields, a (start, end) span for length-delimited ones."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
        elif wire == _I64:
            if pos + 8 > end:
                raise OtlpError("truncated 64-bit field")
            value, pos = _UINT64.unpack_from(buf, pos)[0], pos + 8
        elif wire == _I32:
            if pos + 4 > end:
                raise OtlpError("truncated 32-bit field")
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        elif wire == _LEN:
            n, pos = _varint(buf, pos, end)
            if pos + n > end:
                raise OtlpError("a length-delimited field runs past its message")
            value, pos = (pos, pos + n), pos + n
        else:
            raise OtlpError(f"wire type {wire} (groups are not used by OTLP)")
        yield number, wire, value


def _text(buf, span) -> str:
    return bytes(buf[span[0]:span[1]]).decode("utf-8", "replace")


def _double(bits: int) -> float:
    return _DOUBLE.unpack(_UINT64.pack(bits))[0]


def _signed(bits: int) -> int:
    return _INT64.unpack(_UINT64.pack(bits))[0]


# --- the messages ----------------------------------------------------------------------------

def _any_value(buf, span, depth: int) -> object:
    if depth > MAX_DEPTH:
        raise OtlpError("attribute values nested too deep")
    for number, wire, value in _fields(buf, *span):
        if number == 1 and wire == _LEN:
            return _text(buf, value)
        if number == 2 and wire == _VARINT:
            return bool(value)
        if number == 3 and wire == _VARINT:
            return _signed(value)
        if number == 4 and wire == _I64:
            return _double(value)
        if number == 5 and wire == _LEN:  # ArrayValue { repeated AnyValue values = 1 }
            return [_any_value(buf, v, depth + 1) for n, w, v in _fields(buf, *value) if n == 1 and w == _LEN]
        if number == 6 and wire == _LEN:  # KeyValueList { repeated KeyValue values = 1 }
            return dict(_key_value(buf, v, depth + 1) for n, w, v in _fields(buf, *value) if n == 1 and w == _LEN)
        if number == 7 and wire == _LEN:
            return bytes(buf[value[0]:value[1]]).hex()
    return None


def _key_value(buf, span, depth: int = 0) -> tuple[str, object]:
    key, value = "", None
    for number, wire, v in _fields(buf, *span):
        if number == 1 and wire == _LEN:
            key = _text(buf, v)
        elif number == 2 and wire == _LEN:
            value = _any_value(buf, v, depth)
    return key, value


def _number_point(buf, span) -> Point:
    p = Point({})
    for number, wire, v in _fields(buf, *span):
        if number == 7 and wire == _LEN:
            k, val = _key_value(buf, v)
            p.attributes[k] = val
        elif number == 3 and wire == _I64:
            p.time_unix_nano = v
        elif number == 4 and wire == _I64:
            p.value = _double(v)
        elif number == 6 and wire == _I64:
            p.value = float(_signed(v))
    return p


def _counted_point(buf, span, attributes_field: int) -> Point:
    """A histogram's (attributes 9) or a summary's (attributes 7) point: its count and sum."""
    p = Point({})
    for number, wire, v in _fields(buf, *span):
        if number == attributes_field and wire == _LEN:
            k, val = _key_value(buf, v)
            p.attributes[k] = val
        elif number == 3 and wire == _I64:
            p.time_unix_nano = v
        elif number == 4 and wire in (_I64, _VARINT):
            p.count = v
        elif number == 5 and wire == _I64:
            p.sum = _double(v)
    return p


_KINDS = {5: GAUGE, 7: SUM, 9: HISTOGRAM, 10: EXPONENTIAL_HISTOGRAM, 11: SUMMARY}


def _metric(buf, span) -> Metric:
    m = Metric("")
    for number, wire, v in _fields(buf, *span):
        if number == 1 and wire == _LEN:
            m.name = _text(buf, v)
        elif number == 3 and wire == _LEN:
            m.unit = _text(buf, v)
        elif number in _KINDS and wire == _LEN:
            m.kind = _KINDS[number]
            for n, w, x in _fields(buf, *v):
                if n == 1 and w == _LEN:
                    if m.kind in (GAUGE, SUM):
                        m.points.append(_number_point(buf, x))
                    elif m.kind == SUMMARY:
                        m.points.append(_counted_point(buf, x, 7))
                    else:  # histogram and exponential histogram: attributes 9 and 1
                        m.points.append(_counted_point(buf, x, 9 if m.kind == HISTOGRAM else 1))
                elif n == 2 and w == _VARINT:
                    m.temporality = x
                elif n == 3 and w == _VARINT:
                    m.monotonic = bool(x)
    return m


def decode_metrics_data(data: bytes, *, max_metrics: int = 100_000) -> MetricsData:
    """A MetricsData message; OtlpError for bytes that are not one (or hold more than
    ``max_metrics`` metrics)."""
    buf = memoryview(data)
    out = MetricsData()
    for number, wire, rm in _fields(buf, 0, len(buf)):
        if number != 1 or wire != _LEN:
            continue
        for n, w, v in _fields(buf, *rm):
            if n == 1 and w == _LEN:  # Resource { repeated KeyValue attributes = 1 }
                for a, aw, kv in _fields(buf, *v):
                    if a == 1 and aw == _LEN:
                        k, val = _key_value(buf, kv)
                        out.resource[k] = val
            elif n == 2 and w == _LEN:  # ScopeMetrics { scope = 1; repeated Metric metrics = 2 }
                for s, sw, mv in _fields(buf, *v):
                    if s == 2 and sw == _LEN:
                        out.metrics.append(_metric(buf, mv))
                        if len(out.metrics) > max_metrics:
                            raise OtlpError(f"more than {max_metrics} metrics in one push")
    return out
