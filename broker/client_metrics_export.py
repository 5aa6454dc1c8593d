"""What clients push (KIP-714, broker/telemetry/) as Prometheus families: one family per
metric name, one series per client instance and data-point attributes, labelled
``client_instance_id``, ``client_id``, ``client_software_name`` and
``client_software_version`` (Kafka hands pushed metrics to a plugin; kipper shows them).
The number of series is bounded by the engine (``client.telemetry.max.series``).
Pure: a snapshot in, families out (unit-tested without sockets)."""

from __future__ import annotations

import re

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.samples import Sample

_INVALID = re.compile(r"[^a-zA-Z0-9_]")
CLIENT_LABELS = ("client_instance_id", "client_id", "client_software_name", "client_software_version")


def prometheus_name(name: str) -> str:
    """An OTLP metric name as a Prometheus one: org.apache.kafka.producer.x -> org_apache_kafka_producer_x."""
    out = _INVALID.sub("_", name)
    return out if out and not out[0].isdigit() else "_" + out


def client_metric_families(telemetry: dict) -> list:
    families: dict[str, object] = {}
    for client in telemetry.get("clients") or ():
        base = {k: str(client.get(k) or "") for k in CLIENT_LABELS}
        for m in client["metrics"]:
            name = prometheus_name(m["name"])
            labels = {**{prometheus_name(k): str(v) for k, v in m["attributes"].items()}, **base}
            if m["kind"] in ("gauge", "sum"):
                # a sum is shown as a gauge too: its deltas are summed, but the series restarts
                # with the client instance, and the Java client's names already say "total"
                family = families.get(name)
                if family is None:
                    family = families[name] = GaugeMetricFamily(name, f"pushed by clients (KIP-714): {m['name']}")
                family.samples.append(Sample(name, labels, m["value"]))
            else:  # histograms and summaries: their count and sum
                for suffix, value in (("_count", m["count"]), ("_sum", m["sum"])):
                    family = families.get(name + suffix)
                    if family is None:
                        family = families[name + suffix] = GaugeMetricFamily(
                            name + suffix, f"pushed by clients (KIP-714): {m['name']} {suffix[1:]}")
                    family.samples.append(Sample(name + suffix, labels, value))
    summary = [
        GaugeMetricFamily("kafka_server_client_metrics_instance_count",
                          "Client instances the broker keeps telemetry for (Kafka: client-metrics instance-count).",
                          value=telemetry.get("instances", 0)),
        GaugeMetricFamily("kafka_server_client_metrics_series", "Series of pushed client metrics kept.",
                          value=telemetry.get("series", 0)),
        CounterMetricFamily("kafka_server_client_metrics_pushes", "PushTelemetry requests accepted.",
                            value=telemetry.get("pushes", 0)),
        CounterMetricFamily("kafka_server_client_metrics_throttle", "Telemetry requests sooner than the push "
                            "interval (Kafka: client-metrics throttle-count).", value=telemetry.get("throttled", 0)),
        CounterMetricFamily("kafka_server_client_metrics_unknown_subscription_request",
                            "Pushes naming a subscription id that changed (Kafka: unknown-subscription-request).",
                            value=telemetry.get("unknown_subscription", 0)),
        CounterMetricFamily("kafka_server_client_metrics_dropped_series",
                            "Pushed series dropped: client.telemetry.max.series was reached.",
                            value=telemetry.get("dropped_series", 0)),
    ]
    return summary + [families[n] for n in sorted(families)]
