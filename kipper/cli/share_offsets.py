"""A share group's offsets as ``kipper groups`` shows and changes them, like
kafka-share-groups.sh: the START-OFFSET / LAG table of ``describe`` (DescribeShareGroupOffsets),
``reset-offsets`` (AlterShareGroupOffsets) and ``delete-offsets`` (DeleteShareGroupOffsets)."""

from __future__ import annotations

from kipper.cli.common import ToolError, UsageError
from kipper.cli.group_offsets import new_offsets, parse_targets
from kipper.client import admin
from kipper.protocol.errors import KafkaError


def _table(rows: list[tuple[str, ...]], indent: str = "") -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def start_offsets(conn, group: str) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (start offset, lag) of every share-partition with state."""
    body = admin.describe_share_group_offsets(conn, {group: None})
    g = body.groups[0]
    if g.error_code:
        raise ToolError(f"share group '{group}': {KafkaError(g.error_code)}")
    out = {}
    for t in g.topics:
        for p in t.partitions:
            if p.error_code:
                raise ToolError(f"share group '{group}' {t.topic_name}-{p.partition_index}: "
                                f"{KafkaError(p.error_code)}")
            out[(t.topic_name, p.partition_index)] = (p.start_offset, p.get("lag", -1))
    return out


def print_offsets(conn, group: str, members: int) -> None:
    """kafka-share-groups --describe (--offsets): GROUP TOPIC PARTITION START-OFFSET LAG."""
    found = start_offsets(conn, group)
    rows = [("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")]
    for (topic, partition), (start, lag) in sorted(found.items()):
        rows.append((group, topic, str(partition), "-" if start < 0 else str(start),
                     "-" if lag < 0 and start < 0 else str(lag)))
    if found:
        _table(rows)
    if not members:
        print(f"Share group '{group}' has no active members.")


def reset(conn, group: str, state: str, args) -> int:
    if state != "Empty":
        raise ToolError(f"Share group '{group}' is not empty (state {state}): its offsets can "
                        "only be reset while it has no members.")
    current = start_offsets(conn, group)
    if args.all_topics:
        partitions = sorted(current)
    else:
        partitions = parse_targets(conn, args.topic, False, group)
    if not partitions:
        raise ToolError(f"share group '{group}': no partitions to reset")
    offsets = new_offsets(conn, partitions, args, _start_of(group, current))
    if args.execute:
        body = admin.alter_share_group_offsets(conn, group, offsets)
        if body.error_code:
            raise ToolError(f"share group '{group}': {KafkaError(body.error_code)}")
        for t in body.responses:
            for p in t.partitions:
                if p.error_code:
                    raise ToolError(f"share group '{group}' {t.topic_name}-{p.partition_index}: "
                                    f"{KafkaError(p.error_code)}")
    _table([("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
           + [(group, t, str(p), str(o)) for (t, p), o in sorted(offsets.items())])
    return 0


def _start_of(group: str, current):
    """A share-partition's start offset now, for --to-current and --shift-by."""
    def of(tp):
        start = current.get(tp, (-1, -1))[0]
        if start < 0:
            raise ToolError(f"share group '{group}': {tp[0]}-{tp[1]} has no start offset to keep or shift")
        return start
    return of


def delete(conn, group: str, args) -> int:
    """kafka-share-groups --delete-offsets: whole topics (DeleteShareGroupOffsets)."""
    if not args.topic:
        raise UsageError("groups delete-offsets needs --topic")
    names = []
    for item in args.topic:
        name, sep, _ = item.partition(":")
        if sep:
            raise UsageError(f"--topic '{item}': a share group's offsets are deleted for whole topics")
        names.append(name)
    body = admin.delete_share_group_offsets(conn, group, names)
    if body.error_code:
        raise ToolError(f"share group '{group}': {KafkaError(body.error_code)}")
    rows = [("TOPIC", "STATUS")]
    failed = 0
    for t in body.responses:
        failed += bool(t.error_code)
        rows.append((t.topic_name, "Successful" if not t.error_code else
                     f"Error: {t.get('error_message') or KafkaError(t.error_code)}"))
    _table(rows)
    if failed:
        raise ToolError(f"share group '{group}': the offsets of {failed} topic(s) were not deleted")
    return 0
