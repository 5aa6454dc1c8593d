"""Producer configuration: Kafka's property names, validated once.

``ProducerConfig.from_dict`` accepts the same keys the Java producer and
librdkafka use, rejects unknown keys and bad values with a message naming
the key, and returns a frozen dataclass the engine reads.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from kipper.protocol import compression


class ConfigError(ValueError):
    pass


_INT32_MAX = 2**31 - 1


def _int(name: str, value, lo: int, hi: int = _INT32_MAX) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{name}: expected an integer, got {value!r}")
    try:
        v = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"{name}: expected an integer, got {value!r}") from None
    if not lo <= v <= hi:
        raise ConfigError(f"{name}: {v} is outside [{lo}, {hi}]")
    return v


def _bool(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(f"{name}: expected true or false, got {value!r}")


def _acks(name: str, value) -> int:
    text = str(value).strip().lower()
    if text in ("all", "-1"):
        return -1
    if text in ("0", "1"):
        return int(text)
    raise ConfigError(f"{name}: expected 0, 1 or all, got {value!r}")


def _compression(name: str, value) -> int:
    text = str(value).strip().lower()
    if text not in compression.BY_NAME:
        raise ConfigError(f"{name}: expected one of {', '.join(compression.BY_NAME)}, got {value!r}")
    return compression.BY_NAME[text]


def _partitioner(name: str, value) -> str:
    text = str(value).strip()
    if text not in ("default", "murmur2_random", "murmur2", "random", "sticky"):
        raise ConfigError(f"{name}: expected default, murmur2_random, murmur2, random or sticky, got {value!r}")
    return text


def _bootstrap(name: str, value) -> tuple[tuple[str, int], ...]:
    out = []
    for item in str(value).split(","):
        item = item.strip()
        if not item:
            continue
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"{name}: '{item}' is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ConfigError(f"{name}: at least one host:port is required")
    return tuple(out)


@dataclass(frozen=True)
class ProducerConfig:
    bootstrap_servers: tuple[tuple[str, int], ...]
    client_id: str = "kipper-producer"
    acks: int = -1
    linger_ms: int = 5
    batch_size: int = 131072  # Java: 16384, librdkafka: 1000000; see docs/CLIENT.md
    buffer_memory: int = 33554432
    max_block_ms: int = 60000
    compression_type: int = compression.NONE
    enable_idempotence: bool = True
    max_in_flight_requests_per_connection: int = 5
    max_in_flight_explicit: bool = False
    retries: int = _INT32_MAX
    retry_backoff_ms: int = 100
    delivery_timeout_ms: int = 120000
    request_timeout_ms: int = 30000
    metadata_max_age_ms: int = 300000
    max_request_size: int = 1048576
    partitioner: str = "default"

    @classmethod
    def from_dict(cls, conf: dict) -> "ProducerConfig":
        conf = dict(conf)
        unknown = sorted(k for k in conf if k not in _PARSERS)
        if unknown:
            raise ConfigError(f"unknown producer config key(s): {', '.join(unknown)}")
        if "bootstrap.servers" not in conf:
            raise ConfigError("bootstrap.servers is required")
        values = {}
        for key, value in conf.items():
            attr, parse = _PARSERS[key]
            values[attr] = parse(key, value)
        if "max.in.flight.requests.per.connection" in conf:
            values["max_in_flight_explicit"] = True
        cfg = cls(**values)
        if cfg.enable_idempotence:
            if cfg.acks != -1:
                if "acks" in conf:
                    raise ConfigError("enable.idempotence=true requires acks=all")
                object.__setattr__(cfg, "acks", -1)
            if cfg.retries == 0:
                raise ConfigError("enable.idempotence=true requires retries > 0")
        if cfg.delivery_timeout_ms < cfg.linger_ms + cfg.request_timeout_ms:
            raise ConfigError("delivery.timeout.ms must be at least linger.ms + request.timeout.ms")
        return cfg

    def describe(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_PARSERS = {
    "bootstrap.servers": ("bootstrap_servers", _bootstrap),
    "client.id": ("client_id", lambda n, v: str(v)),
    "acks": ("acks", _acks),
    "linger.ms": ("linger_ms", lambda n, v: _int(n, v, 0, 900000)),
    "batch.size": ("batch_size", lambda n, v: _int(n, v, 1, 16 * 1024 * 1024)),
    "buffer.memory": ("buffer_memory", lambda n, v: _int(n, v, 1024, 2**40)),
    "max.block.ms": ("max_block_ms", lambda n, v: _int(n, v, 0)),
    "compression.type": ("compression_type", _compression),
    "enable.idempotence": ("enable_idempotence", _bool),
    "max.in.flight.requests.per.connection": ("max_in_flight_requests_per_connection",
                                              lambda n, v: _int(n, v, 1, 1_000_000)),
    "retries": ("retries", lambda n, v: _int(n, v, 0)),
    "retry.backoff.ms": ("retry_backoff_ms", lambda n, v: _int(n, v, 0, 600000)),
    "delivery.timeout.ms": ("delivery_timeout_ms", lambda n, v: _int(n, v, 1)),
    "request.timeout.ms": ("request_timeout_ms", lambda n, v: _int(n, v, 1)),
    "metadata.max.age.ms": ("metadata_max_age_ms", lambda n, v: _int(n, v, 0)),
    "max.request.size": ("max_request_size", lambda n, v: _int(n, v, 1024, 2**30)),
    "partitioner": ("partitioner", _partitioner),
}
KNOWN_KEYS = tuple(_PARSERS)
