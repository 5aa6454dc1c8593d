"""What the broker knows beyond the logs: topics, their ids and configs, group configs,
and the producer-id block, kept where a KRaft broker keeps its metadata log.

One JSON file, ``<first log dir>/kipper-metadata.json``, rewritten atomically
(and fsynced) on every change: topic creation, deletion and config changes,
group and dynamic broker config changes, finalized feature levels, client-metrics
subscriptions, and each new block of producer ids. Producer ids are
handed out from a block whose end is written first, so an id is never given
twice, even across a SIGKILL. Without ``log.dirs`` nothing is written.
"""

from __future__ import annotations

import json
from pathlib import Path

from kipper.broker.storage.files import StorageError, write_atomically

FILE_NAME = "kipper-metadata.json"
VERSION = 1
FIRST_PRODUCER_ID = 1000
PRODUCER_ID_BLOCK = 1000  # Kafka's ProducerIdManager hands out blocks of 1000 too


class MetadataStore:
    def __init__(self, directory: Path | None = None):
        self.path = directory / FILE_NAME if directory is not None else None
        self.topics: dict[str, dict] = {}  # name -> {"id", "partitions", "configs", "internal"}
        self.group_configs: dict[str, dict[str, str]] = {}
        self.broker_configs: dict[str, dict[str, str]] = {}  # "" (cluster default) or node id
        self.features: dict[str, int] = {}  # finalized feature levels (broker/features.py)
        self.features_epoch = 0
        self.client_metrics: dict[str, dict[str, str]] = {}  # KIP-714 subscriptions (broker/telemetry/)
        self.producer_id_block_end = FIRST_PRODUCER_ID

    @property
    def durable(self) -> bool:
        return self.path is not None

    def load(self) -> "MetadataStore":
        if self.path is None or not self.path.exists():
            return self
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from None
        if data.get("version") != VERSION:
            raise StorageError(f"{self.path} has version {data.get('version')}, not {VERSION}")
        self.topics = data.get("topics", {})
        self.group_configs = data.get("group_configs", {})
        self.broker_configs = data.get("broker_configs", {})
        self.producer_id_block_end = int(data.get("producer_id_block_end", FIRST_PRODUCER_ID))
        self.features = data.get("features", {})
        self.features_epoch = int(data.get("features_epoch", 0))
        self.client_metrics = data.get("client_metrics", {})
        return self

    def save(self) -> None:
        if self.path is None:
            return
        data = {"version": VERSION, "topics": self.topics, "group_configs": self.group_configs,
                "broker_configs": self.broker_configs,
                "producer_id_block_end": self.producer_id_block_end,
                "features": self.features, "features_epoch": self.features_epoch,
                "client_metrics": self.client_metrics}
        write_atomically(self.path, json.dumps(data, indent=1, sort_keys=True).encode())

    # --- changes -------------------------------------------------------------------------------

    def put_topic(self, topic) -> None:
        self.topics[topic.name] = {"id": str(topic.topic_id), "partitions": len(topic.partitions),
                                   "configs": dict(topic.configs), "internal": topic.internal}
        self.save()

    def remove_topic(self, name: str) -> None:
        if self.topics.pop(name, None) is not None:
            self.save()

    def put_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        if configs:
            self.group_configs[group_id] = dict(configs)
        else:
            self.group_configs.pop(group_id, None)
        self.save()

    def put_broker_configs(self, layer: str, configs: dict[str, str]) -> None:
        """Dynamic broker configs of one layer: "" (cluster default) or a node id."""
        if configs:
            self.broker_configs[layer] = dict(configs)
        else:
            self.broker_configs.pop(layer, None)
        self.save()

    def put_features(self, levels: dict[str, int], epoch: int) -> None:
        """The finalized feature levels (what Kafka keeps as FeatureLevelRecords)."""
        self.features, self.features_epoch = dict(levels), epoch
        self.save()

    def put_client_metrics(self, name: str, configs: dict[str, str]) -> None:
        """One client-metrics subscription (KIP-714); empty configs remove it."""
        if configs:
            self.client_metrics[name] = dict(configs)
        else:
            self.client_metrics.pop(name, None)
        self.save()

    def reserve_producer_ids(self, first_unused: int) -> int:
        """Persist a new block starting at or after ``first_unused``; its end (exclusive)."""
        self.producer_id_block_end = max(first_unused, self.producer_id_block_end) + PRODUCER_ID_BLOCK
        self.save()
        return self.producer_id_block_end
