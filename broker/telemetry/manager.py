"""Client telemetry (KIP-714): GetTelemetrySubscriptions and PushTelemetry, as Kafka's
ClientMetricsManager answers them, and what clients push kept for kipper's exporters.

Each client instance (a uuid the broker hands out) gets the union of the subscriptions that
match it: the metric prefixes, the shortest push interval, a subscription id that changes
with them. A client asking or pushing sooner than its interval is throttled
(THROTTLING_QUOTA_EXCEEDED); a push names its subscription id (UNKNOWN_SUBSCRIPTION_ID when
the subscriptions changed), a known codec and at most ``telemetry.max.bytes``. Kafka hands
the payload to a plugin; kipper decodes it (protocol/otlp.py) and keeps the latest value of
each series for /metrics and the metrics dumps, bounded by ``max_series`` over all clients,
labelled by client instance. Instances leave after max(60 s, 3 push intervals) without a
request, or when their connection closes. Synchronous, time as an argument.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import crc32c
import structlog

from kipper.broker.telemetry.subscriptions import ALL_METRICS, INTERVAL_MS_DEFAULT, Subscriptions
from kipper.protocol import compression, otlp
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

ACCEPTED_CODECS = [compression.ZSTD, compression.LZ4, compression.GZIP, compression.SNAPPY]  # Kafka's order
KNOWN_CODECS = frozenset({compression.NONE, *ACCEPTED_CODECS})
CACHE_EXPIRY_MS = 60_000  # Kafka's ClientMetricsManager DEFAULT_CACHE_EXPIRY_MS
MAX_INSTANCES = 16_384  # Kafka's CACHE_MAX_SIZE
RESERVED = (uuid.UUID(int=0), uuid.UUID(int=1))  # Uuid.ZERO_UUID, Uuid.ONE_UUID


@dataclass
class Instance:
    instance_id: uuid.UUID
    client: dict  # the match attributes (client id, software, address, port)
    connection: object
    subscription_id: int
    version: int  # Subscriptions.version it was computed at
    metrics: frozenset
    interval_ms: int
    expires_at: int
    last_get: int = 0
    last_push: int = 0
    terminating: bool = False
    last_error: ErrorCode = ErrorCode.NONE
    pushes: int = 0
    last_push_ms: int = -1
    series: dict = field(default_factory=dict)  # (metric, attributes) -> [kind, unit, value, count, sum]


class ClientTelemetry:
    def __init__(self, subscriptions: Subscriptions, *, max_bytes: int, max_series: int = 10_000):
        self.subscriptions = subscriptions
        self.max_bytes = max_bytes
        self.max_series = max_series
        self.instances: dict[uuid.UUID, Instance] = {}
        self.by_connection: dict[object, uuid.UUID] = {}
        self.counters = {"subscription_requests": 0, "pushes": 0, "throttled": 0, "unknown_subscription": 0,
                         "decode_errors": 0, "dropped_series": 0, "expired": 0}

    # --- GetTelemetrySubscriptions ------------------------------------------------------------

    def get_subscriptions(self, instance_id: uuid.UUID, client: dict, connection, now: int) -> dict:
        self.counters["subscription_requests"] += 1
        if instance_id in (None, RESERVED[0]):
            instance_id = uuid.uuid4()
            while instance_id in self.instances or instance_id in RESERVED:
                instance_id = uuid.uuid4()
        inst = self._instance(instance_id, client, connection, now)
        empty = {"throttle_time_ms": 0, "client_instance_id": RESERVED[0], "subscription_id": 0,
                 "accepted_compression_types": [], "push_interval_ms": 0, "telemetry_max_bytes": 0,
                 "delta_temporality": False, "requested_metrics": []}
        if now - max(inst.last_get, inst.last_push) < inst.interval_ms and inst.last_error not in (
                ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
            self.counters["throttled"] += 1
            return {**empty, "error_code": int(ErrorCode.THROTTLING_QUOTA_EXCEEDED)}
        inst.last_get = now
        inst.last_error = ErrorCode.NONE
        return {**empty, "error_code": 0, "client_instance_id": instance_id,
                "subscription_id": inst.subscription_id, "accepted_compression_types": list(ACCEPTED_CODECS),
                "push_interval_ms": inst.interval_ms, "telemetry_max_bytes": self.max_bytes,
                "delta_temporality": True, "requested_metrics": sorted(inst.metrics)}

    # --- PushTelemetry --------------------------------------------------------------------------

    def push(self, instance_id: uuid.UUID, subscription_id: int, terminating: bool, codec: int, payload,
             client: dict, connection, now: int) -> tuple[ErrorCode, str | None]:
        if instance_id is None or instance_id in RESERVED:
            return ErrorCode.INVALID_REQUEST, (f"Invalid request from the client [{instance_id}], "
                                               "invalid client instance id")
        inst = self._instance(instance_id, client, connection, now)
        error = self._check_push(inst, subscription_id, terminating, codec, payload, now)
        inst.terminating = terminating
        if error is not None:
            inst.last_error = error[0]
            return error
        if payload:
            try:
                data = otlp.decode_metrics_data(compression.decompress(codec, payload) if codec else bytes(payload))
            except (otlp.OtlpError, ValueError) as exc:
                self.counters["decode_errors"] += 1
                inst.last_error = ErrorCode.INVALID_RECORD
                log.warning("client_telemetry_undecodable", client_instance_id=str(instance_id), error=str(exc))
                return ErrorCode.INVALID_RECORD, None
            self._keep(inst, data, now)
        inst.last_error = ErrorCode.NONE
        self.counters["pushes"] += 1
        inst.pushes += 1
        inst.last_push_ms = now
        return ErrorCode.NONE, None

    def _check_push(self, inst: Instance, subscription_id, terminating, codec, payload, now):
        iid = inst.instance_id
        if inst.terminating:
            return ErrorCode.INVALID_REQUEST, (f"Client [{iid}] sent the previous request with state terminating "
                                               "to TRUE, can not acceptany requests after that")
        # the first push after a GetTelemetrySubscriptions is accepted whenever it comes (jitter)
        if not (inst.last_get > inst.last_push or now - inst.last_push >= inst.interval_ms) and not terminating:
            self.counters["throttled"] += 1
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED, (f"Request from the client [{iid}] arrived before "
                                                         "the next push interval time")
        inst.last_push = now
        if subscription_id != inst.subscription_id:
            self.counters["unknown_subscription"] += 1
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID, f"Unknown client subscription id for the client [{iid}]"
        if codec not in KNOWN_CODECS:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, (f"Unknown compression type [{codec}] is received in "
                                                            f"telemetry request from [{iid}]")
        if payload is not None and len(payload) > self.max_bytes:
            return ErrorCode.TELEMETRY_TOO_LARGE, (f"Telemetry request from [{iid}] is larger than the maximum "
                                                   f"allowed size [{self.max_bytes}]")
        return None

    # --- instances --------------------------------------------------------------------------------

    def _instance(self, instance_id: uuid.UUID, client: dict, connection, now: int) -> Instance:
        inst = self.instances.get(instance_id)
        if inst is None or inst.version < self.subscriptions.version:
            attributes = {**client, "client_instance_id": str(instance_id)}
            metrics, interval = self._subscribed(attributes)
            fresh = Instance(instance_id, attributes, connection, _subscription_id(metrics, interval, instance_id),
                             self.subscriptions.version, metrics, interval, 0)
            if inst is not None:  # the subscriptions changed: what it pushed stays
                fresh.series, fresh.pushes, fresh.last_push_ms = inst.series, inst.pushes, inst.last_push_ms
            elif len(self.instances) >= MAX_INSTANCES:
                self._forget(min(self.instances.values(), key=lambda i: i.expires_at).instance_id)
            inst = self.instances[instance_id] = fresh
        self.by_connection[connection] = instance_id
        inst.connection = connection
        inst.expires_at = now + max(CACHE_EXPIRY_MS, 3 * inst.interval_ms)
        return inst

    def _subscribed(self, client: dict) -> tuple[frozenset, int]:
        metrics, interval = set(), INTERVAL_MS_DEFAULT
        for sub in self.subscriptions.active.values():
            if sub.matches(client):
                metrics |= sub.metrics
                interval = min(interval, sub.interval_ms)
        if ALL_METRICS in metrics:
            metrics = {ALL_METRICS}
        return frozenset(metrics), interval

    def disconnected(self, connection) -> None:
        """Kafka forgets an instance when its connection closes."""
        instance_id = self.by_connection.pop(connection, None)
        if instance_id is not None:
            self._forget(instance_id)

    def expire(self, now: int) -> int:
        gone = [i.instance_id for i in self.instances.values() if i.expires_at <= now]
        for instance_id in gone:
            self._forget(instance_id)
        self.counters["expired"] += len(gone)
        return len(gone)

    def _forget(self, instance_id: uuid.UUID) -> None:
        inst = self.instances.pop(instance_id, None)
        if inst is not None and self.by_connection.get(inst.connection) == instance_id:
            del self.by_connection[inst.connection]

    # --- what was pushed --------------------------------------------------------------------------

    def _keep(self, inst: Instance, data: otlp.MetricsData, now: int) -> None:
        total = sum(len(i.series) for i in self.instances.values())
        for metric in data.metrics:
            for point in metric.points:
                key = (metric.name, tuple(sorted((str(k), str(v)) for k, v in point.attributes.items())))
                row = inst.series.get(key)
                if row is None:
                    if total >= self.max_series:
                        self.counters["dropped_series"] += 1
                        continue
                    total += 1
                    row = inst.series[key] = [metric.kind, metric.unit, 0.0, 0, 0.0]
                if metric.kind in (otlp.GAUGE, otlp.SUM):
                    delta = metric.kind == otlp.SUM and metric.temporality == otlp.DELTA
                    row[2] = row[2] + (point.value or 0.0) if delta else (point.value or 0.0)
                else:
                    delta = metric.temporality == otlp.DELTA
                    row[3] = row[3] + (point.count or 0) if delta else (point.count or 0)
                    row[4] = row[4] + (point.sum or 0.0) if delta else (point.sum or 0.0)

    def snapshot(self) -> dict:
        clients = []
        for inst in sorted(self.instances.values(), key=lambda i: str(i.instance_id)):
            c = inst.client
            clients.append({
                "client_instance_id": str(inst.instance_id), "client_id": c.get("client_id"),
                "client_software_name": c.get("client_software_name"),
                "client_software_version": c.get("client_software_version"),
                "subscription_id": inst.subscription_id, "pushes": inst.pushes, "last_push_ms": inst.last_push_ms,
                "metrics": [{"name": name, "attributes": dict(attrs), "kind": row[0], "unit": row[1],
                             "value": row[2], "count": row[3], "sum": row[4]}
                            for (name, attrs), row in sorted(inst.series.items())]})
        return {"instances": len(self.instances), "subscriptions": len(self.subscriptions.active),
                "series": sum(len(i.series) for i in self.instances.values()), **self.counters,
                "clients": clients}


def _subscription_id(metrics: frozenset, interval_ms: int, instance_id: uuid.UUID) -> int:
    """Kafka's: a CRC-32C of the subscribed metrics and the interval, xor the instance id's hash."""
    crc = crc32c.crc32c(("[" + ", ".join(sorted(metrics)) + "]" + str(interval_ms)).encode())
    hi, lo = instance_id.int >> 64, instance_id.int & (2**64 - 1)
    h = (hi ^ lo) & 0xFFFFFFFFFFFFFFFF
    value = (crc ^ ((h >> 32) ^ h)) & 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value
