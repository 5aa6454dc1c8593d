"""``kipper groups list|describe|delete|reset-offsets|delete-offsets``: like
kafka-consumer-groups.sh and kafka-share-groups.sh, for all three kinds of group.

describe finds a group's kind with ListGroups and asks the matching API:
ConsumerGroupDescribe for KIP-848 groups, ShareGroupDescribe for share groups,
DescribeGroups for classic ones. Consumer groups of both protocols get the
CURRENT-OFFSET, LOG-END-OFFSET and LAG columns, share groups START-OFFSET and LAG
(DescribeShareGroupOffsets); --members lists the members, --state the state.
reset-offsets and delete-offsets of a share group use AlterShareGroupOffsets and
DeleteShareGroupOffsets (share_offsets.py).
"""

from __future__ import annotations

import argparse
import sys

from kipper.cli import group_offsets, share_offsets
from kipper.cli.common import ToolError, UsageError, add_bootstrap, add_command, connect
from kipper.client import admin
from kipper.client.blocking import UnsupportedByBroker
from kipper.protocol.errors import ErrorCode


def add_parser(sub) -> None:
    p = add_command(sub, "groups", "list, describe, delete groups or reset their offsets",
                    "Consumer groups (classic and KIP-848) and share groups, like "
                    "kafka-consumer-groups.sh.\n\n"
                    "  kipper groups describe --bootstrap-server H:P --group g\n"
                    "  kipper groups reset-offsets --bootstrap-server H:P --group g --topic t "
                    "--to-earliest --execute\n"
                    "  kipper groups delete --bootstrap-server H:P --group g")
    p.add_argument("action", choices=("list", "describe", "delete", "reset-offsets", "delete-offsets"),
                   help="what to do")
    add_bootstrap(p, command_config=True)
    p.add_argument("--group", action="append", default=[],
                   help="group id (describe, delete: repeatable; reset-offsets, delete-offsets: one)")
    p.add_argument("--members", action="store_true", help="describe: list the members, not the offsets")
    p.add_argument("--offsets", action="store_true",
                   help="describe: the offsets and lag (the default)")
    p.add_argument("--state", action="append", nargs="?", const="", default=[], metavar="STATE",
                   help="list: only groups in this state (Stable, Empty, ...), repeatable; "
                        "describe: show the group's state")
    p.add_argument("--type", action="append", default=[], choices=("classic", "consumer", "share"),
                   help="list: only groups of this kind, repeatable")
    p.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P...]",
                   help="reset-offsets, delete-offsets: a topic, or some of its partitions; repeatable")
    p.add_argument("--all-topics", action="store_true",
                   help="reset-offsets: every topic the group has offsets for")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--to-earliest", action="store_true", help="reset to the log start")
    target.add_argument("--to-latest", action="store_true", help="reset to the log end")
    target.add_argument("--to-offset", type=int, metavar="N", help="reset to offset N")
    target.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                        help="reset to the first offset at or after this time (local time "
                             "unless a zone is given)")
    target.add_argument("--to-current", action="store_true",
                        help="reset to the current offset (committed, or a share group's start offset)")
    target.add_argument("--shift-by", type=int, metavar="N",
                        help="move the committed offset (a share group's start offset) by N (+/-)")
    run_mode = p.add_mutually_exclusive_group()
    run_mode.add_argument("--dry-run", action="store_true",
                          help="reset-offsets: show the new offsets only (the default)")
    run_mode.add_argument("--execute", action="store_true", help="reset-offsets: commit the new offsets")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action in ("describe", "delete") and not args.group:
        raise UsageError(f"groups {args.action} needs --group")
    if args.action in ("reset-offsets", "delete-offsets") and len(args.group) != 1:
        raise UsageError(f"groups {args.action} needs exactly one --group")
    if args.action == "reset-offsets":
        if not (args.to_earliest or args.to_latest or args.to_offset is not None or args.to_current
                or args.to_datetime is not None or args.shift_by is not None):
            raise UsageError("groups reset-offsets needs one of --to-earliest, --to-latest, --to-offset, "
                             "--to-datetime, --to-current, --shift-by")
        if bool(args.topic) == args.all_topics:
            raise UsageError("groups reset-offsets needs --topic or --all-topics (not both)")
    with connect(args.bootstrap_server, args.command_config) as conn:
        if args.action == "list":
            return _list(conn, args)
        if args.action == "describe":
            return _describe(conn, args.group, "members" if args.members else
                             "state" if args.state else "offsets")
        if args.action == "delete":
            return _delete(conn, args.group)
        group = args.group[0]
        kind, state = _kind(conn, group)
        if args.action == "delete-offsets":
            if kind == "share":
                return share_offsets.delete(conn, group, args)
            return group_offsets.delete(conn, group, args)
        if not args.execute:
            print("WARN: No action is performed without --execute; the offsets the reset would "
                  "commit are shown.", file=sys.stderr)
        if kind == "share":
            return share_offsets.reset(conn, group, state or "Empty", args)
        return group_offsets.reset(conn, group, state or "Dead", args)


def _listed(conn) -> dict[str, object]:
    body = admin.list_groups(conn)
    if body.error_code:
        raise ToolError(f"ListGroups: {ErrorCode(body.error_code).name}")
    return {g.group_id: g for g in body.groups}


def _kind(conn, group: str) -> tuple[str | None, str | None]:
    g = _listed(conn).get(group)
    if g is None:
        return None, None
    return g.get("group_type") or ("consumer" if g.protocol_type == "consumer" else "classic"), \
        g.get("group_state")


def _list(conn, args) -> int:
    body = admin.list_groups(conn, states_filter=[s for s in args.state if s], types_filter=args.type)
    if body.error_code:
        raise ToolError(f"ListGroups: {ErrorCode(body.error_code).name}")
    print(f"{'GROUP':30s} {'TYPE':8s} STATE")
    for g in sorted(body.groups, key=lambda g: g.group_id):
        kind = g.get("group_type") or g.protocol_type or "classic"
        print(f"{g.group_id:30s} {kind:8s} {g.get('group_state') or ''}")
    return 0


def _describe(conn, groups: list[str], view: str) -> int:
    """``view``: offsets (the default), members or state."""
    listed = _listed(conn)
    members = view == "members"
    missing = []
    for group_id in groups:
        g = listed.get(group_id)
        kind = g.get("group_type") if g is not None else None
        if kind == "share" and _print_share(conn, group_id, view):
            continue
        if kind == "consumer" and _print_consumer(conn, group_id, members):
            continue
        if kind == "classic" and _print_classic(conn, group_id, members):
            continue
        if kind == "streams" and _print_streams(conn, group_id, view):
            continue
        print(f"Group {group_id}: {ErrorCode.GROUP_ID_NOT_FOUND.name}")
        missing.append(group_id)
    if missing:
        raise ToolError(f"group(s) {', '.join(repr(g) for g in missing)}: GROUP_ID_NOT_FOUND")
    return 0


def _print_share(conn, group_id: str, view: str) -> bool:
    try:
        g = admin.share_group_describe(conn, [group_id]).groups[0]
    except UnsupportedByBroker:
        return False
    if g.error_code:
        return False
    print(f"GROUP {g.group_id}  TYPE share  STATE {g.group_state}  GROUP-EPOCH {g.group_epoch}  "
          f"ASSIGNOR {g.assignor_name}  MEMBERS {len(g.members)}")
    if view == "offsets":
        share_offsets.print_offsets(conn, group_id, len(g.members))
        return True
    if view == "state":
        return True
    if g.members:
        print(f"  {'MEMBER-ID':24s} {'EPOCH':>5s} {'CLIENT-ID':24s} {'HOST':16s} ASSIGNMENT")
    for m in g.members:
        assignment = ",".join(f"{tp.topic_name}:{'+'.join(map(str, tp.partitions))}"
                              for tp in m.assignment.topic_partitions) or "-"
        print(f"  {m.member_id:24s} {m.member_epoch:5d} {m.client_id:24s} {m.client_host:16s} "
              f"{assignment}")
    return True


def _print_consumer(conn, group_id: str, members: bool) -> bool:
    try:
        g = admin.consumer_group_describe(conn, [group_id]).groups[0]
    except UnsupportedByBroker:
        return False
    if g.error_code:
        return False
    print(f"GROUP {g.group_id}  TYPE consumer  STATE {g.group_state}  GROUP-EPOCH {g.group_epoch}  "
          f"ASSIGNOR {g.assignor_name}  MEMBERS {len(g.members)}")
    owners = {(tp.topic_name, p): (m.member_id, m.client_host, m.client_id)
              for m in g.members for tp in m.assignment.topic_partitions for p in tp.partitions}
    if not members:
        group_offsets.print_lag(conn, group_id, owners)
        return True
    if g.members:
        print(f"  {'MEMBER-ID':24s} {'EPOCH':>5s} {'CLIENT-ID':24s} {'HOST':16s} ASSIGNMENT")
    for m in g.members:
        assignment = ",".join(f"{tp.topic_name}:{'+'.join(map(str, tp.partitions))}"
                              for tp in m.assignment.topic_partitions) or "-"
        print(f"  {m.member_id:24s} {m.member_epoch:5d} {m.client_id:24s} {m.client_host:16s} {assignment}")
    return True


def _print_streams(conn, group_id: str, view: str) -> bool:
    """A streams group (KIP-1071): its tasks by member; offsets of its source topics."""
    try:
        g = conn.request(89, {"group_ids": [group_id], "include_authorized_operations": False}).groups[0]
    except UnsupportedByBroker:
        return False
    if g.error_code:
        return False
    print(f"GROUP {g.group_id}  TYPE streams  STATE {g.group_state}  GROUP-EPOCH {g.group_epoch}  "
          f"MEMBERS {len(g.members)}")
    if view == "state":
        return True
    if view == "offsets":
        sources = {s.subtopology_id: [*s.source_topics, *(t.name for t in s.repartition_source_topics)]
                   for s in (g.topology.subtopologies or []) if g.topology is not None}
        owners = {(topic, p): (m.member_id, m.client_host, m.client_id)
                  for m in g.members for t in m.assignment.active_tasks for p in t.partitions
                  for topic in sources.get(t.subtopology_id, ())}
        group_offsets.print_lag(conn, group_id, owners)
        return True
    if g.members:
        print(f"  {'MEMBER-ID':36s} {'EPOCH':>5s} {'PROCESS':36s} ACTIVE / STANDBY TASKS")
    for m in g.members:
        def tasks(ids) -> str:
            return ",".join(f"{t.subtopology_id}:{'+'.join(map(str, t.partitions))}" for t in ids) or "-"
        print(f"  {m.member_id:36s} {m.member_epoch:5d} {m.process_id:36s} "
              f"{tasks(m.assignment.active_tasks)} / {tasks(m.assignment.standby_tasks)}")
    return True


def _print_classic(conn, group_id: str, members: bool) -> bool:
    g = admin.describe_groups(conn, [group_id]).groups[0]
    if g.error_code or g.group_state == "Dead":
        return False
    print(f"GROUP {g.group_id}  TYPE classic  STATE {g.group_state}  "
          f"PROTOCOL {g.protocol_type}/{g.protocol_data}  MEMBERS {len(g.members)}")
    consumer = g.protocol_type in ("consumer", "")
    if consumer and not members:
        owners = {tp: (m.member_id, m.client_host, m.client_id) for m in g.members
                  for tp in group_offsets.consumer_assignment(m.member_assignment)}
        group_offsets.print_lag(conn, group_id, owners)
        return True
    if g.members:
        print(f"  {'MEMBER-ID':40s} {'CLIENT-ID':24s} {'HOST':16s} ASSIGNMENT")
    for m in g.members:
        parts = group_offsets.consumer_assignment(m.member_assignment) if consumer else []
        assignment = ",".join(f"{t}:{p}" for t, p in parts)
        print(f"  {m.member_id:40s} {m.client_id:24s} {m.client_host:16s} {assignment or '-'}")
    return True


def _delete(conn, groups: list[str]) -> int:
    results = admin.delete_groups(conn, groups).results
    failed = [(r.group_id, r.error_code, r.get("error_message")) for r in results if r.error_code]
    done = [r.group_id for r in results if not r.error_code]
    if done:
        print(f"Deletion of requested consumer groups ({', '.join(repr(g) for g in done)}) was successful.")
    if failed:
        for group, code, message in failed:
            print(f"* Group '{group}' could not be deleted due to: {ErrorCode(code).name}"
                  + (f" ({message})" if message else ""), file=sys.stderr)
        raise ToolError(f"deletion of {len(failed)} group(s) failed: "
                        + ", ".join(f"'{g}' {ErrorCode(c).name}" for g, c, _ in failed))
    return 0
