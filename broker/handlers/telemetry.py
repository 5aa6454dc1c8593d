"""GetTelemetrySubscriptions and PushTelemetry (KIP-714), over the client-telemetry engine
(broker/telemetry/); and ListConfigResources (KIP-1142), the config resources by type."""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS
from kipper.broker.config_values import image_order
from kipper.broker.telemetry.subscriptions import RESOURCE_TYPE as CLIENT_METRICS
from kipper.protocol.errors import ErrorCode

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
# ListConfigResources: v0 (ListClientMetricsResources) lists subscriptions only
SUPPORTED_TYPES = {0: (CLIENT_METRICS,), 1: (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)}


def _client(ctx) -> dict:
    """What a subscription's ``match`` looks at, as Kafka's ClientMetricsInstanceMetadata."""
    host, _, port = ctx.session.peer.rpartition(":")
    software = ctx.session.client_software or (None, None)
    return {"client_id": ctx.client_id, "client_software_name": software[0],
            "client_software_version": software[1], "client_source_address": host or None,
            "client_source_port": port or None}


def handle_get_telemetry_subscriptions(req, ctx):
    return ctx.engines.telemetry.get_subscriptions(req.client_instance_id, _client(ctx), ctx.session, ctx.now)


def handle_push_telemetry(req, ctx):
    error, _ = ctx.engines.telemetry.push(req.client_instance_id, req.subscription_id, req.terminating,
                                          req.compression_type, req.metrics, _client(ctx), ctx.session, ctx.now)
    return {"throttle_time_ms": 0, "error_code": int(error)}


def handle_list_config_resources(req, ctx):
    if not ctx.authorize(DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "config_resources": []}
    supported = SUPPORTED_TYPES[min(ctx.api_version, 1)]
    wanted = list(req.get("resource_types") or supported)
    if any(t not in supported for t in wanted):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.UNSUPPORTED_VERSION), "config_resources": []}
    engines = ctx.engines
    node = str(engines.node_id)
    names = {GROUP: lambda: engines.group_configs.names(), CLIENT_METRICS: lambda: engines.client_metrics.names(),
             BROKER_LOGGER: lambda: [node], BROKER: lambda: [node],
             TOPIC: lambda: image_order(t.name for t in engines.topics.all())}
    out = []
    for kind in (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC):  # Kafka's order
        if kind in wanted:
            out += [{"resource_name": name, "resource_type": kind} for name in names[kind]()]
    return {"throttle_time_ms": 0, "error_code": 0, "config_resources": out}
