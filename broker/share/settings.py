"""Share-group settings: one frozen dataclass built from the broker config's "share" keys."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ShareSettings:
    enable: bool = True
    delivery_count_limit: int = 5
    record_lock_duration_ms: int = 30000
    record_lock_duration_max_ms: int = 60000
    partition_max_record_locks: int = 2000  # Kafka 4.2+'s default (the seed's draft: 200)
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    # the bounds of the group configs (KIP-1240); kipper's lock minimum is the seed's 1000
    min_record_lock_duration_ms: int = 1000
    min_delivery_count_limit: int = 2
    max_delivery_count_limit: int = 10
    min_partition_max_record_locks: int = 100
    max_partition_max_record_locks: int = 4000
    min_session_timeout_ms: int = 45000
    max_session_timeout_ms: int = 60000
    min_heartbeat_interval_ms: int = 5000
    max_heartbeat_interval_ms: int = 15000
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
            partition_max_record_locks=config["group.share.partition.max.record.locks"],
            session_timeout_ms=config["group.share.session.timeout.ms"],
            heartbeat_interval_ms=config["group.share.heartbeat.interval.ms"],
            min_record_lock_duration_ms=config["group.share.min.record.lock.duration.ms"],
            min_delivery_count_limit=config["group.share.min.delivery.count.limit"],
            max_delivery_count_limit=config["group.share.max.delivery.count.limit"],
            min_partition_max_record_locks=config["group.share.min.partition.max.record.locks"],
            max_partition_max_record_locks=config["group.share.max.partition.max.record.locks"],
            min_session_timeout_ms=config["group.share.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.share.max.session.timeout.ms"],
            min_heartbeat_interval_ms=config["group.share.min.heartbeat.interval.ms"],
            max_heartbeat_interval_ms=config["group.share.max.heartbeat.interval.ms"],
            max_groups=config["group.share.max.groups"],
            max_size=config["group.share.max.size"],
            auto_offset_reset=config["group.share.auto.offset.reset"],
            auto_offset_reset_groups=config["group.share.auto.offset.reset.groups"],
            checkpoint_max_deltas=config["group.share.checkpoint.max.deltas"],
            checkpoint_interval_ms=config["group.share.checkpoint.interval.ms"],
            state_unload_ms=config["group.share.state.unload.ms"],
        )
