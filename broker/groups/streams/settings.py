"""Streams-group (KIP-1071) settings: the broker's ``group.streams.*`` keys, and the
per-group ``streams.*`` configs over them (Kafka's GroupConfig)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StreamsGroupSettings:
    session_timeout_ms: int = 45000         # Kafka's group.streams.session.timeout.ms default
    heartbeat_interval_ms: int = 5000       # group.streams.heartbeat.interval.ms
    max_size: int = 2**31 - 1               # group.streams.max.size
    num_standby_replicas: int = 0           # group.streams.num.standby.replicas
    initial_rebalance_delay_ms: int = 3000  # group.streams.initial.rebalance.delay.ms
    assignment_interval_ms: int = 1000      # group.streams.assignment.interval.ms (KIP-1263)
    task_offset_interval_ms: int = 60000    # group.streams.task.offset.interval.ms
    acceptable_recovery_lag: int = 10000    # group.streams.acceptable.recovery.lag
    assignors: tuple[str, ...] = ("sticky",)  # group.streams.assignors: the first is the default

    @classmethod
    def from_config(cls, config) -> "StreamsGroupSettings":
        return cls(
            session_timeout_ms=config["group.streams.session.timeout.ms"],
            heartbeat_interval_ms=config["group.streams.heartbeat.interval.ms"],
            max_size=config["group.streams.max.size"],
            num_standby_replicas=config["group.streams.num.standby.replicas"],
            initial_rebalance_delay_ms=config["group.streams.initial.rebalance.delay.ms"],
            assignment_interval_ms=config["group.streams.assignment.interval.ms"],
            task_offset_interval_ms=config["group.streams.task.offset.interval.ms"],
            acceptable_recovery_lag=config["group.streams.acceptable.recovery.lag"],
        )


NUM_STANDBY_REPLICAS = "num.standby.replicas"  # the assignment config Kafka records with the group epoch


def standby_replicas(assignment_configs: dict[str, str]) -> int:
    return int(assignment_configs.get(NUM_STANDBY_REPLICAS, "0"))


class PerGroup:
    """A group's value of each setting: its own ``streams.*`` config, else the broker's."""

    _KEYS = {
        "session_timeout_ms": "streams.session.timeout.ms",
        "heartbeat_interval_ms": "streams.heartbeat.interval.ms",
        "num_standby_replicas": "streams.num.standby.replicas",
        "initial_rebalance_delay_ms": "streams.initial.rebalance.delay.ms",
        "assignment_interval_ms": "streams.assignment.interval.ms",
    }

    def __init__(self, settings: StreamsGroupSettings, group_configs=None):
        self.settings = settings
        self.group_configs = group_configs  # broker/groups/configs.py's GroupConfigs

    def get(self, group_id: str, name: str) -> int:
        default = getattr(self.settings, name)
        key = self._KEYS.get(name)
        if key is None or self.group_configs is None:
            return default
        return self.group_configs.get_int(group_id, key, default)

    def assignment_configs(self, group_id: str) -> dict[str, str]:
        """What the assignor is given, and a change of which triggers a new assignment
        (Kafka's streamsGroupAssignmentConfigs)."""
        return {NUM_STANDBY_REPLICAS: str(self.get(group_id, "num_standby_replicas"))}

    def assignor_name(self, group_id: str) -> str:
        """streams.assignor.name when it names a known assignor, else the default (KIP-1357)."""
        name = self.group_configs.get(group_id, "streams.assignor.name") if self.group_configs else None
        return name if name in self.settings.assignors else self.settings.assignors[0]
