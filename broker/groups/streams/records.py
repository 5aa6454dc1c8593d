"""The records that change a streams group, and their replay (Kafka's
StreamsCoordinatorRecordHelpers and GroupMetadataManager.replay).

An operation of the coordinator reads the groups, decides, and returns records; the
records are then applied with ``apply``, the one place where a streams group changes,
and written to ``__consumer_offsets`` in Kafka's formats (protocol/streams_records.py).
At start the same ``apply`` replays them from the topic, so a group recovered after a
crash is the group that was written. A record is (type, group id, member id or None,
value fields or None for a tombstone).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from kipper.broker.groups.streams.model import (
    Assigned, StreamsGroup, StreamsMember, Target, task_set,
)
from kipper.broker.groups.streams.topology import from_wire, to_wire
from kipper.protocol import streams_records as sr


class Record(NamedTuple):
    type: int
    group_id: str
    member_id: str | None
    value: dict | None  # None: a tombstone

    def encoded(self) -> tuple[bytes, bytes | None]:
        return (sr.key(self.type, self.group_id, self.member_id),
                None if self.value is None else sr.value(self.type, self.value))


def _ids(tasks: dict) -> list[dict]:
    return [{"subtopology_id": sid, "partitions": sorted(ps)} for sid, ps in sorted(tasks.items())]


def _ids_with_epochs(tasks: dict) -> list[dict]:
    return [{"subtopology_id": sid, "partitions": sorted(ps), "assignment_epochs": [ps[p] for p in sorted(ps)]}
            for sid, ps in sorted(tasks.items())]


# --- the records Kafka writes ------------------------------------------------------------------

def group_metadata(group_id: str, epoch: int, metadata_hash: int, validated_topology_epoch: int,
                   assignment_configs: dict[str, str]) -> Record:
    return Record(sr.METADATA, group_id, None, {
        "epoch": epoch, "metadata_hash": metadata_hash, "validated_topology_epoch": validated_topology_epoch,
        "last_assignment_configs": [{"key": k, "value": v} for k, v in assignment_configs.items()],
        "stored_description_topology_epoch": -1, "failed_description_topology_epoch": -1})


def member_metadata(group_id: str, m: StreamsMember) -> Record:
    endpoint = None if m.user_endpoint is None else {"host": m.user_endpoint[0], "port": m.user_endpoint[1]}
    return Record(sr.MEMBER_METADATA, group_id, m.member_id, {
        "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
        "client_host": m.client_host, "rebalance_timeout_ms": m.rebalance_timeout_ms,
        "topology_epoch": m.topology_epoch, "process_id": m.process_id, "user_endpoint": endpoint,
        "client_tags": [{"key": k, "value": v} for k, v in sorted(m.client_tags)]})


def target_member(group_id: str, member_id: str, t: Target) -> Record:
    return Record(sr.TARGET_MEMBER, group_id, member_id, {
        "active_tasks": _ids(t.active), "standby_tasks": _ids(t.standby), "warmup_tasks": _ids(t.warmup)})


def target_metadata(group_id: str, epoch: int, timestamp: int) -> Record:
    return Record(sr.TARGET_METADATA, group_id, None, {"assignment_epoch": epoch, "assignment_timestamp": timestamp})


def current_assignment(group_id: str, m: StreamsMember) -> Record:
    a, r = m.assigned, m.pending_revocation
    return Record(sr.CURRENT_ASSIGNMENT, group_id, m.member_id, {
        "member_epoch": m.member_epoch, "previous_member_epoch": m.previous_epoch, "state": m.state,
        "active_tasks": _ids_with_epochs(a.active), "standby_tasks": _ids(a.standby),
        "warmup_tasks": _ids(a.warmup), "active_tasks_pending_revocation": _ids_with_epochs(r.active),
        "standby_tasks_pending_revocation": _ids(r.standby), "warmup_tasks_pending_revocation": _ids(r.warmup)})


def topology(group_id: str, topo) -> Record:
    return Record(sr.TOPOLOGY, group_id, None, to_wire(topo))


def tombstone(record_type: int, group_id: str, member_id: str | None = None) -> Record:
    return Record(record_type, group_id, member_id, None)


def member_removed(group_id: str, member_id: str) -> list[Record]:
    """Kafka's removeStreamsMember: current assignment, target, then metadata."""
    return [tombstone(sr.CURRENT_ASSIGNMENT, group_id, member_id), tombstone(sr.TARGET_MEMBER, group_id, member_id),
            tombstone(sr.MEMBER_METADATA, group_id, member_id)]


def group_deleted(group: StreamsGroup) -> list[Record]:
    """Kafka's StreamsGroup.createGroupTombstoneRecords."""
    gid = group.group_id
    out = [tombstone(sr.CURRENT_ASSIGNMENT, gid, m) for m in group.members]
    out += [tombstone(sr.TARGET_MEMBER, gid, m) for m in group.members]
    out.append(tombstone(sr.TARGET_METADATA, gid))
    out += [tombstone(sr.MEMBER_METADATA, gid, m) for m in group.members]
    return out + [tombstone(sr.METADATA, gid), tombstone(sr.TOPOLOGY, gid)]


# --- replay ----------------------------------------------------------------------------------------

def _tasks(ids) -> dict:
    return task_set((t["subtopology_id"], p) for t in ids for p in t["partitions"])


def _epochs(ids, default_epoch: int) -> dict:
    out: dict[str, dict[int, int]] = {}
    for t in ids:
        epochs = t.get("assignment_epochs")
        for i, p in enumerate(t["partitions"]):
            out.setdefault(t["subtopology_id"], {})[p] = epochs[i] if epochs else default_epoch
    return out


def apply(groups: dict[str, StreamsGroup], rec: Record) -> None:
    """Replay one record into ``groups`` (group id -> StreamsGroup)."""
    gid, mid, v = rec.group_id, rec.member_id, rec.value
    group = groups.get(gid)
    if group is None:
        if v is None:
            return  # a tombstone for a group that is gone
        group = groups[gid] = StreamsGroup(gid)
    if rec.type == sr.METADATA:
        if v is None:
            del groups[gid]
            return
        group.group_epoch, group.metadata_hash = v["epoch"], v["metadata_hash"]
        group.validated_topology_epoch = v["validated_topology_epoch"]
        group.last_assignment_configs = {c["key"]: c["value"] for c in (v["last_assignment_configs"] or ())}
    elif rec.type == sr.TOPOLOGY:
        group.topology = None if v is None else from_wire(v)
        group.configured = None
    elif rec.type == sr.TARGET_METADATA:
        group.assignment_epoch, group.assignment_timestamp = (-1, 0) if v is None else (
            v["assignment_epoch"], v["assignment_timestamp"])
    elif rec.type == sr.TARGET_MEMBER:
        if v is None:
            group.target.pop(mid, None)
        else:
            group.target[mid] = Target(_tasks(v["active_tasks"]), _tasks(v["standby_tasks"]), _tasks(v["warmup_tasks"]))
    elif rec.type == sr.MEMBER_METADATA:
        if v is None:
            group.drop_member(mid)
            return
        old = group.members.get(mid) or StreamsMember(mid)
        endpoint = v["user_endpoint"]
        group.put_member(_with_metadata(old, v, endpoint))
    elif rec.type == sr.CURRENT_ASSIGNMENT:
        old = group.members.get(mid)
        if v is None:
            if old is not None:
                group.put_member(_assignment(old, -1, -1, old.state, Assigned(), Assigned()))
            return
        old = old or StreamsMember(mid)
        epoch = v["member_epoch"]
        group.put_member(_assignment(
            old, epoch, v["previous_member_epoch"], v["state"],
            Assigned(_epochs(v["active_tasks"], epoch), _tasks(v["standby_tasks"]), _tasks(v["warmup_tasks"])),
            Assigned(_epochs(v["active_tasks_pending_revocation"], epoch), _tasks(v["standby_tasks_pending_revocation"]),
                     _tasks(v["warmup_tasks_pending_revocation"]))))


def _with_metadata(old: StreamsMember, v, endpoint) -> StreamsMember:
    return replace(old, instance_id=v["instance_id"], rack_id=v["rack_id"], client_id=v["client_id"],
                   client_host=v["client_host"], rebalance_timeout_ms=v["rebalance_timeout_ms"],
                   topology_epoch=v["topology_epoch"], process_id=v["process_id"],
                   user_endpoint=None if endpoint is None else (endpoint["host"], endpoint["port"]),
                   client_tags=tuple(sorted((t["key"], t["value"]) for t in v["client_tags"])))


def _assignment(old: StreamsMember, epoch: int, previous: int, state: int, assigned: Assigned,
                pending: Assigned) -> StreamsMember:
    return replace(old, member_epoch=epoch, previous_epoch=previous, state=state, assigned=assigned,
                   pending_revocation=pending)


def decode(key: bytes, value: bytes | None) -> Record:
    """A record read back from ``__consumer_offsets``."""
    record_type, k = sr.decode_key(key)
    return Record(record_type, k["group_id"], k.get("member_id"),
                  None if value is None else sr.decode_value(record_type, value))
