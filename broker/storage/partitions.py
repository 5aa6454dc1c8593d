"""Partitions whose storage is in ``log.dirs``: the factory the composition root
hands to the TopicManager when durability is on.

Each partition's FileLog takes its settings from the topic's configs, falling
back to the broker's ``log.*`` keys, as Kafka's LogConfig does; a config change
reaches the open logs at once.
"""

from __future__ import annotations

from typing import Callable

from kipper.broker.log.partition import Partition, ProducerStateSettings
from kipper.broker.storage.file_log import NO_LIMIT, LogConfig
from kipper.broker.storage.log_manager import LogManager


def log_config(topic_configs: dict[str, str], broker) -> LogConfig:
    """The LogConfig of a topic: its own configs over the broker's defaults."""
    roll_ms = broker["log.roll.ms"] if broker["log.roll.ms"] >= 0 else broker["log.roll.hours"] * 3_600_000
    flush_ms = broker["log.flush.interval.ms"]

    def get(name: str, default: int) -> int:
        value = topic_configs.get(name)
        return int(value) if value is not None else default

    return LogConfig(
        segment_bytes=get("segment.bytes", broker["log.segment.bytes"]),
        segment_ms=get("segment.ms", roll_ms),
        index_interval_bytes=get("index.interval.bytes", broker["log.index.interval.bytes"]),
        flush_messages=get("flush.messages", broker["log.flush.interval.messages"]),
        flush_ms=get("flush.ms", flush_ms if flush_ms >= 0 else NO_LIMIT))


class DurablePartitions:
    def __init__(self, logs: LogManager, broker_config, settings: ProducerStateSettings,
                 notify: Callable[[str, int], None], clock: Callable[[], int]):
        self.logs = logs
        self.broker_config = broker_config
        self.settings = settings
        self.notify = notify
        self.clock = clock

    def new(self, topic, index: int) -> Partition:
        log_ = self.logs.open_log(topic.name, index, topic.topic_id,
                                  log_config(topic.configs, self.broker_config), self.clock())
        return Partition(topic.name, index, log_, self.settings, self.notify)

    def reconfigure(self, topic) -> None:
        config = log_config(topic.configs, self.broker_config)
        for partition in topic.partitions:
            partition.log.config = config
