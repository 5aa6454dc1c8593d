"""Online migration between classic groups and KIP-848 consumer groups (Kafka's
``group.consumer.migration.policy``: bidirectional, upgrade, downgrade, disabled).

- **Upgrade.** The first ConsumerGroupHeartbeat for the id of a classic group
  with members turns it into a consumer group in place, when the policy allows
  it and every member can be converted (protocol type "consumer", readable
  ConsumerProtocol metadata and assignment). Each classic member keeps its
  partitions and its generation as its member epoch, and stays a classic member
  (broker/groups/consumer/classic_members.py) until it leaves; JoinGroups and
  SyncGroups waiting on the old rebalance are told REBALANCE_IN_PROGRESS.
- **Downgrade.** When the last KIP-848 member of a consumer group leaves (or is
  fenced) and classic members remain, the group turns back into a classic group
  with their subscriptions and assignments, and a rebalance starts so they
  rejoin under the classic protocol.

Pure functions over the engines' data; the GroupCoordinator decides when.
"""

from __future__ import annotations

import structlog

from kipper.broker.groups.classic_model import Group, Member, STABLE
from kipper.broker.groups.classic_model import error_reply
from kipper.broker.groups.consumer.classic_members import ClassicProtocol, ids_of, names_of
from kipper.broker.groups.consumer.model import ConsumerGroup, ConsumerMember
from kipper.broker.groups.consumer.reconcile import MemberAssignment
from kipper.broker.groups.consumer.subscription import subscription_metadata
from kipper.broker.groups.consumer_protocol import encode_assignment, parse_assignment, parse_subscription
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")


def may_upgrade(policy: str) -> bool:
    return policy in ("bidirectional", "upgrade")


def may_downgrade(policy: str) -> bool:
    return policy in ("bidirectional", "downgrade")


def to_consumer_group(classic: Group, topics, now: int, max_size: int) -> ConsumerGroup | None:
    """The consumer group a classic group becomes, or None if a member cannot be converted."""
    if classic.protocol_type != "consumer" or len(classic.members) >= max_size:
        return None
    epoch = max(classic.generation_id, 1)
    group = ConsumerGroup(classic.group_id, group_epoch=epoch, assignment_epoch=epoch)
    for m in classic.members.values():
        name = classic.protocol_name or (m.protocols[0][0] if m.protocols else "")
        subscription = parse_subscription(m.metadata_for(name))
        assigned = parse_assignment(m.assignment)
        if subscription is None or assigned is None:
            return None
        protocols = sorted(m.protocols, key=lambda p: p[0] != name)  # the group's protocol first
        member = ConsumerMember(
            m.member_id, client_id=m.client_id, client_host=m.client_host,
            instance_id=m.group_instance_id, rebalance_timeout_ms=m.rebalance_timeout_ms,
            subscribed_names=tuple(sorted(set(subscription[0]))),
            classic=ClassicProtocol(protocols, m.session_timeout_ms),
            session_deadline=now + m.session_timeout_ms)
        mine = ids_of(topics, assigned)
        member.assignment = MemberAssignment(member_epoch=epoch, assigned=mine)
        group.add(member)
        group.target[m.member_id] = mine
    group.subscription_metadata = subscription_metadata(group.members.values(), topics)
    return group


def abandon_rebalance(classic: Group) -> None:
    """Answer what a classic rebalance left waiting: the members rejoin the new group."""
    for m in classic.members.values():
        for attr in ("join_reply", "sync_reply"):
            reply = getattr(m, attr)
            if reply is not None:
                setattr(m, attr, None)
                reply(error_reply(ErrorCode.REBALANCE_IN_PROGRESS, member_id=m.member_id)
                      if attr == "join_reply" else error_reply(ErrorCode.REBALANCE_IN_PROGRESS))


def only_classic_left(group: ConsumerGroup) -> bool:
    return bool(group.members) and all(m.classic is not None for m in group.members.values())


def to_classic_group(group: ConsumerGroup, topics, now: int) -> Group:
    """The classic group a consumer group of classic members becomes (Stable, with
    their assignments; the caller starts the rebalance)."""
    members = {}
    for m in group.members.values():
        members[m.member_id] = Member(
            m.member_id, m.instance_id, m.client_id, m.client_host, m.classic.session_timeout_ms,
            m.rebalance_timeout_ms, "consumer", list(m.classic.protocols), now,
            assignment=encode_assignment(names_of(topics, m.assignment.assigned)))
    common = None
    for m in members.values():
        names = [p for p, _ in m.protocols]
        common = names if common is None else [p for p in common if p in names]
    classic = Group(group.group_id, state=STABLE, generation_id=group.group_epoch,
                    protocol_type="consumer", protocol_name=(common or [""])[0],
                    leader_id=next(iter(members)), members=members)
    log.info("consumer_group_downgraded", group_id=group.group_id, members=len(members))
    return classic
