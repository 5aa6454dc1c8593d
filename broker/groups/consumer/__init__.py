"""Consumer groups of the next-generation rebalance protocol (KIP-848).

``ConsumerGroupCoordinator`` (coordinator.py) serves ConsumerGroupHeartbeat and
ConsumerGroupDescribe; ``assignors.py`` computes target assignments and
``reconcile.py`` moves each member toward its target. ``attach`` builds the
coordinator for a broker and wires it to the classic and share engines, so that
a group id belongs to one kind of group at a time.
"""

from __future__ import annotations

from kipper.broker.groups.consumer.coordinator import ConsumerGroupCoordinator
from kipper.broker.groups.consumer.settings import ConsumerGroupSettings


def attach(state) -> ConsumerGroupCoordinator:
    classic = state.groups
    share = state.share.coordinator

    def held_elsewhere(group_id: str) -> bool:
        group = classic.groups.get(group_id)
        in_use = group is not None and bool(group.members or group.pending_members)
        return in_use or group_id in share.groups

    def drop_empty_classic(group_id: str) -> None:
        # Kafka deletes an empty classic group (a simple group, say) when a consumer
        # group takes its id; the committed offsets stay.
        classic.groups.pop(group_id, None)

    coordinator = ConsumerGroupCoordinator(ConsumerGroupSettings.from_config(state.config),
                                           state.topics, foreign_group=held_elsewhere,
                                           on_create=drop_empty_classic)
    classic_foreign = classic.foreign_group
    classic.foreign_group = lambda g: classic_foreign(g) or not coordinator.release_for_classic(g)
    share_other = share.other_group_exists
    share.other_group_exists = lambda g: share_other(g) or coordinator.owns(g)
    state.extensions.setdefault("list_groups", []).append(coordinator.list_groups)
    return coordinator


__all__ = ["ConsumerGroupCoordinator", "ConsumerGroupSettings", "attach"]
