"""Dynamic per-group configs (Kafka's GROUP config resource, KIP-848/932).

Only the keys kipper acts on are accepted; today that is share groups'
``share.auto.offset.reset``. Set with IncrementalAlterConfigs, read with
DescribeConfigs and by the share-group store.
"""

from __future__ import annotations

from kipper.broker.storage.metadata import MetadataStore

GROUP_TYPES = (3, 32)  # a GROUP resource: librdkafka's ResourceType 3, Kafka's ConfigResource.Type 32

GROUP_CONFIGS = {
    "share.auto.offset.reset": ("latest", ("latest", "earliest")),
}


class GroupConfigs:
    def __init__(self, metadata: MetadataStore | None = None):
        """``metadata`` persists every change (with log.dirs) and holds the stored ones."""
        self.metadata = metadata or MetadataStore()
        self._by_group: dict[str, dict[str, str]] = {
            g: dict(c) for g, c in self.metadata.group_configs.items()}

    def get(self, group_id: str, key: str) -> str | None:
        return self._by_group.get(group_id, {}).get(key)

    def describe(self, group_id: str) -> dict[str, tuple[str, bool]]:
        """key -> (value, set for this group)."""
        mine = self._by_group.get(group_id, {})
        return {k: (mine.get(k, default), k in mine) for k, (default, _) in GROUP_CONFIGS.items()}

    @staticmethod
    def check(key: str, value: str | None) -> str | None:
        spec = GROUP_CONFIGS.get(key)
        if spec is None:
            return f"unknown group config {key}"
        if value is not None and value not in spec[1]:
            return f"{key}={value}: must be one of {', '.join(spec[1])}"
        return None

    def set(self, group_id: str, key: str, value: str) -> None:
        self._by_group.setdefault(group_id, {})[key] = value
        self.metadata.put_group_configs(group_id, self._by_group[group_id])

    def delete(self, group_id: str, key: str) -> None:
        mine = self._by_group.get(group_id, {})
        if mine.pop(key, None) is not None:
            self.metadata.put_group_configs(group_id, mine)
