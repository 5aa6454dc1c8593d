"""A topic's configs in effect: its own value, else the broker's (dynamic per
broker, dynamic cluster default, then the properties file), else Kafka's default.

``TopicConfigView`` answers DescribeConfigs (value, source, synonyms in Kafka's
order, as ConfigHelper.createTopicConfigEntry builds them) and hands Produce an
``AppendPolicy``: the configs the append path applies, cached per topic until
its configs or the dynamic broker configs change.
"""

from __future__ import annotations

from kipper.broker.config import KEYS
from kipper.broker.log.validate import AppendPolicy
from kipper.broker.log.topic_configs import CONFIG_TYPES, LONG_MAX, TOPIC_CONFIGS, TopicConfigDef
from kipper.protocol import compression

DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5


# Kafka's broker configs without a default (ServerLogConfigs: null), with the longer-unit
# synonym DynamicBrokerConfig.brokerConfigSynonyms lists after each and its default. Kafka's
# ConfigHelper.configSynonyms drops every synonym before the first one named after the topic
# config's broker config, so a topic config of these lists no broker synonym until it is set
NULL_DEFAULTS = {"log.retention.ms": ("log.retention.hours", "168"),
                 "log.roll.ms": ("log.roll.hours", "168"),
                 "log.roll.jitter.ms": ("log.roll.jitter.hours", "0"),
                 "log.flush.interval.ms": ("log.flush.scheduler.interval.ms", str(LONG_MAX))}


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TopicConfigView:
    def __init__(self, dynamic):
        """``dynamic``: the broker's DynamicBrokerConfigs (broker/dynamic_configs.py, a floor
        above this one: it validates broker configs against the topic config table here),
        read for its ``static`` config, its two ``layers``, this ``node`` and ``generation``."""
        self.dynamic = dynamic
        self.static = dynamic.static
        self._policies: dict[str, tuple[tuple, AppendPolicy]] = {}

    # --- the broker's side of a topic config ------------------------------------------------

    def _static_text(self, d: TopicConfigDef) -> str:
        static = self.static
        if d.name == "segment.ms":
            roll = static["log.roll.ms"]
            return str(roll if roll >= 0 else static["log.roll.hours"] * 3_600_000)
        if d.name == "retention.ms" and "retention.ms" not in static.explicit:
            hours = static["log.retention.hours"]
            return str(hours * 3_600_000 if hours >= 0 else -1)
        value = static[d.static_key]
        if d.name == "flush.ms" and value < 0:
            value = LONG_MAX  # kipper's -1 "no timer" is Kafka's Long.MAX_VALUE
        return d.canonical(_text(value))

    @staticmethod
    def _default_text(d: TopicConfigDef) -> str:
        """The value kipper's broker key defaults to, in the topic config's terms."""
        if d.name == "segment.ms":
            return str(KEYS["log.roll.hours"].default * 3_600_000)
        value = KEYS[d.static_key].default
        if d.name == "flush.ms" and value < 0:
            value = LONG_MAX
        return d.canonical(_text(value))

    def _static_explicit(self, d: TopicConfigDef) -> bool:
        explicit = self.static.explicit
        if d.name == "segment.ms":
            return "log.roll.ms" in explicit or "log.roll.hours" in explicit
        if d.name == "retention.ms":
            return "retention.ms" in explicit or "log.retention.hours" in explicit
        return d.static_key in explicit

    def synonyms(self, configs: dict[str, str], name: str, as_given: bool = False) -> list[tuple[str, str, int]]:
        """(name, value, source) from the highest precedence down; the first is in effect.
        A dynamic value is printed as its type prints it (0.5 for '0.5d'), or ``as_given``."""
        d = TOPIC_CONFIGS[name]
        shown = str if as_given else d.canonical
        out = []
        if configs.get(name) is not None:
            out.append((name, shown(configs[name]), DYNAMIC_TOPIC_CONFIG))
        if d.synonym is not None:
            for layer, source in ((self.dynamic.node, DYNAMIC_BROKER_CONFIG),
                                  ("", DYNAMIC_DEFAULT_BROKER_CONFIG)):
                value = self.dynamic.layers[layer].get(d.synonym)
                if value is not None:
                    out.append((d.synonym, shown(value), source))
        if d.static_key is not None:
            if self._static_explicit(d):
                out.append((d.static_key, self._static_text(d), STATIC_BROKER_CONFIG))
            out.append((d.static_key, self._default_text(d), DEFAULT_CONFIG))
        elif d.synonym is not None:
            out.append((d.synonym, d.default, DEFAULT_CONFIG))
        return out

    def described_synonyms(self, configs: dict[str, str], name: str) -> list[tuple[str, str, int]]:
        """The synonyms as Kafka's ConfigHelper.createTopicConfigEntry lists them: the topic's
        own value (only when set: no DEFAULT entry under the topic config's name), then the
        broker's under Kafka's names, from the first one named after the broker config on."""
        d = TOPIC_CONFIGS[name]
        found = self.synonyms(configs, name)
        own = [f for f in found if f[2] == DYNAMIC_TOPIC_CONFIG]
        broker = [(d.synonym or n, v, src) for n, v, src in found if src != DYNAMIC_TOPIC_CONFIG]
        if d.synonym is None:
            return own
        if d.synonym in NULL_DEFAULTS:
            broker = [b for b in broker if b[2] != DEFAULT_CONFIG]
            if broker:  # the longer unit's default follows what is set
                longer, default = NULL_DEFAULTS[d.synonym]
                broker.append((longer, default, DEFAULT_CONFIG))
        return own + broker

    def value(self, configs: dict[str, str], name: str) -> str:
        found = self.synonyms(configs, name)
        return found[0][1] if found else TOPIC_CONFIGS[name].default

    def typed(self, configs: dict[str, str], name: str):
        d = TOPIC_CONFIGS[name]
        return d.parse(self.value(configs, name))

    def row(self, configs: dict[str, str], name: str, *, include_synonyms: bool = False,
            include_documentation: bool = False, as_given: bool = False) -> dict:
        """One DescribeConfigs entry, or ``as_given`` a CreateTopics one: Kafka's controller
        answers a new topic's dynamic values with the text as given ('0.5d'), where a
        broker's DescribeConfigs prints them as their type does (0.5)."""
        d = TOPIC_CONFIGS[name]
        found = self.synonyms(configs, name, as_given)
        listed = self.described_synonyms(configs, name)
        value = found[0][1] if found else d.default
        # Kafka's source is the first synonym listed's, DEFAULT when none is
        source = listed[0][2] if listed else DEFAULT_CONFIG
        return {"name": name, "value": value, "read_only": False, "is_sensitive": False,
                "config_source": source,
                "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in listed]
                if include_synonyms else [],
                "config_type": CONFIG_TYPES[d.type],
                "documentation": d.doc if include_documentation else None}

    # --- the append path ---------------------------------------------------------------------

    def policy(self, topic) -> AppendPolicy:
        key = (id(topic.configs), topic.config_epoch, self.dynamic.generation)
        cached = self._policies.get(topic.name)
        if cached is not None and cached[0] == key:
            return cached[1]
        configs = topic.configs
        cleanup = self.typed(configs, "cleanup.policy")
        codec_name = self.typed(configs, "compression.type")
        codec = None if codec_name == "producer" else compression.BY_NAME.get(
            "none" if codec_name == "uncompressed" else codec_name)
        level = {compression.GZIP: "compression.gzip.level", compression.LZ4: "compression.lz4.level",
                 compression.ZSTD: "compression.zstd.level"}.get(codec)
        policy = AppendPolicy(
            max_message_bytes=self.typed(configs, "max.message.bytes"),
            log_append_time=self.typed(configs, "message.timestamp.type") == "LogAppendTime",
            before_max_ms=self.typed(configs, "message.timestamp.before.max.ms"),
            after_max_ms=self.typed(configs, "message.timestamp.after.max.ms"),
            compact="compact" in cleanup, delete="delete" in cleanup,
            codec=codec, level=self.typed(configs, level) if level else None,
            min_insync_replicas=self.typed(configs, "min.insync.replicas"))
        self._policies[topic.name] = (key, policy)
        return policy

    def retention(self, topic) -> tuple[int, int] | None:
        """(retention.ms, retention.bytes) when the cleanup policy deletes, else None."""
        if not self.policy(topic).delete:
            return None
        return self.typed(topic.configs, "retention.ms"), self.typed(topic.configs, "retention.bytes")
