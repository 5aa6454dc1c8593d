"""Streams groups of Kafka Streams' own rebalance protocol (KIP-1071).

``StreamsGroupCoordinator`` (coordinator.py) serves StreamsGroupHeartbeat; the
topology is set against the topics in topology.py, tasks are spread by the sticky
assignor (assignor.py) and each member moves toward its target in reconcile.py.
Every change is a record (records.py) written to ``__consumer_offsets``. Which
group ids a streams group may take is decided by broker/groups/coordinator.py.
"""

from __future__ import annotations

from kipper.broker.groups.streams.coordinator import StreamsGroupCoordinator
from kipper.broker.groups.streams.settings import StreamsGroupSettings

__all__ = ["StreamsGroupCoordinator", "StreamsGroupSettings"]
