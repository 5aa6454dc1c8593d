"""The factories of a topic's partitions the composition root hands to the TopicManager:
in memory (the default), or in ``log.dirs`` when durability is on.

Each partition's storage takes its settings from the topic's configs, falling back
to the broker's ``log.*`` keys, as Kafka's LogConfig does; a config change reaches the
open logs at once (``reconfigure``).
"""

from __future__ import annotations

from typing import Callable, Protocol

from kipper.broker.log.partition import Partition
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.storage.log_config import LogConfig, LogConfigs, log_config
from kipper.broker.storage.log_manager import LogManager
from kipper.broker.storage.memory_log import MemoryLog


class PartitionFactory(Protocol):
    """Makes the partitions of a topic (the topic: broker/log/topics.py's Topic)."""

    def new(self, topic, index: int) -> Partition: ...

    def reconfigure(self, topic) -> None:
        """The topic's configs changed: tell its partitions' storage."""


class InMemoryPartitions:
    """The broker's default storage: partitions that keep everything in memory."""

    def __init__(self, settings: ProducerStateSettings | None = None,
                 notify: Callable[[str, int], None] | None = None, broker_config=None):
        self.settings = settings or ProducerStateSettings()
        self.notify = notify
        self.broker_config = broker_config  # None: Kafka's defaults (engine tests)
        self._configs = LogConfigs(broker_config)

    def _config(self, topic) -> LogConfig:
        if self.broker_config is None:
            return LogConfig()
        return self._configs.of(topic)

    def new(self, topic, index: int) -> Partition:
        return Partition(topic.name, index, MemoryLog(self._config(topic)), self.settings, self.notify)

    def reconfigure(self, topic) -> None:
        config = self._config(topic)
        for partition in topic.partitions:
            partition.log.config = config


class DurablePartitions:
    """Partitions whose storage is a FileLog in ``log.dirs`` (broker/storage/)."""

    def __init__(self, logs: LogManager, broker_config, settings: ProducerStateSettings,
                 notify: Callable[[str, int], None], clock: Callable[[], int]):
        self.logs = logs
        self.broker_config = broker_config
        self.settings = settings
        self.notify = notify
        self.clock = clock
        self._configs = LogConfigs(broker_config)

    def new(self, topic, index: int) -> Partition:
        log_ = self.logs.open_log(topic.name, index, topic.topic_id, self._configs.of(topic), self.clock())
        return Partition(topic.name, index, log_, self.settings, self.notify)

    def reconfigure(self, topic) -> None:
        config = log_config(topic.configs, self.broker_config)
        for partition in topic.partitions:
            partition.log.config = config
