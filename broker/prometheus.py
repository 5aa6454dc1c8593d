"""Prometheus exposition of the broker's metrics: /metrics, /healthz, /readyz.

``metrics.http.listener`` starts ``MetricsHttpServer``: a small threading HTTP server in
a daemon thread (``broker/http_listener.py``, shared with the Schema Registry). A scrape asks the event loop for one snapshot (``Metrics.cumulative``
plus the providers: dict copies, run on the loop because the engines live there) and
renders it in its own thread with prometheus-client, so the loop never waits on a socket
or on text rendering. Names follow what Kafka's JMX exporter makes of Kafka's MBeans
(``kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec`` ->
``kafka_server_brokertopicmetrics_bytesin_total``); docs/METRICS.md lists them.
"""

from __future__ import annotations

import concurrent.futures
from http.server import BaseHTTPRequestHandler
from typing import Callable

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from kipper.broker.client_metrics_export import client_metric_families
from kipper.broker.http_listener import ThreadedListener, on_loop  # noqa: F401  (on_loop: public here too)
from kipper.broker.metrics_dump import normalize_quotas, normalize_share
from kipper.protocol.histogram import BUCKET_BOUNDS

log = structlog.get_logger(__name__)

SNAPSHOT_TIMEOUT_S = 5.0
HEALTH_TIMEOUT_S = 2.0
# Upper bounds (seconds) of the request-latency histogram; kipper's finer log-linear
# buckets are summed into these (a latency is counted at the first bound at or above its
# fine bucket's upper bound, so a count under `le` is never a latency above it).
LATENCY_BUCKETS_S = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                     0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def broker_snapshot(engines) -> dict:
    """Everything /metrics shows, taken on the event loop (``engines``: the broker's
    Engines of the moment, broker/composition.py)."""
    snap = engines.metrics.cumulative()
    share = normalize_share(snap.get("share"))
    for row in share["partitions"]:
        partition = engines.topics.partition(row.get("topic"), row.get("partition"))
        row["high_watermark"] = partition.high_watermark if partition is not None else None
    snap["share"] = share
    snap["quotas"] = normalize_quotas(snap.get("quotas"))
    return snap


def _coarse(counts: list[int]) -> list[tuple[str, float]]:
    """Cumulative Prometheus buckets from a LatencyHistogram's counts."""
    per_bound = [0] * len(LATENCY_BUCKETS_S)
    for i, n in enumerate(counts):
        if not n or i >= len(BUCKET_BOUNDS):
            continue
        seconds = BUCKET_BOUNDS[i] / 1e6
        for j, le in enumerate(LATENCY_BUCKETS_S):
            if seconds <= le:
                per_bound[j] += n
                break
    out, running = [], 0
    for le, n in zip(LATENCY_BUCKETS_S, per_bound):
        running += n
        out.append((repr(le), running))
    out.append(("+Inf", sum(counts)))
    return out


def families(snap: dict) -> list:
    """The Prometheus metric families of one snapshot (pure: unit-tested without sockets)."""
    out = []
    requests = CounterMetricFamily("kafka_network_requestmetrics_requests",
                                   "Requests answered, per API and version (Kafka: RequestMetrics RequestsPerSec).",
                                   labels=["request", "version"])
    latency = HistogramMetricFamily("kafka_network_requestmetrics_totaltime_seconds",
                                    "Time from a request's arrival to its answer being encoded, per API "
                                    "(Kafka: RequestMetrics TotalTimeMs).", labels=["request"])
    for name, counts in sorted(snap["api_versions"].items()):
        for version, n in sorted(counts.items(), key=lambda kv: int(kv[0])):
            requests.add_metric([name, version], n)
    for name, h in sorted(snap["apis"].items()):
        latency.add_metric([name], _coarse(h.counts), sum_value=h.sum_us / 1e6)
    out += [requests, latency]
    rejected = CounterMetricFamily("kafka_network_requestmetrics_rejected_frames",
                                   "Frames refused before dispatch (oversized, unparsable), by reason.",
                                   labels=["reason"])
    for reason, n in sorted(snap["rejected"].items()):
        rejected.add_metric([reason], n)
    out.append(rejected)
    out += _topic_families(snap["partitions"])
    totals = snap["totals"]
    out += [
        GaugeMetricFamily("kafka_server_socket_server_metrics_connection_count",
                          "Client connections open now.", value=snap["connections_open"]),
        CounterMetricFamily("kafka_server_socket_server_metrics_connection_creation",
                            "Connections accepted.", value=totals["connections_accepted"]),
        CounterMetricFamily("kafka_server_socket_server_metrics_connection_close",
                            "Connections closed.", value=totals["connections_closed"]),
    ]
    out += _producer_state_families(snap.get("producer_state") or {})
    out += _transaction_families(snap.get("transactions") or {})
    out += _share_families(snap.get("share_groups") or {}, snap["share"]["partitions"])
    out += _quota_families(snap["quotas"]["users"])
    out += _cleaner_families(snap.get("cleaner") or {})
    out += _authorizer_families(snap.get("authorizer") or {})
    out += client_metric_families(snap.get("client_telemetry") or {})
    refused = CounterMetricFamily("kafka_server_brokertopicmetrics_refused_batches",
                                  "Produce batches refused by the checks before the append, by Kafka error.",
                                  labels=["error"])
    for error, n in sorted(((snap.get("refused_batches") or {}).get("by_error") or {}).items()):
        refused.add_metric([error], n)
    out.append(refused)
    auth = (snap.get("security") or {}).get("authentications") or {}
    out += [
        CounterMetricFamily("kafka_server_socket_server_metrics_successful_authentication",
                            "SASL logins that succeeded.", value=auth.get("authenticated", 0)),
        CounterMetricFamily("kafka_server_socket_server_metrics_failed_authentication",
                            "SASL logins that failed.", value=auth.get("failed", 0)),
    ]
    return out


def _topic_families(partitions: dict) -> list:
    per_topic: dict[str, dict[str, int]] = {}
    for (topic, _), row in partitions.items():
        t = per_topic.setdefault(topic, dict.fromkeys(row, 0))
        for k, v in row.items():
            t[k] += v
    specs = (("bytesin", "bytes_in", "Record-batch bytes appended by Produce (Kafka: BytesInPerSec)."),
             ("bytesout", "bytes_out", "Record-batch bytes returned by Fetch (Kafka: BytesOutPerSec)."),
             ("messagesin", "records_in", "Records appended by Produce (Kafka: MessagesInPerSec)."),
             ("messagesout", "records_out", "Records returned by Fetch plus records acquired through "
                                            "ShareFetch (kipper's; Kafka counts no MessagesOut)."))
    out = []
    for name, key, doc in specs:
        family = CounterMetricFamily(f"kafka_server_brokertopicmetrics_{name}", doc, labels=["topic"])
        for topic, row in sorted(per_topic.items()):
            family.add_metric([topic], row[key])
        out.append(family)
    return out


def _producer_state_families(ps: dict) -> list:
    out = [GaugeMetricFamily("kafka_server_replicamanager_produceridcount",
                             "Idempotent-producer state entries over all partitions (Kafka: "
                             "ReplicaManager ProducerIdCount, KIP-847).", value=ps.get("entries", 0)),
           GaugeMetricFamily("kafka_server_producerstate_bytes",
                             "Estimated memory of the producer-state entries.", value=ps.get("bytes", 0))]
    for key, doc in (("duplicates", "Duplicate batches answered without a second append."),
                     ("duplicate_sequence_errors", "DUPLICATE_SEQUENCE_NUMBER answers (seed 000)."),
                     ("out_of_order", "OUT_OF_ORDER_SEQUENCE_NUMBER answers."),
                     ("fencings", "Producers fenced by a newer epoch."),
                     ("expired", "Entries dropped by producer.id.expiration.ms.")):
        out.append(CounterMetricFamily(f"kafka_server_producerstate_{key}", doc, value=ps.get(key, 0)))
    return out


def _transaction_families(txn: dict) -> list:
    prefix = "kafka_server_transactioncoordinator"
    states = GaugeMetricFamily(f"{prefix}_transactional_ids", "Transactional ids per state.",
                               labels=["state"])
    for state, n in sorted((txn.get("states") or {}).items()):
        states.add_metric([state], n)
    out = [states,
           GaugeMetricFamily(f"{prefix}_open_partition_transactions",
                             "Open transactions summed over partitions (what holds LSOs back).",
                             value=txn.get("open_in_partitions", 0))]
    for key, doc in (("commits", "Transactions committed."), ("aborts", "Transactions aborted."),
                     ("timed_out", "Transactions aborted by their timeout."),
                     ("fenced", "Producers fenced by a newer epoch of their transactional id."),
                     ("expired", "Transactional ids forgotten after transactional.id.expiration.ms.")):
        out.append(CounterMetricFamily(f"{prefix}_{key}", doc, value=txn.get(key, 0)))
    return out


def _share_families(groups: dict, partitions: list[dict]) -> list:
    labels = ["group", "topic", "partition"]
    in_flight = GaugeMetricFamily("kafka_server_sharepartitionmetrics_inflightmessagecount",
                                  "Offsets between SPSO and SPEO (KIP-1103 InFlightMessageCount).",
                                  labels=labels)
    lag = GaugeMetricFamily("kafka_server_sharepartitionmetrics_lag",
                            "Offsets up to the high watermark not yet acknowledged or archived "
                            "(share-partition lag, KIP-1226); counted in offsets like Kafka's "
                            "consumer lag, so control records count too.", labels=labels)
    records = GaugeMetricFamily("kafka_server_sharepartitionmetrics_inflightrecords",
                                "Records in the window between SPSO and SPEO: what "
                                "share.partition.max.record.locks bounds (kipper).", labels=labels)
    cap = GaugeMetricFamily("kafka_server_sharepartitionmetrics_maxrecordlocks",
                            "The share-partition's share.partition.max.record.locks (kipper).",
                            labels=labels)
    expiries = CounterMetricFamily("kafka_server_sharepartitionmetrics_acquisitionlocktimeout",
                                   "Records whose acquisition lock expired since the share-partition "
                                   "was loaded (KIP-1103 AcquisitionLockTimeoutPerSec).", labels=labels)
    for row in partitions:
        key = [str(row.get("group")), str(row.get("topic")), str(row.get("partition"))]
        in_flight.add_metric(key, row.get("in_flight", 0))
        if row.get("max_record_locks") is not None:
            records.add_metric(key, row.get("in_flight_records", 0))
            cap.add_metric(key, row["max_record_locks"])
        expiries.add_metric(key, row.get("lock_expiries", 0))
        hwm = row.get("high_watermark")
        if hwm is not None:
            done = row.get("acknowledged", 0) + row.get("archived", 0)
            lag.add_metric(key, max(hwm - row.get("spso", hwm) - done, 0))
    count = GaugeMetricFamily("kafka_server_group_coordinator_metrics_group_count",
                              "Groups, per protocol (KIP-932 share-group-count).", labels=["protocol"])
    count.add_metric(["share"], groups.get("groups", 0))
    return [in_flight, records, cap, lag, expiries, count,
            GaugeMetricFamily("kafka_server_share_group_members", "Members of share groups.",
                              value=groups.get("members", 0)),
            GaugeMetricFamily("kafka_server_share_group_share_sessions", "Share sessions open.",
                              value=groups.get("share_sessions", 0))]


def _quota_families(users: list[dict]) -> list:
    """KIP-936's ProducerIds group (rate, tokens, throttle-time), tagged by user."""
    rate = GaugeMetricFamily("kafka_server_producerids_rate",
                             "New producer ids per second (KIP-936 ProducerIds rate).", labels=["user"])
    tokens = GaugeMetricFamily("kafka_server_producerids_tokens",
                               "Tokens left in the user's producer-id bucket (KIP-936 ProducerIds tokens).",
                               labels=["user"])
    throttle = GaugeMetricFamily("kafka_server_producerids_throttle_time",
                                 "Average throttle time given to the user, ms (KIP-936 ProducerIds "
                                 "throttle-time).", labels=["user"])
    admitted = CounterMetricFamily("kafka_server_producerids_admitted",
                                   "New producer ids admitted.", labels=["user"])
    throttled = CounterMetricFamily("kafka_server_producerids_throttled",
                                    "Produce requests throttled by the producer-id quota.", labels=["user"])
    for row in users:
        user = [str(row.get("user"))]
        for family, key in ((rate, "producer_id_rate"), (tokens, "tokens"), (throttle, "throttle_time_ms"),
                            (admitted, "admitted"), (throttled, "throttled")):
            if row.get(key) is not None:
                family.add_metric(user, row[key])
    return [rate, tokens, throttle, admitted, throttled]


def _cleaner_families(cleaner: dict) -> list:
    """The log cleaner's totals and each compacted partition's dirty ratio (Kafka:
    LogCleanerManager max-dirty-percent is the largest of them)."""
    out = [CounterMetricFamily(f"kafka_log_logcleaner_{key}", help_text, value=cleaner.get(key, 0))
           for key, help_text in (("runs", "Cleaning passes completed."),
                                  ("bytes_read", "Bytes the cleaning passes read."),
                                  ("bytes_written", "Bytes the cleaning passes wrote back."),
                                  ("records_removed", "Records the cleaning passes removed."))]
    dirty = GaugeMetricFamily("kafka_log_logcleanermanager_dirty_ratio",
                              "Share of a compacted partition's inactive segments not cleaned yet.",
                              labels=["topic", "partition"])
    for row in cleaner.get("partitions", ()):
        dirty.add_metric([row["topic"], str(row["partition"])], row["dirty_ratio"])
    uncleanable = GaugeMetricFamily("kafka_log_logcleanermanager_uncleanable_partitions_count",
                                    "Compacted partitions the cleaner stopped at: a batch the record parser refuses.",
                                    value=len(cleaner.get("uncleanable", ())))
    return out + [dirty, uncleanable]


def _authorizer_families(authorizer: dict) -> list:
    """Kafka's authorizer-metrics (acls-total-count), with refusals counted per API."""
    acls = GaugeMetricFamily("kafka_server_authorizer_metrics_acls_total_count", "ACLs held.",
                             value=authorizer.get("acls", 0))
    denied = CounterMetricFamily("kafka_server_authorizer_metrics_authorization_denied",
                                 "Requests (or resources in them) refused by the authorizer, per API.",
                                 labels=["request"])
    for api, n in sorted((authorizer.get("denied") or {}).items()):
        denied.add_metric([api], n)
    return [acls, denied]


class _Families:
    """What generate_latest needs from a registry: ``collect()``."""

    def __init__(self, snap: dict):
        self.snap = snap

    def collect(self):
        return families(self.snap)


class MetricsHttpServer:
    """/metrics, /healthz and /readyz on their own thread.

    ``on_loop(fn)`` runs ``fn`` on the broker's event loop and returns a concurrent
    future; ``ready()`` says whether the broker serves clients (listeners bound and not
    stopping)."""

    def __init__(self, host: str, port: int, *, on_loop: Callable, snapshot: Callable[[], dict],
                 ready: Callable[[], bool]):
        self.on_loop = on_loop
        self.snapshot = snapshot
        self.ready = ready
        self.listener = ThreadedListener(host, port, _handler(self), name="kipper-metrics-http")
        self.port = self.listener.port
        self.host = host

    @property
    def url(self) -> str:
        return f"http://{self.host or '0.0.0.0'}:{self.port}"

    def start(self) -> None:
        self.listener.start()

    def close(self) -> None:
        self.listener.close()

    # --- on the HTTP threads -------------------------------------------------------------------

    def render(self) -> bytes:
        snap = self.on_loop(self.snapshot).result(SNAPSHOT_TIMEOUT_S)
        return generate_latest(_Families(snap))

    def healthy(self) -> bool:
        """The process answers and its event loop runs callbacks."""
        try:
            self.on_loop(lambda: True).result(HEALTH_TIMEOUT_S)
            return True
        except (concurrent.futures.TimeoutError, RuntimeError):
            return False


def _handler(server: MetricsHttpServer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            try:
                if path == "/metrics":
                    self._send(200, server.render(), CONTENT_TYPE_LATEST)
                elif path == "/healthz":
                    ok = server.healthy()
                    self._send(200 if ok else 503, b"ok\n" if ok else b"event loop not responding\n")
                elif path == "/readyz":
                    ok = server.ready()
                    self._send(200 if ok else 503, b"ready\n" if ok else b"not ready\n")
                else:
                    self._send(404, b"not found: try /metrics, /healthz or /readyz\n")
            except ConnectionError:  # the scraper went away before the answer: nobody to tell
                log.debug("metrics_http_client_gone", path=path)
            except (concurrent.futures.TimeoutError, RuntimeError) as exc:
                self._send(503, f"broker busy or stopping: {exc!r}\n".encode())
            except Exception:
                log.exception("metrics_http_failed", path=path)
                self._send(500, b"internal error\n")

        def _send(self, status: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # scrapes are not worth a log line each
            pass

    return Handler
