"""Client telemetry (KIP-714): client-metrics subscriptions (CLIENT_METRICS config resources)
and the engine that answers GetTelemetrySubscriptions and PushTelemetry and keeps what clients
push for /metrics and the metrics dumps."""

from kipper.broker.telemetry.manager import ClientTelemetry
from kipper.broker.telemetry.subscriptions import Invalid, Subscriptions, validate

__all__ = ["ClientTelemetry", "Invalid", "Subscriptions", "validate"]
