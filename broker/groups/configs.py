"""Dynamic per-group configs (Kafka's GROUP config resource, KIP-848/932).

Only the keys kipper acts on are accepted; today that is share groups'
``share.auto.offset.reset``. Set with IncrementalAlterConfigs, read with
DescribeConfigs and by the share-group store.
"""

from __future__ import annotations

GROUP_TYPES = (3, 32)  # a GROUP resource: librdkafka's ResourceType 3, Kafka's ConfigResource.Type 32

GROUP_CONFIGS = {
    "share.auto.offset.reset": ("latest", ("latest", "earliest")),
}


class GroupConfigs:
    def __init__(self):
        self._by_group: dict[str, dict[str, str]] = {}

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

    def delete(self, group_id: str, key: str) -> None:
        self._by_group.get(group_id, {}).pop(key, None)
