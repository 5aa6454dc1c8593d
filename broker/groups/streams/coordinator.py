"""Streams groups (KIP-1071, StreamsGroupHeartbeat), sans-I/O.

A heartbeat reads the group and writes records (records.py), which are applied at
once and handed to the journal: that is the only way a group changes, so replaying
``__consumer_offsets`` after a crash rebuilds it. A join brings the topology; the
first one sets it (a later one with another topology at the same or a newer epoch
is refused, as Kafka 4.4 does not support topology updates). The topology is set
against the topics (topology.py) whenever they change; the internal topics it lacks
are returned for the shell to create. A member, topology, topic or assignment-config
change bumps the group epoch; the next heartbeat computes a new target with the
sticky assignor (after ``group.streams.initial.rebalance.delay.ms`` for a new group,
and no sooner than ``group.streams.assignment.interval.ms`` after the previous one),
and each member moves toward its target on its own heartbeats (reconcile.py).
``tick(now)`` fences members whose session or rebalance timeout ran out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import structlog

from kipper.broker.groups.streams import records as rec
from kipper.broker.groups.streams.assignor import MemberSpec, assign
from kipper.broker.groups.streams.heartbeat import (
    HeartbeatError, check_epoch, check_owned_tasks, endpoints, error_body, owned_tasks, task_ids, validate,
)
from kipper.broker.groups.streams.model import (
    JOIN_EPOCH, LEAVE_EPOCH, MEMBER_UNKNOWN, STATIC_LEAVE_EPOCH, UNREVOKED_TASKS, StreamsGroup, StreamsMember,
    Target, pairs,
)
from kipper.broker.groups.streams.reconcile import Reconciler
from kipper.broker.groups.streams.settings import PerGroup, StreamsGroupSettings, standby_replicas
from kipper.broker.groups.streams.topology import (
    ASSIGNMENT_DELAYED, SHUTDOWN_APPLICATION, STALE_TOPOLOGY, InvalidTopology, configure, from_wire,
)
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)


@dataclass
class HeartbeatResult:
    body: dict
    to_create: dict = field(default_factory=dict)  # internal topic name -> topology.InternalTopic


class StreamsGroupCoordinator:
    def __init__(self, settings: StreamsGroupSettings, topics, group_configs=None, journal=None):
        """``journal(group_id, records, now)`` writes records to __consumer_offsets."""
        self.settings = settings
        self.per_group = PerGroup(settings, group_configs)
        self.topics = topics
        self.journal = journal
        self._unwritten: list | None = None  # a heartbeat's records, journaled once it succeeded
        self.creation_errors: dict[str, tuple[str, int]] = {}  # internal topic -> (why it failed, until)
        self.groups: dict[str, StreamsGroup] = {}
        self.rebalances = 0  # target assignments computed

    def owns(self, group_id: str) -> bool:
        return group_id in self.groups

    def _partition_count(self, name: str) -> int | None:
        topic = self.topics.get(name)
        return None if topic is None else len(topic.partitions)

    def write(self, group_id: str, records: list, now: int) -> None:
        """Apply records, then journal them (the one path by which groups change)."""
        for r in records:
            rec.apply(self.groups, r)
        if self._unwritten is not None:
            self._unwritten.extend(records)
        elif records and self.journal is not None:
            self.journal(group_id, records, now)

    # --- StreamsGroupHeartbeat ---------------------------------------------------------------------

    def heartbeat(self, req, *, version: int, client_id: str, client_host: str, now: int,
                  held_elsewhere: bool = False) -> HeartbeatResult:
        """``held_elsewhere``: another kind of group holds the id (the GroupCoordinator knows)."""
        try:
            validate(req)
            if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                return HeartbeatResult(self._leave(req, now, held_elsewhere))
        except HeartbeatError as exc:
            return HeartbeatResult(error_body(exc.code, exc.message))
        gid = req.group_id
        created = gid not in self.groups
        self._unwritten = []  # the heartbeat's records go to the journal as one batch
        try:
            result = self._heartbeat(req, version, client_id, client_host, now, held_elsewhere, created)
            written, self._unwritten = self._unwritten, None
            if written and self.journal is not None:
                self.journal(gid, written, now)
            return result
        except (HeartbeatError, InvalidTopology) as exc:
            # every check comes before the first record is applied: a failed heartbeat leaves
            # nothing behind (Kafka rolls its records back), but the group it would have made
            self._unwritten = None
            if created:
                self.groups.pop(gid, None)
            if isinstance(exc, InvalidTopology):
                return HeartbeatResult(error_body(ErrorCode.STREAMS_INVALID_TOPOLOGY, str(exc)))
            return HeartbeatResult(error_body(exc.code, exc.message))

    def _group_for(self, gid: str, joining: bool, held_elsewhere: bool, created: bool) -> StreamsGroup:
        if held_elsewhere:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {gid} is not a streams group.")
        if created:
            if not joining:
                raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {gid} not found.")
            self.groups[gid] = StreamsGroup(gid)
        return self.groups[gid]

    def _member_for(self, group: StreamsGroup, req, records: list) -> tuple[StreamsMember, StreamsMember | None]:
        """(member, the static member it replaces or None), after the epoch checks."""
        mid, epoch, instance_id = req.member_id, req.member_epoch, req.get("instance_id")
        joining = epoch == JOIN_EPOCH
        if joining and not group.static_member(instance_id):
            s = self.settings
            if len(group.members) >= s.max_size and mid not in group.members:
                raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                     f"The streams group has reached its maximum capacity of {s.max_size} members.")
        if instance_id is None or (joining and group.static_member(instance_id) is None):
            member = group.members.get(mid)
            if member is None:
                if not joining:
                    raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                         f"Member {mid} is not a member of group {group.group_id}.")
                return StreamsMember(mid), None
            check_epoch(member, epoch, req)
            return member, None
        old = group.static_member(instance_id)
        if not joining:
            if old is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if old.member_id != mid:
                raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID, f"Static member {mid} with instance id "
                                     f"{instance_id} was fenced by member {old.member_id}.")
            check_epoch(old, epoch, req)
            return old, None
        if old.member_epoch != STATIC_LEAVE_EPOCH:
            raise HeartbeatError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                 f"Static member {mid} with instance id {instance_id} cannot join the group "
                                 f"because the instance id is owned by {old.member_id} member.")
        new = replace(old, member_id=mid, member_epoch=0, previous_epoch=0)
        gid = group.group_id
        records += [*rec.member_removed(gid, old.member_id), rec.member_metadata(gid, new),
                    rec.target_member(gid, mid, group.target.get(old.member_id, Target())),
                    rec.current_assignment(gid, new)]
        log.info("streams_static_member_replaced", group_id=gid, instance_id=instance_id, member_id=mid,
                 replaced=old.member_id)
        return new, old

    def _heartbeat(self, req, version: int, client_id: str, client_host: str, now: int, held_elsewhere: bool,
                   created: bool) -> HeartbeatResult:
        gid, mid, epoch = req.group_id, req.member_id, req.member_epoch
        joining = epoch == JOIN_EPOCH
        group = self._group_for(gid, joining, held_elsewhere, created)
        self._initial_delay_over(group, now)  # as if its timer fired on time
        was_empty = not group.members
        records: list = []
        statuses: list[dict] = []
        member, replaced = self._member_for(group, req, records)

        # 1. the member's own data
        updated = self._updated_member(member, req, client_id, client_host, joining)
        recompute = False
        if updated.metadata() != member.metadata():
            records.append(rec.member_metadata(gid, updated))
            recompute = (req.get("instance_id") is None
                         or updated.epoch_relevant() != member.epoch_relevant())
        # 2. the topology: the first join sets it
        topology = self._topology(group, req, records)
        if topology.epoch > updated.topology_epoch:
            statuses.append({"status_code": STALE_TOPOLOGY, "status_detail":
                             f"The member's topology epoch {updated.topology_epoch} is behind the group's "
                             f"topology epoch {topology.epoch}."})
        # 3. the topology against the topics (again whenever they changed)
        metadata_hash = self._metadata_hash(topology)
        if metadata_hash != group.metadata_hash:
            recompute = True
        configured = group.configured
        if configured is None or metadata_hash != group.metadata_hash or configured.epoch != topology.epoch:
            configured = configure(topology, self._partition_count)
        validated = topology.epoch if configured.ready else -1
        if configured.ready:
            check_owned_tasks(configured, req)
        offsets, end_offsets = req.get("task_offsets"), req.get("task_end_offsets")
        if validated != group.validated_topology_epoch:
            recompute = True
        configs = self.per_group.assignment_configs(gid)
        if configs != group.last_assignment_configs:
            recompute = True
        owned = owned_tasks(req)
        if member.state == MEMBER_UNKNOWN and (owned is None or not owned.is_empty()):
            # a state of a newer broker: the member starts again from nothing (Kafka's reconciler)
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown state. "
                                 "The member must abandon all its tasks and rejoin.")
        group_epoch = group.group_epoch + 1 if recompute else group.group_epoch
        if recompute:
            records.append(rec.group_metadata(gid, group_epoch, metadata_hash, validated, configs))
        self.write(gid, records, now)
        group.configured = configured
        if offsets is not None or end_offsets is not None:  # telemetry for the assignor and describe
            old = group.task_offsets.get(mid, ({}, {}))
            group.task_offsets[mid] = tuple(
                old[i] if sent is None else {(o.subtopology_id, o.partition): o.offset for o in sent}
                for i, sent in enumerate((offsets, end_offsets)))
        if was_empty and group.initial_delay_deadline is None:
            delay = self.per_group.get(gid, "initial_rebalance_delay_ms")
            if delay > 0:
                group.initial_delay_deadline = now + delay
        # 4. the target, when the group epoch is ahead of it
        target_epoch, targets = self.update_target(group, now, statuses)
        # 5. the member toward its target
        after = self._reconcile(group, group.members[mid], target_epoch, targets.get(mid, Target()), req, now)
        group.session_deadlines[mid] = now + self.per_group.get(gid, "session_timeout_ms")
        if req.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = mid
            log.info("streams_application_shutdown_requested", group_id=gid, member_id=mid)
        return HeartbeatResult(self._answer(group, req, version, member, after, replaced, created, statuses,
                                            configured), dict(configured.to_create) if configured.status else {})

    @staticmethod
    def _updated_member(member: StreamsMember, req, client_id: str, client_host: str, joining: bool) -> StreamsMember:
        topology, endpoint, tags = req.get("topology"), req.get("user_endpoint"), req.get("client_tags")
        changes = {"client_id": client_id, "client_host": client_host}
        for name in ("instance_id", "rack_id", "process_id"):
            if req.get(name) is not None:
                changes[name] = req.get(name)
        if req.rebalance_timeout_ms != -1:
            changes["rebalance_timeout_ms"] = req.rebalance_timeout_ms
        if topology is not None:
            changes["topology_epoch"] = topology.epoch
        if tags is not None:
            changes["client_tags"] = tuple(sorted((t.key, t.value) for t in tags))
        if joining or endpoint is not None:
            changes["user_endpoint"] = None if endpoint is None else (endpoint.host, endpoint.port)
        return replace(member, **changes)

    def _topology(self, group: StreamsGroup, req, records: list):
        wire = req.get("topology")
        if wire is None:
            return group.topology
        sent = from_wire(wire)
        if group.topology is None:
            records.append(rec.topology(group.group_id, sent))
            log.info("streams_topology_initialized", group_id=group.group_id, member_id=req.member_id,
                     topology_epoch=sent.epoch)
            return sent
        if group.topology.epoch > sent.epoch:
            return group.topology  # a member with a stale topology: told so in its status
        if not group.topology.same_as(sent):
            raise HeartbeatError(ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
        return group.topology

    def _metadata_hash(self, topology) -> int:
        """A 64-bit hash over the topics the topology needs, as they are (id, name, partitions).
        Kafka hashes the same with XXH3; the value is only compared with itself."""
        h = hashlib.blake2b(digest_size=8)
        seen = False
        for name in sorted(topology.required_topics()):
            topic = self.topics.get(name)
            if topic is not None:
                seen = True
                h.update(f"{topic.topic_id}/{name}/{len(topic.partitions)};".encode())
        return int.from_bytes(h.digest(), "big", signed=True) if seen else 0

    def update_target(self, group: StreamsGroup, now: int, statuses: list | None) -> tuple[int, dict]:
        """Compute a new target assignment when the group epoch is ahead of it (Kafka's
        maybeUpdateStreamsTargetAssignment); (its epoch, member id -> target)."""
        def delayed(why: str) -> None:
            if statuses is not None:
                statuses.append({"status_code": ASSIGNMENT_DELAYED,
                                 "status_detail": f"Assignment delayed due to the configured {why}."})
        if group.initial_delay_deadline is not None:
            delayed("initial rebalance delay")
            return group.assignment_epoch, {}
        if group.assignment_epoch >= group.group_epoch:
            return group.assignment_epoch, group.target
        interval = self.per_group.get(group.group_id, "assignment_interval_ms")
        if group.assignment_timestamp and interval and now < group.assignment_timestamp + interval:
            delayed("assignment interval")
            return group.assignment_epoch, group.target
        configured = group.configured
        if configured is not None and configured.ready:
            specs = {mid: MemberSpec(m.process_id, frozenset(pairs(m.assigned.active)),
                                     frozenset(pairs(m.assigned.standby)), group.task_offsets.get(mid, ({}, {}))[0])
                     for mid, m in group.members.items()}
            subs = [(sid, s.tasks, s.stateful) for sid, s in configured.subtopologies.items()]
            standby = standby_replicas(group.last_assignment_configs)
            result = {mid: Target(active, standby_tasks) for mid, (active, standby_tasks) in
                      assign(specs, subs, standby).items()}
        else:
            result = {mid: Target() for mid in group.members}
        gid = group.group_id
        records = [rec.target_member(gid, mid, t) for mid, t in result.items() if group.target.get(mid) != t]
        records.append(rec.target_metadata(gid, group.group_epoch, now))
        epoch = group.group_epoch
        self.write(gid, records, now)
        self.rebalances += 1
        log.info("streams_group_target_assignment", group_id=gid, epoch=epoch, members=len(result))
        return epoch, dict(group.target)

    def _reconcile(self, group: StreamsGroup, member: StreamsMember, target_epoch: int, target: Target, req,
                   now: int) -> StreamsMember:
        if member.reconciled_to(target_epoch):
            return member
        after = Reconciler(member, target_epoch, target, active_process=group.active_owner.get,
                           standby_processes=lambda t: group.standby_owners.get(t, ()),
                           warmup_processes=lambda t: group.warmup_owners.get(t, ()),
                           owned=owned_tasks(req) if req is not None else None).next()
        if after != member:
            self.write(group.group_id, [rec.current_assignment(group.group_id, after)], now)
            if after.state == UNREVOKED_TASKS:
                group.rebalance_deadlines[after.member_id] = (now + after.rebalance_timeout_ms, after.member_epoch)
            else:
                group.rebalance_deadlines.pop(after.member_id, None)
        return after

    def _answer(self, group: StreamsGroup, req, version: int, before: StreamsMember, after: StreamsMember,
                replaced, created: bool, statuses: list, configured) -> dict:
        gid = group.group_id
        changed = after.assigned != before.assigned
        joining = req.member_epoch == JOIN_EPOCH
        body = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "member_id": after.member_id,
                "member_epoch": after.member_epoch,
                "heartbeat_interval_ms": self.per_group.get(gid, "heartbeat_interval_ms"),
                "task_offset_interval_ms": self.settings.task_offset_interval_ms,
                "acceptable_recovery_lag": self.settings.acceptable_recovery_lag,
                "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
                "partitions_by_user_endpoint": None}
        if joining or changed:
            body.update(active_tasks=task_ids(after.assigned.active), standby_tasks=task_ids(after.assigned.standby),
                        warmup_tasks=task_ids(after.assigned.warmup))
        if before.user_endpoint != after.user_endpoint or (changed and after.user_endpoint is not None):
            group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != req.endpoint_information_epoch:
            body["partitions_by_user_endpoint"] = endpoints(group, after.member_id, self._partition_count)
        body["endpoint_information_epoch"] = 0 if created else group.endpoint_information_epoch
        if configured.status is not None:
            statuses.append({"status_code": configured.status[0], "status_detail": configured.status[1]})
        if group.shutdown_requested_by is not None:
            statuses.append({"status_code": SHUTDOWN_APPLICATION, "status_detail":
                             f"Streams group member {group.shutdown_requested_by} encountered a fatal error and "
                             "requested a shutdown for the entire application."})
        body["status"] = statuses
        return body

    def create_internal_topics(self, to_create: dict, now: int, *, ttl_ms: int) -> dict[str, str]:
        """Create the internal topics a heartbeat found missing, as Kafka's auto topic creation
        does for streams groups: a topic whose creation failed is not tried again for
        ``ttl_ms``. Returns the failures known before this attempt (Kafka creates
        asynchronously, so a failure shows on the heartbeat after the one that tried)."""
        known = {t: why for t, (why, until) in self.creation_errors.items() if until > now and t in to_create}
        for name, topic in to_create.items():
            if name in known or self.topics.get(name) is not None:
                continue
            code, message, _ = self.topics.create(name, topic.partitions, topic.replication_factor or -1,
                                                  dict(topic.configs))
            if code != ErrorCode.NONE:
                self.creation_errors[name] = (message or code.name, now + ttl_ms)
                log.warning("streams_internal_topic_not_created", topic=name, error=code.name, message=message)
            else:
                self.creation_errors.pop(name, None)
                log.info("streams_internal_topic_created", topic=name, partitions=topic.partitions)
        return known

    # --- leaving and fencing -----------------------------------------------------------------------

    def _leave(self, req, now: int, held_elsewhere: bool) -> dict:
        gid, mid, epoch, instance_id = req.group_id, req.member_id, req.member_epoch, req.get("instance_id")
        group = self.groups.get(gid)
        if group is None or held_elsewhere:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {gid} not found." if group is None
                                 else f"Group {gid} is not a streams group.")
        if req.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = mid
        body = {**error_body(ErrorCode.NONE), "member_id": mid, "member_epoch": epoch}
        if instance_id is None:
            member = group.members.get(mid)
            if member is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {mid} is not a member of group {gid}.")
        else:
            member = group.static_member(instance_id)
            if member is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if member.member_id != mid:
                raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID, f"Static member {mid} with instance id "
                                     f"{instance_id} was fenced by member {member.member_id}.")
            if epoch == STATIC_LEAVE_EPOCH:
                # it keeps its tasks, held for it until its session runs out
                leaving = replace(member, member_epoch=STATIC_LEAVE_EPOCH, assigned=member.assigned.epochs_reset(),
                                  pending_revocation=type(member.assigned)())
                self.write(gid, [rec.current_assignment(gid, leaving)], now)
                group.rebalance_deadlines.pop(member.member_id, None)
                log.info("streams_static_member_left_temporarily", group_id=gid, member_id=mid)
                return {**body, "member_id": member.member_id}
        self.fence(group, member, "left the group", now)
        return body

    def fence(self, group: StreamsGroup, member: StreamsMember, reason: str, now: int) -> None:
        gid = group.group_id
        epoch = group.group_epoch + 1
        records = rec.member_removed(gid, member.member_id)
        records.append(rec.group_metadata(gid, epoch, group.metadata_hash, group.validated_topology_epoch,
                                          group.last_assignment_configs))
        if len(group.members) == 1:
            # an empty group starts over: no assignment interval before its next target
            records.append(rec.target_metadata(gid, epoch, 0))
        self.write(gid, records, now)
        log.info("streams_member_removed", group_id=gid, member_id=member.member_id, reason=reason,
                 members=len(group.members), group_epoch=epoch)

    def tick(self, now: int) -> None:
        """Session and rebalance timeouts, and the end of a new group's initial delay."""
        for group in list(self.groups.values()):
            for mid in list(group.members):
                member = group.members.get(mid)
                if member is None:
                    continue
                rebalance = group.rebalance_deadlines.get(mid)
                if group.session_deadlines.get(mid, now + 1) <= now:
                    self.fence(group, member, "the member session expired", now)
                elif rebalance is not None and rebalance[0] <= now:
                    group.rebalance_deadlines.pop(mid, None)
                    if member.member_epoch == rebalance[1]:
                        self.fence(group, member, f"it failed to transition from epoch {rebalance[1]} within "
                                   f"{member.rebalance_timeout_ms}ms", now)
            self._initial_delay_over(group, now)

    def _initial_delay_over(self, group: StreamsGroup, now: int) -> None:
        """A new group's initial delay ran out: its first target (Kafka's
        computeDelayedTargetAssignment)."""
        if group.initial_delay_deadline is None or group.initial_delay_deadline > now:
            return
        group.initial_delay_deadline = None
        if group.members and group.configured is not None and group.group_epoch > group.assignment_epoch:
            self.update_target(group, now, None)

    def replay(self, key: bytes, value: bytes | None) -> None:
        """One record read back from __consumer_offsets at start."""
        try:
            record = rec.decode(key, value)
        except ValueError as exc:
            log.warning("streams_record_skipped", error=str(exc))
            return
        rec.apply(self.groups, record)

    def loaded(self, now: int, group_ids=None) -> None:
        """After a replay: every member's session starts now (Kafka's onLoaded), and a member
        that was revoking gets its rebalance timeout again; ``group_ids``: only those (a
        cluster's coordinator that took over a partition of __consumer_offsets)."""
        for group in self.groups.values():
            if group_ids is not None and group.group_id not in group_ids:
                continue
            for mid, m in group.members.items():
                group.session_deadlines[mid] = now + self.per_group.get(group.group_id, "session_timeout_ms")
                if m.state == UNREVOKED_TASKS:
                    group.rebalance_deadlines[mid] = (now + m.rebalance_timeout_ms, m.member_epoch)

    def delete_group(self, group_id: str, now: int) -> None:
        """DeleteGroups of an empty group (the GroupCoordinator checked it is)."""
        group = self.groups.get(group_id)
        if group is not None:
            self.write(group_id, rec.group_deleted(group), now)
            self.groups.pop(group_id, None)


__all__ = ["HeartbeatResult", "StreamsGroupCoordinator"]
