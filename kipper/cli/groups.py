"""``kipper groups list|describe``: like kafka-groups.sh / kafka-share-groups.sh.

describe asks ShareGroupDescribe first and falls back to DescribeGroups for a
classic group, so one command covers both kinds.
"""

from __future__ import annotations

import argparse
import struct

from kipper.client import admin
from kipper.client.blocking import UnsupportedByBroker, connect_any
from kipper.protocol.errors import ErrorCode


def add_parser(sub) -> None:
    p = sub.add_parser("groups", help="list groups, or describe share and classic groups")
    p.add_argument("action", choices=("list", "describe"))
    p.add_argument("--bootstrap-server", required=True, help="HOST:PORT[,HOST:PORT...]")
    p.add_argument("--group", action="append", default=[], help="group id (describe), repeatable")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "describe" and not args.group:
        raise SystemExit("error: groups describe needs --group")
    with connect_any(args.bootstrap_server) as conn:
        return _list(conn) if args.action == "list" else _describe(conn, args.group)


def _list(conn) -> int:
    body = admin.list_groups(conn)
    if body.error_code:
        print(f"Error: {ErrorCode(body.error_code).name}")
        return 1
    print(f"{'GROUP':30s} {'TYPE':8s} STATE")
    for g in sorted(body.groups, key=lambda g: g.group_id):
        kind = g.get("group_type") or g.protocol_type or "classic"
        print(f"{g.group_id:30s} {kind:8s} {g.get('group_state') or ''}")
    return 0


def _describe(conn, groups: list[str]) -> int:
    status = 0
    share = {}
    try:
        body = admin.share_group_describe(conn, groups)
        share = {g.group_id: g for g in body.groups}
    except UnsupportedByBroker:
        pass
    for group_id in groups:
        g = share.get(group_id)
        if g is not None and not g.error_code:
            _print_share(g)
            continue
        if not _print_classic(conn, group_id):
            print(f"Group {group_id}: {ErrorCode.GROUP_ID_NOT_FOUND.name}")
            status = 1
    return status


def _print_share(g) -> None:
    print(f"GROUP {g.group_id}  TYPE share  STATE {g.group_state}  GROUP-EPOCH {g.group_epoch}  "
          f"ASSIGNOR {g.assignor_name}  MEMBERS {len(g.members)}")
    if g.members:
        print(f"  {'MEMBER-ID':24s} {'EPOCH':>5s} {'CLIENT-ID':24s} {'HOST':16s} ASSIGNMENT")
    for m in g.members:
        assignment = ",".join(f"{tp.topic_name}:{'+'.join(map(str, tp.partitions))}"
                              for tp in m.assignment.topic_partitions) or "-"
        print(f"  {m.member_id:24s} {m.member_epoch:5d} {m.client_id:24s} {m.client_host:16s} "
              f"{assignment}")


def _print_classic(conn, group_id: str) -> bool:
    body = admin.describe_groups(conn, [group_id])
    g = body.groups[0]
    if g.error_code or (g.group_state == "Dead" and not g.members):
        return False
    print(f"GROUP {g.group_id}  TYPE classic  STATE {g.group_state}  "
          f"PROTOCOL {g.protocol_type}/{g.protocol_data}  MEMBERS {len(g.members)}")
    if g.members:
        print(f"  {'MEMBER-ID':40s} {'CLIENT-ID':24s} {'HOST':16s} ASSIGNMENT")
    for m in g.members:
        assignment = _consumer_assignment(m.member_assignment) if g.protocol_type == "consumer" else ""
        print(f"  {m.member_id:40s} {m.client_id:24s} {m.client_host:16s} {assignment or '-'}")
    return True


def _consumer_assignment(data: bytes) -> str:
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
            parts = struct.unpack_from(f">{count}i", data, pos + 4)
            pos += 4 + 4 * count
            out.append(f"{topic}:{'+'.join(map(str, parts))}")
        return ",".join(out)
    except (struct.error, UnicodeDecodeError):
        return f"<{len(data)} bytes>"
