"""Client-metrics subscriptions (KIP-714): the CLIENT_METRICS config resources that
``kafka-client-metrics`` and IncrementalAlterConfigs manage, as Kafka's ClientMetricsConfigs
validates them, kept in the metadata store with log.dirs.

A subscription has ``metrics`` (name prefixes; "*" or "" for all), ``interval.ms`` (how often
matching clients push, 100 ms to 1 h) and ``match`` (``key=regex`` on the client's instance
id, client id, software name and version, source address and port; none: every client).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kipper.protocol.errors import ErrorCode

RESOURCE_TYPE = 16  # ConfigResource.Type.CLIENT_METRICS
METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
INTERVAL_MS_DEFAULT = 300_000  # Kafka's ClientMetricsConfigs: 5 minutes
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
ALL_METRICS = "*"
MATCH_KEYS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                        "client_source_address", "client_source_port"})
# name -> (ConfigDef type, default as text, documentation), as Kafka 4.4 describes them
CONFIGS = {
    METRICS: ("list", "", "Telemetry metric name prefix list"),
    INTERVAL_MS: ("int", str(INTERVAL_MS_DEFAULT), "Metrics push interval in milliseconds"),
    MATCH: ("list", "", "Client match criteria"),
}


class Invalid(ValueError):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Subscription:
    name: str
    metrics: frozenset[str]
    interval_ms: int
    match: dict  # key -> compiled pattern

    def matches(self, client: dict[str, str | None]) -> bool:
        return all(client.get(k) is not None and p.fullmatch(client[k]) for k, p in self.match.items())


def _list(text: str) -> list[str]:
    return [] if not text.strip() else [item.strip() for item in text.split(",")]


def validate(name: str, configs: dict[str, str]) -> Subscription:
    """The subscription ``configs`` describe, or Invalid with Kafka's error and message."""
    if not name:
        raise Invalid(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in CONFIGS:
            raise Invalid(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    for key in (METRICS, MATCH):
        items = _list(configs.get(key, ""))
        if len(set(items)) != len(items):
            raise Invalid(ErrorCode.INVALID_CONFIG, f"Configuration '{key}' values must not be duplicated.")
    text = configs.get(INTERVAL_MS, str(INTERVAL_MS_DEFAULT)).strip()
    try:
        interval = int(text)
    except ValueError:
        raise Invalid(ErrorCode.INVALID_CONFIG,
                      f"Invalid value {text} for configuration {INTERVAL_MS}: Not a number of type INT") from None
    if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise Invalid(ErrorCode.INVALID_REQUEST, f"Invalid value {interval} for {INTERVAL_MS}, "
                                                 "interval must be between 100 and 3600000 (1 hour)")
    return Subscription(name, frozenset(_list(configs.get(METRICS, ""))), interval,
                        parse_match(_list(configs.get(MATCH, ""))))


def parse_match(patterns: list[str]) -> dict:
    out = {}
    for pattern in patterns:
        parts = pattern.split("=")
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings: "client_id=" is one part
            parts.pop()
        if len(parts) != 2 or parts[0].strip() not in MATCH_KEYS:
            raise Invalid(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        try:
            out[parts[0].strip()] = re.compile(parts[1].strip())
        except re.error:
            raise Invalid(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}") from None
    return out


class Subscriptions:
    """The client-metrics resources, by name; ``version`` moves with every change, so the
    client instances know when to look at their subscription again."""

    def __init__(self, store=None):
        self.store = store
        self.configs: dict[str, dict[str, str]] = dict(getattr(store, "client_metrics", {}) or {})
        self.active = {name: validate(name, c) for name, c in self.configs.items()}
        self.version = 0

    def current(self, name: str) -> dict[str, str]:
        return dict(self.configs.get(name, {}))

    def replace(self, name: str, configs: dict[str, str]) -> None:
        """Apply a validated set; an empty one removes the subscription (as Kafka's
        IncrementalAlterConfigs does when every config is deleted)."""
        if configs:
            self.configs[name] = dict(configs)
            self.active[name] = validate(name, configs)
        else:
            self.configs.pop(name, None)
            self.active.pop(name, None)
        self.version += 1
        if self.store is not None and getattr(self.store, "durable", False):
            self.store.put_client_metrics(name, configs)

    def names(self) -> list[str]:
        return sorted(self.configs)

    def describe(self, name: str) -> list[tuple[str, str, bool, str, str]]:
        """(name, value, set explicitly, type, documentation) of each config of ``name``."""
        own = self.configs.get(name, {})
        out = []
        for key, (kind, default, doc) in CONFIGS.items():
            value = own.get(key)
            if value is not None and kind == "list":
                value = ",".join(_list(value))
            out.append((key, default if value is None else value, value is not None, kind, doc))
        return out
