"""Classic groups as data: the states, their transitions table, settings, members.

``ClassicGroupCoordinator`` (classic.py) is the engine that moves them; every move
goes through ``Group.transition``, which ``TRANSITIONS`` (broker/transitions.py) checks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable

from kipper.broker.transitions import Transitions
from kipper.protocol.errors import ErrorCode

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

TRANSITIONS = Transitions("classic group", {
    EMPTY: {PREPARING_REBALANCE, DEAD},
    PREPARING_REBALANCE: {COMPLETING_REBALANCE, EMPTY, DEAD},
    COMPLETING_REBALANCE: {PREPARING_REBALANCE, STABLE, DEAD},
    STABLE: {PREPARING_REBALANCE, DEAD},
    DEAD: set(),
})

Reply = Callable[[dict], None]


@dataclass
class GroupSettings:
    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    max_size: int = 2**31 - 1


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    last_heartbeat: int
    assignment: bytes = b""
    join_reply: Reply | None = None
    sync_reply: Reply | None = None
    join_version: int = 0

    def metadata_for(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""


@dataclass
class Group:
    group_id: str
    state: str = EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: dict[str, int] = field(default_factory=dict)  # KIP-394: id -> deadline
    rebalance_deadline: int = 0
    initial_delay_until: int = 0
    # Kafka's pending syncs: the members of this generation that have not sent SyncGroup,
    # removed when the join's rebalance timeout has passed again
    pending_sync: set[str] = field(default_factory=set)
    sync_deadline: int = 0

    def transition(self, target: str) -> None:
        TRANSITIONS.check(self.state, target, self.group_id)
        self.state = target

    @property
    def awaiting_join(self) -> list[Member]:
        return [m for m in self.members.values() if m.join_reply is not None]

    def member_by_instance(self, instance_id: str) -> Member | None:
        for m in self.members.values():
            if m.group_instance_id == instance_id:
                return m
        return None

    def select_protocol(self) -> str:
        """The protocol every member supports that most members list first."""
        candidates = None
        for m in self.members.values():
            names = {p for p, _ in m.protocols}
            candidates = names if candidates is None else candidates & names
        votes: dict[str, int] = {}
        for m in self.members.values():
            for name, _ in m.protocols:  # each member votes for its first candidate
                if name in candidates:
                    votes[name] = votes.get(name, 0) + 1
                    break
        return max(sorted(votes), key=lambda n: votes[n])


def join_response(group: Group, member: Member) -> dict:
    """A JoinGroup answer at the group's generation: the leader gets the members."""
    is_leader = member.member_id == group.leader_id
    members = []
    if is_leader:
        members = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "metadata": m.metadata_for(group.protocol_name)}
                   for m in group.members.values()]
    return {"error_code": 0, "generation_id": group.generation_id,
            "protocol_type": group.protocol_type, "protocol_name": group.protocol_name,
            "leader": group.leader_id, "member_id": member.member_id,
            "skip_assignment": False, "members": members}


# what a join answers when it names a protocol twice and reaches the point where Kafka keeps
# the member's protocols: Kafka fails inside there, and the handler closes the connection
PROTOCOL_NAMED_TWICE = {"error_code": -1}


def named_twice(protocols) -> bool:
    return len({name for name, _ in protocols}) != len(protocols)


def closed_join(_answer) -> None:
    """The pending join of a new member whose request named a protocol twice: Kafka keeps the
    member, waiting to join, and closes its connection; its answer goes nowhere. The join
    cannot complete while it is there (Kafka's vote counts the repeated protocol twice, so no
    protocol is supported by every member), until its session ends."""


def error_reply(code: ErrorCode, **extra) -> dict:
    return {"error_code": int(code), **extra}


def session_refusal(settings: GroupSettings, req) -> dict | None:
    """A JoinGroup's session timeout out of the range allowed: INVALID_SESSION_TIMEOUT, which
    Kafka answers first, whatever group holds the id (a consumer group's too)."""
    if not settings.min_session_timeout_ms <= req.session_timeout_ms <= settings.max_session_timeout_ms:
        return error_reply(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=req.member_id)
    return None


def subscription_topics(metadata: bytes) -> set[str] | None:
    """The topics of a ConsumerProtocolSubscription (read with its v0 prefix, as Kafka
    does: version, then [topic]); None when the bytes are not one."""
    try:
        if len(metadata) < 6:
            return None
        (count,) = struct.unpack_from(">i", metadata, 2)
        pos, out = 6, set()
        for _ in range(count):
            (size,) = struct.unpack_from(">h", metadata, pos)
            out.add(bytes(metadata[pos + 2:pos + 2 + size]).decode("utf-8"))
            pos += 2 + size
        return out
    except (struct.error, UnicodeDecodeError):
        return None
