"""The share settings in force for one share group: its group configs over the broker's keys.

Kafka lets each share group set share.record.lock.duration.ms, share.delivery.count.limit,
share.partition.max.record.locks, share.session.timeout.ms, share.heartbeat.interval.ms,
share.isolation.level, share.renew.acknowledge.enable and share.auto.offset.reset with
IncrementalAlterConfigs (KIP-932, KIP-1240). A group's value wins over the broker key for
that group only; a value outside the broker's current bounds (which may have changed since
it was set) is capped to them, as Kafka's GroupConfig.evaluate does.
"""

from __future__ import annotations

from typing import Callable

from kipper.broker.share.settings import ShareSettings

Lookup = Callable[[str, str], "str | None"]  # (group id, key) -> the group's own value


class GroupShareSettings:
    __slots__ = ("settings", "lookup")

    def __init__(self, settings: ShareSettings, lookup: Lookup | None = None):
        self.settings = settings
        self.lookup = lookup or (lambda group_id, key: None)

    def _int(self, group_id: str, key: str, default: int, lo: int, hi: int) -> int:
        value = self.lookup(group_id, key)
        if value is None:
            return default
        return min(max(int(value), lo), hi)

    def lock_duration_ms(self, group_id: str) -> int:
        s = self.settings
        return self._int(group_id, "share.record.lock.duration.ms", s.record_lock_duration_ms,
                         s.min_record_lock_duration_ms, s.record_lock_duration_max_ms)

    def delivery_count_limit(self, group_id: str) -> int:
        s = self.settings
        return self._int(group_id, "share.delivery.count.limit", s.delivery_count_limit,
                         s.min_delivery_count_limit, s.max_delivery_count_limit)

    def record_locks(self, group_id: str) -> int:
        s = self.settings
        return self._int(group_id, "share.partition.max.record.locks", s.partition_max_record_locks,
                         s.min_partition_max_record_locks, s.max_partition_max_record_locks)

    def session_timeout_ms(self, group_id: str) -> int:
        s = self.settings
        return self._int(group_id, "share.session.timeout.ms", s.session_timeout_ms,
                         s.min_session_timeout_ms, s.max_session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        s = self.settings
        return self._int(group_id, "share.heartbeat.interval.ms", s.heartbeat_interval_ms,
                         s.min_heartbeat_interval_ms, s.max_heartbeat_interval_ms)

    def read_committed(self, group_id: str) -> bool:
        return self.lookup(group_id, "share.isolation.level") == "read_committed"

    def renew_enabled(self, group_id: str) -> bool:
        value = self.lookup(group_id, "share.renew.acknowledge.enable")
        return value is None or value.strip().lower() == "true"

    def auto_offset_reset(self, group_id: str, topic_configs: dict) -> str:
        """The group's config, then the broker's per-group key, then the topic config,
        then group.share.auto.offset.reset."""
        s = self.settings
        return (self.lookup(group_id, "share.auto.offset.reset")
                or s.auto_offset_reset_groups.get(group_id)
                or topic_configs.get("share.auto.offset.reset") or s.auto_offset_reset)
