"""Consumer groups of the next-generation rebalance protocol (KIP-848).

``ConsumerGroupCoordinator`` (coordinator.py) serves ConsumerGroupHeartbeat and
ConsumerGroupDescribe; ``assignors.py`` computes target assignments and
``reconcile.py`` moves each member toward its target. Which group ids a
consumer group may take is decided by broker/groups/coordinator.py.
"""

from __future__ import annotations

from kipper.broker.groups.consumer.coordinator import ConsumerGroupCoordinator
from kipper.broker.groups.consumer.settings import ConsumerGroupSettings

__all__ = ["ConsumerGroupCoordinator", "ConsumerGroupSettings"]
