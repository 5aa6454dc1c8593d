"""Partitions whose storage is in ``log.dirs``: the factory the composition root
hands to the TopicManager when durability is on.

Each partition's FileLog takes its settings from the topic's configs, falling
back to the broker's ``log.*`` keys, as Kafka's LogConfig does; a config change
reaches the open logs at once.
"""

from __future__ import annotations

from typing import Callable

from kipper.broker.log.partition import Partition, ProducerStateSettings
from kipper.broker.log.config import LogConfigs, log_config
from kipper.broker.storage.log_manager import LogManager


class DurablePartitions:
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
