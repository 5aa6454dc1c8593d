"""Classic consumer groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup), sans-I/O.

A group moves Empty -> PreparingRebalance -> CompletingRebalance -> Stable and
back to PreparingRebalance whenever membership or metadata changes (the table
in ``TRANSITIONS``). JoinGroup and SyncGroup answers may be deferred: callers
pass a ``reply`` callable that the engine calls, now or when the rebalance
completes. Time is an argument (``now`` in ms); the shell calls ``tick(now)``
to expire sessions and finish joins, so every timeout is testable without
waiting.
"""

from __future__ import annotations

import uuid
from collections import Counter

import structlog

from kipper.broker.groups.classic_model import (  # noqa: F401  (the model is public here too)
    COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, PROTOCOL_NAMED_TWICE, STABLE, TRANSITIONS, Group,
    GroupSettings, Member, Reply, closed_join, error_reply as _error, join_response, named_twice, session_refusal,
    subscription_topics,
)
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

class ClassicGroupCoordinator:
    def __init__(self, settings: GroupSettings | None = None, journal=None):
        """``journal`` (broker/groups/journal.py) records a group's metadata when a
        rebalance completes or the group empties, so a restart restores it."""
        self.settings = settings or GroupSettings()
        self.journal = journal
        self.groups: dict[str, Group] = {}
        self.rebalances = 0

    def group(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def get_or_create(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        return group

    # --- JoinGroup ---------------------------------------------------------------

    def join(self, req, *, version: int, client_id: str, client_host: str, now: int,
             reply: Reply, held_elsewhere: bool = False) -> None:
        """``held_elsewhere``: another kind of group holds the id (the GroupCoordinator knows)."""
        s = self.settings
        group_id = req.group_id
        if not group_id:
            return reply(_error(ErrorCode.INVALID_GROUP_ID, member_id=req.member_id))
        session = req.session_timeout_ms
        if (refused := session_refusal(s, req)) is not None:
            return reply(refused)
        if held_elsewhere:  # (after the session timeout, as on Kafka)
            return reply(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))  # (Kafka echoes no member id)
        if req.member_id and group_id not in self.groups:
            # Kafka creates a group only for a member without an id: a made-up (or stale) id
            # for a group that does not exist is UNKNOWN_MEMBER_ID, and leaves no group behind
            return reply(_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=req.member_id))
        # v0 has none: the session timeout (Kafka's JoinGroupRequest); later ones as given, 0 too
        rebalance_timeout = session if version == 0 else req.rebalance_timeout_ms
        group = self.get_or_create(group_id)
        if group.state == DEAD:
            return reply(_error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=req.member_id))
        protocols = [(p.name, p.metadata) for p in req.protocols]
        if not req.protocol_type or not protocols:
            return reply(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id))
        if group.members and (group.protocol_type != req.protocol_type
                              or not self._supports_common(group, protocols)):
            return reply(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=req.member_id))
        instance_id = req.get("group_instance_id")
        member_id = req.member_id

        if not member_id:  # (an instance id of "" is a static member's too, as Kafka's Option of it)
            if instance_id is not None:
                existing = group.member_by_instance(instance_id)
                if existing is not None:
                    return self._replace_static(group, existing, protocols, req.protocol_type, session,
                                                rebalance_timeout, version, now, reply)
            if len(group.members) + len(group.pending_members) >= s.max_size:
                return reply(_error(ErrorCode.GROUP_MAX_SIZE_REACHED))
            # Kafka's generateMemberId: the instance id for a static member, else the client id
            member_id = f"{instance_id if instance_id is not None else client_id or ''}-{uuid.uuid4()}"
            if version >= 4 and instance_id is None:
                # KIP-394: hand out the id first, the member rejoins with it
                group.pending_members[member_id] = now + session
                return reply(_error(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id,
                                    generation_id=-1))
            return self._add_member(group, member_id, instance_id, client_id, client_host, session,
                                    rebalance_timeout, req.protocol_type, protocols, version,
                                    now, reply)

        if member_id in group.pending_members:
            del group.pending_members[member_id]
            return self._add_member(group, member_id, instance_id, client_id, client_host, session,
                                    rebalance_timeout, req.protocol_type, protocols, version,
                                    now, reply)
        member = group.members.get(member_id)
        if member is None:
            return reply(_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))
        if instance_id and member.group_instance_id and instance_id != member.group_instance_id:
            return reply(_error(ErrorCode.FENCED_INSTANCE_ID, member_id=member_id))
        return self._rejoin(group, member, protocols, req.protocol_type, session,
                            rebalance_timeout, version, now, reply)

    def _supports_common(self, group: Group, protocols) -> bool:
        """Kafka's ClassicGroup.supportsProtocols: a protocol every member votes for (the
        joiner's current ones too), one vote per entry: a member that named one twice votes
        twice, so no count matches the members and nothing more can join."""
        votes = Counter(p for m in group.members.values() for p, _ in m.protocols)
        return any(votes[p] == len(group.members) for p, _ in protocols)

    def _add_member(self, group, member_id, instance_id, client_id, client_host, session,
                    rebalance_timeout, protocol_type, protocols, version, now, reply) -> None:
        twice = named_twice(protocols)
        member = Member(member_id, instance_id, client_id, client_host, session, rebalance_timeout,
                        protocol_type, protocols, now, join_reply=closed_join if twice else reply,
                        join_version=version)
        if not group.members:
            group.protocol_type = protocol_type
        group.members[member_id] = member
        self._prepare_rebalance(group, now, f"member {member_id} joined")
        if twice:
            return reply(PROTOCOL_NAMED_TWICE)
        self._maybe_complete_join(group, now)

    def _rejoin(self, group, member, protocols, protocol_type, session, rebalance_timeout,
                version, now, reply) -> None:
        if named_twice(protocols):
            return reply(PROTOCOL_NAMED_TWICE)
        changed = member.protocols != protocols
        member.protocols = protocols
        member.protocol_type = protocol_type
        member.session_timeout_ms = session
        member.rebalance_timeout_ms = rebalance_timeout
        member.last_heartbeat = now
        member.join_version = version
        if group.state == PREPARING_REBALANCE:
            member.join_reply = reply
            self._maybe_complete_join(group, now)
        elif group.state == COMPLETING_REBALANCE or group.state == STABLE:
            if changed or (group.state == STABLE and member.member_id == group.leader_id):
                member.join_reply = reply
                self._prepare_rebalance(group, now, f"member {member.member_id} rejoined")
                self._maybe_complete_join(group, now)
            else:
                # nothing changed: answer with the current generation
                reply(join_response(group, member))
        else:  # EMPTY with a known member cannot happen; treat as a new join
            member.join_reply = reply
            self._prepare_rebalance(group, now, "rejoin of empty group")
            self._maybe_complete_join(group, now)

    def _replace_static(self, group, existing, protocols, protocol_type, session, rebalance_timeout,
                        version, now, reply) -> None:
        """A static member joins again without its member id (a restarted instance): it takes
        the old member's place under a new id, and the old id is fenced (Kafka's
        replaceStaticMember). In a stable group whose protocol stays, no rebalance: KIP-814
        answers a leader on JoinGroup v9+ with the members and skip_assignment, so it learns
        it leads without assigning again; older versions get no members and the leader id as
        it was before the replacement (Kafka 4.4's updateStaticMemberThenRebalanceOrCompleteJoin)."""
        if named_twice(protocols):
            return reply(PROTOCOL_NAMED_TWICE)
        previous_leader = group.leader_id
        old_id = existing.member_id
        new_id = f"{existing.group_instance_id}-{uuid.uuid4()}"
        for pending in ("join_reply", "sync_reply"):
            answer = getattr(existing, pending)
            if answer is not None:
                setattr(existing, pending, None)
                answer(_error(ErrorCode.FENCED_INSTANCE_ID, member_id=old_id))
        del group.members[old_id]
        existing.member_id = new_id
        group.members[new_id] = existing
        if previous_leader == old_id:
            group.leader_id = new_id
        log.info("static_member_replaced", group_id=group.group_id, instance_id=existing.group_instance_id,
                 old_member_id=old_id, member_id=new_id)
        existing.protocols = protocols
        existing.protocol_type = protocol_type
        existing.session_timeout_ms = session
        existing.rebalance_timeout_ms = rebalance_timeout
        existing.last_heartbeat = now
        existing.join_version = version
        if group.state == STABLE and group.protocol_name == group.select_protocol():
            answer = join_response(group, existing)
            if version >= 9:
                answer["skip_assignment"] = existing.member_id == group.leader_id
            else:
                answer.update(members=[], leader=previous_leader)
            return reply(answer)
        existing.join_reply = reply
        if group.state != PREPARING_REBALANCE:
            self._prepare_rebalance(group, now, f"static member {new_id} joined again")
        self._maybe_complete_join(group, now)

    def _prepare_rebalance(self, group: Group, now: int, reason: str) -> None:
        if group.state == PREPARING_REBALANCE:
            return
        if group.state == COMPLETING_REBALANCE:
            # members waiting on SyncGroup must rejoin; the assignments being made are void
            # (Kafka keeps the previous generation's until then, and describes them)
            for m in group.members.values():
                m.assignment = b""
                if m.sync_reply is not None:
                    m.sync_reply(_error(ErrorCode.REBALANCE_IN_PROGRESS))
                    m.sync_reply = None
        was_empty = group.state == EMPTY
        group.pending_sync.clear()
        group.transition(PREPARING_REBALANCE)
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        group.rebalance_deadline = now + timeout
        group.initial_delay_until = now + self.settings.initial_rebalance_delay_ms if was_empty else 0
        log.info("group_rebalance", group_id=group.group_id, generation=group.generation_id,
                 reason=reason, members=len(group.members))

    def _maybe_complete_join(self, group: Group, now: int) -> None:
        if group.state != PREPARING_REBALANCE:
            return
        if now < group.initial_delay_until or any(m.join_reply is closed_join for m in group.members.values()):
            return
        all_joined = all(m.join_reply is not None for m in group.members.values())
        if (all_joined and not group.pending_members) or now >= group.rebalance_deadline:
            self._complete_join(group, now)

    def _complete_join(self, group: Group, now: int) -> None:
        for m in list(group.members.values()):
            if m.join_reply is None:
                log.info("member_removed", group_id=group.group_id, member_id=m.member_id,
                         reason="did not rejoin before the rebalance timeout")
                del group.members[m.member_id]
        group.pending_members.clear()
        if not group.members:
            group.generation_id += 1
            group.protocol_name = None
            group.leader_id = None
            group.transition(EMPTY)
            self._store(group, now)
            return
        group.generation_id += 1
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.transition(COMPLETING_REBALANCE)
        group.pending_sync = set(group.members)
        group.sync_deadline = now + max(m.rebalance_timeout_ms for m in group.members.values())
        self.rebalances += 1
        for m in list(group.members.values()):
            reply, m.join_reply = m.join_reply, None
            m.last_heartbeat = now
            reply(join_response(group, m))
        self._expire_syncs(group, now)  # a rebalance timeout of 0: Kafka's timer fires at once

    # --- SyncGroup ---------------------------------------------------------------

    def sync(self, req, *, now: int, reply: Reply) -> None:
        group = self.groups.get(req.group_id)
        if group is None or group.state == DEAD:
            return reply(_error(ErrorCode.UNKNOWN_MEMBER_ID))
        code = self.validate_member(group, req.member_id, req.get("group_instance_id"))
        if code != ErrorCode.NONE:
            return reply(_error(code))
        member = group.members[req.member_id]
        if req.generation_id != group.generation_id:
            return reply(_error(ErrorCode.ILLEGAL_GENERATION))
        ptype = req.get("protocol_type")
        pname = req.get("protocol_name")
        if (ptype and ptype != group.protocol_type) or (pname and pname != group.protocol_name):
            return reply(_error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        member.last_heartbeat = now
        if group.state == PREPARING_REBALANCE:
            return reply(_error(ErrorCode.REBALANCE_IN_PROGRESS))
        group.pending_sync.discard(member.member_id)
        if group.state == STABLE:
            return reply(self._sync_response(group, member))
        # COMPLETING_REBALANCE
        member.sync_reply = reply
        if member.member_id == group.leader_id:
            given = {a.member_id: a.assignment for a in req.assignments}
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            group.transition(STABLE)
            self._store(group, now)
            for m in group.members.values():
                if m.sync_reply is not None:
                    r, m.sync_reply = m.sync_reply, None
                    r(self._sync_response(group, m))

    def _sync_response(self, group: Group, member: Member) -> dict:
        return {"error_code": 0, "protocol_type": group.protocol_type,
                "protocol_name": group.protocol_name, "assignment": member.assignment}

    # --- Heartbeat and LeaveGroup ------------------------------------------------

    def heartbeat(self, req, *, now: int) -> dict:
        group = self.groups.get(req.group_id)
        if group is None or group.state == DEAD:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID)
        code = self.validate_member(group, req.member_id, req.get("group_instance_id"))
        if code != ErrorCode.NONE:
            return _error(code)
        member = group.members[req.member_id]
        if req.generation_id != group.generation_id:
            return _error(ErrorCode.ILLEGAL_GENERATION)
        member.last_heartbeat = now
        if group.state == PREPARING_REBALANCE:
            return _error(ErrorCode.REBALANCE_IN_PROGRESS)
        return _error(ErrorCode.NONE)

    def leave(self, group_id: str, identities: list[tuple[str, str | None]], *, now: int) -> tuple[ErrorCode, list[dict]]:
        """Remove members given as (member_id, group_instance_id)."""
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.NONE, [{"member_id": mid, "group_instance_id": iid,
                                     "error_code": int(ErrorCode.UNKNOWN_MEMBER_ID)}
                                    for mid, iid in identities]
        results = []
        removed = False
        for member_id, instance_id in identities:
            if not member_id:  # an admin removing a static member by its instance id
                member = group.member_by_instance(instance_id) if instance_id else None
                code = ErrorCode.NONE if member is not None else ErrorCode.UNKNOWN_MEMBER_ID
            elif member_id in group.pending_members:
                del group.pending_members[member_id]
                results.append({"member_id": member_id, "group_instance_id": instance_id,
                                "error_code": 0})
                continue
            else:
                code = self.validate_member(group, member_id, instance_id)
                member = group.members.get(member_id) if code == ErrorCode.NONE else None
            if member is None:
                results.append({"member_id": member_id, "group_instance_id": instance_id,
                                "error_code": int(code)})
                continue
            self._remove_member(group, member, now, "left the group")
            removed = True
            # the member id as the request gave it: "" for a static member removed by its
            # instance id (Kafka echoes the request)
            results.append({"member_id": member_id, "group_instance_id": instance_id,
                            "error_code": 0})
        if removed:
            self._maybe_complete_join(group, now)
        return ErrorCode.NONE, results

    def _remove_member(self, group: Group, member: Member, now: int, reason: str) -> None:
        del group.members[member.member_id]
        if member.join_reply is not None:
            member.join_reply(_error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member.member_id))
            member.join_reply = None
        if member.sync_reply is not None:
            member.sync_reply(_error(ErrorCode.UNKNOWN_MEMBER_ID))
            member.sync_reply = None
        log.info("member_removed", group_id=group.group_id, member_id=member.member_id, reason=reason)
        if group.leader_id == member.member_id:
            group.leader_id = next(iter(group.members), None)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self._prepare_rebalance(group, now, f"member {member.member_id} {reason}")
        if group.state == PREPARING_REBALANCE and not group.members:
            # nobody left to wait for
            self._complete_join(group, now)

    def adopt(self, group: Group, now: int) -> None:
        """A group converted from a consumer group (migration.py): its members rejoin."""
        self.groups[group.group_id] = group
        self._prepare_rebalance(group, now, "converted from a consumer group")
        self._store(group, now)

    # --- durability --------------------------------------------------------------------

    def _store(self, group: Group, now: int) -> None:
        if self.journal is not None:
            self.journal.group_stored(group, now)

    def restore_group(self, group_id: str, value, now: int) -> Group:
        """A group as its last GroupMetadataValue left it; members get a whole session
        from ``now`` to heartbeat again."""
        group = self.get_or_create(group_id)
        group.generation_id = value.generation
        group.protocol_type = value.protocol_type or None
        group.protocol_name = value.protocol
        group.leader_id = value.leader
        for m in value.members:
            group.members[m.member_id] = Member(
                m.member_id, m.group_instance_id, m.client_id, m.client_host, m.session_timeout,
                m.rebalance_timeout if m.rebalance_timeout > 0 else m.session_timeout,
                value.protocol_type, [(value.protocol or "", m.subscription or b"")], now,
                assignment=m.assignment or b"")
        if group.members:
            group.state = STABLE
        return group

    # --- time ------------------------------------------------------------------------

    def tick(self, now: int) -> None:
        """Expire sessions and pending ids, finish joins whose wait is over."""
        for group in list(self.groups.values()):
            for pid, deadline in list(group.pending_members.items()):
                if now >= deadline:
                    del group.pending_members[pid]
            for member in list(group.members.values()):
                waiting = member.join_reply not in (None, closed_join) or member.sync_reply is not None
                if not waiting and now - member.last_heartbeat > member.session_timeout_ms:
                    self._remove_member(group, member, now, "session timed out")
            self._expire_syncs(group, now)
            self._maybe_complete_join(group, now)

    def _expire_syncs(self, group: Group, now: int) -> None:
        """Members that did not SyncGroup before the rebalance timeout leave the group."""
        if group.pending_sync and now >= group.sync_deadline and group.state in (COMPLETING_REBALANCE, STABLE):
            late, group.pending_sync = group.pending_sync, set()
            for member_id in late:
                if member_id in group.members:
                    self._remove_member(group, group.members[member_id], now,
                                        "did not sync before the rebalance timeout")

    # --- offsets and descriptions --------------------------------------------------------

    def validate_member(self, group: Group, member_id: str, instance_id: str | None) -> ErrorCode:
        """Kafka's ClassicGroup.validateMember: a static member replaced by a newer
        instance with the same group.instance.id is fenced, not unknown."""
        if instance_id is not None:
            current = group.member_by_instance(instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current.member_id != member_id:
                log.info("static_member_fenced", group_id=group.group_id, member_id=member_id,
                         instance_id=instance_id, current=current.member_id)
                return ErrorCode.FENCED_INSTANCE_ID
        return ErrorCode.NONE if member_id in group.members else ErrorCode.UNKNOWN_MEMBER_ID

    def validate_commit(self, group_id: str, member_id: str, generation_id: int,
                        instance_id: str | None = None, transactional: bool = False,
                        api_version: int = -1) -> ErrorCode:
        """Kafka's ClassicGroup.validateOffsetCommit. A group that does not exist yet
        takes commits with generation -1 (a simple group); with a generation, OffsetCommit
        v9+ and TxnOffsetCommit v6+ are told GROUP_ID_NOT_FOUND, older versions
        ILLEGAL_GENERATION (Kafka's OffsetMetadataManager)."""
        group = self.groups.get(group_id)
        if group is None:
            if generation_id < 0:
                return ErrorCode.NONE
            if api_version >= (6 if transactional else 9):
                return ErrorCode.GROUP_ID_NOT_FOUND
            return ErrorCode.ILLEGAL_GENERATION
        if group.state == DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state == EMPTY:
            return ErrorCode.NONE  # admin tools, assign() consumers, KIP-848 members' -1
        if generation_id >= 0 or member_id or instance_id is not None:
            code = self.validate_member(group, member_id, instance_id)
            if code != ErrorCode.NONE:
                return code
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        elif not transactional and group.state != EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and group.state == COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def delete_group(self, group_id: str, now: int) -> None:
        """DeleteGroups of an empty group: gone, with a tombstone in the journal."""
        if self.groups.pop(group_id, None) is not None and self.journal is not None:
            self.journal.group_deleted(group_id, now)

    def subscribed_topics(self, group_id: str) -> set[str] | None:
        """The topics the members of a "consumer" group subscribe to (read from their
        subscriptions, as Kafka's computeSubscribedTopics); None when unknown."""
        group = self.groups.get(group_id)
        if group is None or group.protocol_type != "consumer":
            return None
        topics: set[str] = set()
        for m in group.members.values():
            found = subscription_topics(m.metadata_for(group.protocol_name or m.protocols[0][0]))
            if found is None:
                return None
            topics |= found
        return topics

    def describe(self, group_id: str) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            return {"error_code": 0, "group_id": group_id, "group_state": DEAD,
                    "protocol_type": "", "protocol_data": "", "members": []}
        # Kafka names the protocol and shows each member's metadata only in a stable group:
        # during a rebalance both are being chosen
        stable = group.state == STABLE
        return {
            "error_code": 0, "group_id": group_id, "group_state": group.state,
            "protocol_type": group.protocol_type or "",
            "protocol_data": (group.protocol_name or "") if stable else "",
            "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                         "client_id": m.client_id, "client_host": m.client_host,
                         "member_metadata": m.metadata_for(group.protocol_name) if stable else b"",
                         "member_assignment": m.assignment} for m in group.members.values()],
        }
