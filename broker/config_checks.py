"""The broker configuration's rules between keys (listeners and their protocols, the group
and share-group timeout ranges, TLS files, super users), checked once by ``config.load``
after every key has parsed on its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kipper.broker.config_values import ConfigError


def check_consistency(values: dict[str, Any]) -> None:
    """The rules between keys, after each key parsed on its own; may normalise a value."""
    if not values["listeners"]:
        raise ConfigError("listeners: at least one listener is required")
    names = {listener.name for listener in values["listeners"]}
    pmap = values["listener.security.protocol.map"]
    for listener in values["listeners"]:
        if listener.name not in pmap:
            raise ConfigError(f"listener.security.protocol.map has no entry for listener {listener.name}")
    for adv in values["advertised.listeners"]:
        if adv.name not in names:
            raise ConfigError(f"advertised.listeners: {adv.name} is not in listeners")
        if not adv.host or adv.port == 0:
            raise ConfigError(f"advertised.listeners: {adv} needs a host and a non-zero port")
    if values["group.min.session.timeout.ms"] > values["group.max.session.timeout.ms"]:
        raise ConfigError("group.min.session.timeout.ms is above group.max.session.timeout.ms")
    _check_share(values)
    _check_consumer(values)
    _check_security(values)


def _check_share(values: dict[str, Any]) -> None:
    for lo, key, hi in (("group.share.min.session.timeout.ms", "group.share.session.timeout.ms",
                         "group.share.max.session.timeout.ms"),
                        ("group.share.min.heartbeat.interval.ms", "group.share.heartbeat.interval.ms",
                         "group.share.max.heartbeat.interval.ms")):
        if not values[lo] <= values[key] <= values[hi]:
            raise ConfigError(f"{key}: {values[key]} is outside [{lo}={values[lo]}, {hi}={values[hi]}]")
    if values["group.share.heartbeat.interval.ms"] >= values["group.share.session.timeout.ms"]:
        raise ConfigError("group.share.heartbeat.interval.ms must be below group.share.session.timeout.ms")
    if values["group.share.record.lock.duration.ms"] > values["group.share.record.lock.duration.max.ms"]:
        raise ConfigError("group.share.record.lock.duration.ms is above group.share.record.lock.duration.max.ms")
    for lo, key, hi in (("group.share.min.record.lock.duration.ms", "group.share.record.lock.duration.ms",
                         "group.share.record.lock.duration.max.ms"),
                        ("group.share.min.delivery.count.limit", "group.share.delivery.count.limit",
                         "group.share.max.delivery.count.limit"),
                        ("group.share.min.partition.max.record.locks",
                         "group.share.partition.max.record.locks",
                         "group.share.max.partition.max.record.locks")):
        if not values[lo] <= values[key] <= values[hi]:
            raise ConfigError(f"{key}: {values[key]} is outside [{lo}={values[lo]}, {hi}={values[hi]}]")
    resets = {}
    for item in (s.strip() for s in values["group.share.auto.offset.reset.groups"].split(",")):
        group, sep, reset = item.rpartition(":")
        if item and (not sep or not group.strip() or reset.strip() not in ("earliest", "latest")):
            raise ConfigError(f"group.share.auto.offset.reset.groups: '{item}' is not GROUP:earliest or GROUP:latest")
        if item:
            resets[group.strip()] = reset.strip()
    values["group.share.auto.offset.reset.groups"] = resets


def _check_consumer(values: dict[str, Any]) -> None:
    """Kafka's GroupCoordinatorConfig rules for the group.consumer.* and group.streams.* timeouts."""
    for kind in ("consumer", "streams"):
        p = f"group.{kind}."
        for lo, key, hi in ((p + "min.session.timeout.ms", p + "session.timeout.ms", p + "max.session.timeout.ms"),
                            (p + "min.heartbeat.interval.ms", p + "heartbeat.interval.ms",
                             p + "max.heartbeat.interval.ms")):
            if values[lo] > values[hi]:
                raise ConfigError(f"{hi} must be greater than or equal to {lo}")
            if not values[lo] <= values[key] <= values[hi]:
                raise ConfigError(f"{key}: {values[key]} is outside [{lo}={values[lo]}, {hi}={values[hi]}]")
        if values[p + "heartbeat.interval.ms"] >= values[p + "session.timeout.ms"]:
            raise ConfigError(f"{p}heartbeat.interval.ms must be below {p}session.timeout.ms")
    if values["group.streams.num.standby.replicas"] > values["group.streams.max.standby.replicas"]:
        raise ConfigError("group.streams.num.standby.replicas must be less than or equal to "
                          "group.streams.max.standby.replicas")


def _check_security(values: dict[str, Any]) -> None:
    pmap = values["listener.security.protocol.map"]
    protocols = {pmap[listener.name] for listener in values["listeners"]}
    if protocols & {"SSL", "SASL_SSL"} and not values["ssl.keystore.location"]:
        raise ConfigError("ssl.keystore.location is required by SSL and SASL_SSL listeners")
    if any(scheme == "https" for scheme, _, _ in values["schema.registry.listeners"]) \
            and not values["ssl.keystore.location"]:
        raise ConfigError("schema.registry.listeners: an https:// listener needs ssl.keystore.location")
    if values["ssl.client.auth"] != "none" and not values["ssl.truststore.location"]:
        raise ConfigError("ssl.client.auth needs ssl.truststore.location")
    for key in ("ssl.keystore.location", "ssl.key.location", "ssl.truststore.location"):
        if values[key] and not Path(values[key]).is_file():
            raise ConfigError(f"{key}: {values[key]} is not a readable file")
    cdir = values["config.dir"]
    if cdir and Path(cdir).exists() and not Path(cdir).is_dir():
        raise ConfigError(f"config.dir: {cdir} exists and is not a directory")
    for item in (s.strip() for s in values["super.users"].split(";")):
        if item and not item.startswith("User:"):
            raise ConfigError(f"super.users: '{item}' is not of the form User:<name>")
