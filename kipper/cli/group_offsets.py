"""Committed offsets of a group as ``kipper groups`` shows and changes them: the
lag table of ``describe`` (kafka-consumer-groups.sh --describe), ``reset-offsets``
and ``delete-offsets``."""

from __future__ import annotations

import struct
from datetime import datetime

from kipper.cli.common import ToolError, UsageError
from kipper.client import admin
from kipper.client.consumer_requests import (
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, list_offsets, offset_commit, offset_fetch,
)
from kipper.protocol.errors import ErrorCode, KafkaError


def committed(conn, group: str) -> dict[tuple[str, int], int]:
    body = offset_fetch(conn, group)
    if "groups" in body:
        body = body.groups[0]
    if body.error_code:
        raise ToolError(f"group '{group}': {KafkaError(body.error_code)}")
    return {(t.name, p.partition_index): p.committed_offset
            for t in body.topics for p in t.partitions if p.committed_offset >= 0}


def offsets_at(conn, partitions, timestamp) -> dict[tuple[str, int], int]:
    """The offset of each (topic, partition) at ``timestamp`` (or per-partition timestamps)."""
    if not partitions:
        return {}
    wanted = {tp: (timestamp[tp] if isinstance(timestamp, dict) else timestamp) for tp in partitions}
    out = {}
    for t in list_offsets(conn, wanted).topics:
        for p in t.partitions:
            if p.error_code:
                raise ToolError(f"topic '{t.name}' partition {p.partition_index}: {KafkaError(p.error_code)}")
            out[(t.name, p.partition_index)] = p.offset
    return out


def consumer_assignment(data: bytes) -> list[tuple[str, int]]:
    """ConsumerProtocolAssignment: version, [topic, [partition]], user data."""
    try:
        pos = 2
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out = []
        for _ in range(max(n, 0)):
            (size,) = struct.unpack_from(">h", data, pos)
            topic = data[pos + 2:pos + 2 + size].decode()
            pos += 2 + size
            (count,) = struct.unpack_from(">i", data, pos)
            out.extend((topic, p) for p in struct.unpack_from(f">{count}i", data, pos + 4))
            pos += 4 + 4 * count
        return out
    except (struct.error, UnicodeDecodeError):
        return []


def print_lag(conn, group: str, owners: dict[tuple[str, int], tuple[str, str, str]]) -> None:
    """kafka-consumer-groups --describe: a row per partition the group has an offset
    for or is assigned, with the log end and the lag."""
    offsets = committed(conn, group)
    partitions = sorted(set(offsets) | set(owners))
    if not partitions:
        print(f"  Consumer group '{group}' has no committed offsets and no assigned partitions.")
        return
    ends = offsets_at(conn, partitions, LATEST_TIMESTAMP)
    rows = [("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
             "HOST", "CLIENT-ID")]
    for tp in partitions:
        current = offsets.get(tp)
        end = ends.get(tp, -1)
        lag = "-" if current is None or end < 0 else str(max(end - current, 0))
        member, host, client = owners.get(tp, ("-", "-", "-"))
        rows.append((group, tp[0], str(tp[1]), "-" if current is None else str(current), str(end), lag,
                     member, host, client))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  " + " ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


# --- reset-offsets and delete-offsets -------------------------------------------------------------

def parse_targets(conn, items: list[str], all_topics: bool, group: str) -> list[tuple[str, int]]:
    """--topic T or T:0,1 (all of T's partitions when none are named); --all-topics: every
    topic the group has offsets for."""
    if all_topics:
        return sorted(committed(conn, group))
    out = []
    for item in items:
        name, _, parts = item.partition(":")
        meta = admin.metadata(conn, [name]).topics[0]
        if meta.error_code:
            raise ToolError(f"topic '{name}': {KafkaError(meta.error_code)}")
        known = sorted(p.partition_index for p in meta.partitions)
        if parts:
            try:
                wanted = [int(p) for p in parts.split(",") if p.strip()]
            except ValueError:
                raise UsageError(f"--topic '{item}' is not TOPIC or TOPIC:PARTITION[,PARTITION...]") from None
            missing = sorted(set(wanted) - set(known))
            if missing:
                raise ToolError(f"topic '{name}' has no partition(s) {missing}")
            known = wanted
        out.extend((name, p) for p in known)
    return out


def _timestamp(text: str) -> int:
    """Kafka's --to-datetime: YYYY-MM-DDTHH:mm:SS.sss, with an optional zone (local time without)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--to-datetime '{text}' is not YYYY-MM-DDTHH:mm:SS.sss[+hh:mm]") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


def new_offsets(conn, partitions, args, current_of) -> dict[tuple[str, int], int]:
    """Where each partition goes, kept inside [log start, log end] as Kafka's tools do;
    ``current_of(partition)`` is where it is now (for --to-current and --shift-by)."""
    low = offsets_at(conn, partitions, EARLIEST_TIMESTAMP)
    high = offsets_at(conn, partitions, LATEST_TIMESTAMP)
    if args.to_earliest:
        return low
    if args.to_latest:
        return high
    if args.to_datetime is not None:
        found = offsets_at(conn, partitions, _timestamp(args.to_datetime))
        return {tp: (o if o >= 0 else high[tp]) for tp, o in found.items()}
    if args.to_offset is not None:
        return {tp: min(max(args.to_offset, low[tp]), high[tp]) for tp in partitions}
    shift = 0 if args.to_current else args.shift_by
    return {tp: min(max(current_of(tp) + shift, low[tp]), high[tp]) for tp in partitions}


def _committed_of(conn, group: str):
    """A group's committed offset of a partition, read once when first asked."""
    read: list[dict] = []

    def of(tp):
        if not read:
            read.append(committed(conn, group))
        current = read[0]
        if tp not in current:
            raise ToolError(f"group '{group}': cannot shift the offset of {tp[0]}-{tp[1]}: "
                            "it has no committed offset")
        return current[tp]
    return of


def reset(conn, group: str, state: str, args) -> int:
    if state not in ("Empty", "Dead"):
        raise ToolError(f"Assignments can only be reset if the group '{group}' is inactive, "
                        f"but the current state is {state}.")
    partitions = parse_targets(conn, args.topic, args.all_topics, group)
    if not partitions:
        raise ToolError(f"group '{group}': no partitions to reset")
    offsets = new_offsets(conn, partitions, args, _committed_of(conn, group))
    if args.execute:
        body = offset_commit(conn, group, offsets)
        for t in body.topics:
            for p in t.partitions:
                if p.error_code:
                    raise ToolError(f"group '{group}' {t.name}-{p.partition_index}: "
                                    f"{KafkaError(p.error_code)}")
    rows = [("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    rows += [(group, t, str(p), str(o)) for (t, p), o in sorted(offsets.items())]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print(" ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


def delete(conn, group: str, args) -> int:
    partitions = parse_targets(conn, args.topic, False, group)
    if not partitions:
        raise UsageError("groups delete-offsets needs --topic")
    body = admin.delete_offsets(conn, group, partitions)
    if body.error_code:
        raise ToolError(f"group '{group}': {KafkaError(body.error_code)}")
    failed = 0
    print(f"{'TOPIC':30s} {'PARTITION':10s} STATUS")
    for t in body.topics:
        for p in t.partitions:
            status = "Successful" if not p.error_code else f"Error: {ErrorCode(p.error_code).name}"
            failed += bool(p.error_code)
            print(f"{t.name:30s} {p.partition_index:<10d} {status}")
    if failed:
        raise ToolError(f"group '{group}': {failed} offset(s) not deleted")
    return 0
