"""Share-group settings: one frozen dataclass built from the broker config's "share" keys."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ShareSettings:
    enable: bool = True
    delivery_count_limit: int = 5
    record_lock_duration_ms: int = 30000
    record_lock_duration_max_ms: int = 60000
    record_lock_partition_limit: int = 200
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_groups: int = 10
    max_size: int = 200
    auto_offset_reset: str = "latest"
    auto_offset_reset_groups: dict = field(default_factory=dict)
    checkpoint_max_deltas: int = 50
    checkpoint_interval_ms: int = 30000
    state_unload_ms: int = 300000

    @classmethod
    def from_config(cls, config) -> "ShareSettings":
        return cls(
            enable=config["group.share.enable"],
            delivery_count_limit=config["group.share.delivery.count.limit"],
            record_lock_duration_ms=min(config["group.share.record.lock.duration.ms"],
                                        config["group.share.record.lock.duration.max.ms"]),
            record_lock_duration_max_ms=config["group.share.record.lock.duration.max.ms"],
            record_lock_partition_limit=config["group.share.record.lock.partition.limit"],
            session_timeout_ms=config["group.share.session.timeout.ms"],
            heartbeat_interval_ms=config["group.share.heartbeat.interval.ms"],
            max_groups=config["group.share.max.groups"],
            max_size=config["group.share.max.size"],
            auto_offset_reset=config["group.share.auto.offset.reset"],
            auto_offset_reset_groups=config["group.share.auto.offset.reset.groups"],
            checkpoint_max_deltas=config["group.share.checkpoint.max.deltas"],
            checkpoint_interval_ms=config["group.share.checkpoint.interval.ms"],
            state_unload_ms=config["group.share.state.unload.ms"],
        )
