"""What one broker holds, and what a handler sees of a request.

``BrokerState`` gathers the engines (topics, groups, offsets, ...) and the few
shell services handlers need (the append notifier for Fetch long-polls, the
clock). ``RequestContext`` is the per-request view: header fields, the
listener and peer, and the connection's session (authentication).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kipper.broker.config import BrokerConfig, Listener
from kipper.broker.groups.classic import ClassicGroupCoordinator, GroupSettings
from kipper.broker.groups.configs import GroupConfigs
from kipper.broker.groups.consumer import attach as attach_consumer_groups
from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.log.topics import TopicManager
from kipper.broker.metrics import Metrics
from kipper.broker.notify import AppendNotifier
from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.producer_state.registry import ProducerStates
from kipper.broker.quota.service import ProducerIdQuotas
from kipper.broker.security.service import Security
from kipper.broker.share.service import ShareGroups
from kipper.broker.txn.service import Transactions


def now_ms() -> int:
    return int(time.time() * 1000)


class BrokerState:
    def __init__(self, config: BrokerConfig):
        self.config = config
        self.node_id: int = config["node.id"]
        self.cluster_id: str = config["cluster.id"]
        self.topics = TopicManager(num_partitions=config["num.partitions"],
                                   auto_create=config["auto.create.topics.enable"])
        self.groups = ClassicGroupCoordinator(GroupSettings(
            initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
            min_session_timeout_ms=config["group.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.max.session.timeout.ms"],
            max_size=config["group.max.size"]))
        self.offsets = OffsetStore(config["offsets.retention.minutes"] * 60_000)
        self.producer_ids = ProducerIdManager()
        self.producer_states = ProducerStates(config["producer.state.mode"],
                                              config["max.in.flight.sequence.number.per.connection"],
                                              config["producer.id.expiration.ms"])
        self.appends = AppendNotifier()
        self.metrics = Metrics()
        self.metrics.providers["producer_state"] = self.producer_states.snapshot
        # listener name -> (host, port) given to clients; filled once bound
        self.advertised: dict[str, tuple[str, int]] = {}
        self.clock = now_ms
        self.extensions: dict[str, Any] = {}
        self.group_configs = GroupConfigs()
        self.share = ShareGroups.attach(self)  # share groups (seed 004); registers its hooks
        self.security = Security.attach(self)  # SASL and TLS sessions, SCRAM credentials (issue #6)
        self.quotas = ProducerIdQuotas.attach(self)  # producer-id rate quotas (seed 002)
        self.txn = Transactions.attach(self)  # transaction coordinator, LSO and markers (KIP-98)
        self.groups.foreign_group = lambda group_id: group_id in self.share.coordinator.groups
        # KIP-848 consumer groups; wires the classic and share id checks to them
        self.consumer_groups = attach_consumer_groups(self)

    def log_start_floor(self, topic: str, partition: int) -> int | None:
        """The lowest offset the log start may move to, if something needs
        older data kept (share-group checkpoints, seed 004)."""
        floors = [f for f in (hook(topic, partition) for hook in self.extensions.get("log_start_floor", ()))
                  if f is not None]
        return min(floors) if floors else None

    def advertised_address(self, listener_name: str) -> tuple[str, int]:
        return self.advertised[listener_name]

    def set_bound(self, bound: list[tuple[Listener, int]]) -> None:
        explicit = {a.name: (a.host, a.port) for a in self.config["advertised.listeners"]}
        for listener, port in bound:
            if listener.name in explicit:
                self.advertised[listener.name] = explicit[listener.name]
            else:
                host = listener.host if listener.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
                self.advertised[listener.name] = (host, port)


@dataclass
class Session:
    """Per-connection state that outlives one request."""

    listener: str
    peer: str
    security_protocol: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    authenticated: bool = True
    extras: dict = field(default_factory=dict)
    # set by handlers, applied by the connection after the answer goes out (issue #6)
    mute_ms: int = 0                     # quota throttle: stop reading this long
    close_after_response: bool = False  # failed SASL login
    admitted_producer_ids: set = field(default_factory=set)  # producer-id quota fast path


@dataclass
class RequestContext:
    state: BrokerState
    session: Session
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None

    @property
    def now(self) -> int:
        return self.state.clock()
