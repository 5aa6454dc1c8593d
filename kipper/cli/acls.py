"""``kipper acls``: add, remove and list ACLs with the flags of kafka-acls.sh.

    kipper acls --bootstrap-server H:P --add --allow-principal User:alice --operation Read \\
        --topic orders --group app
    kipper acls --bootstrap-server H:P --add --allow-principal User:alice --producer --topic orders
    kipper acls --bootstrap-server H:P --add --allow-principal User:bob --consumer --topic 'app-' \\
        --resource-pattern-type prefixed --group app
    kipper acls --bootstrap-server H:P --remove --allow-principal User:alice --operation Read --topic orders
    kipper acls --bootstrap-server H:P --list [--topic orders] [--principal User:alice]

``--command-config`` holds the tool's own client settings (SASL, TLS), as for kafka-acls.sh.
"""

from __future__ import annotations

import argparse
import sys

from kipper.cli.common import add_bootstrap, connect
from kipper.client.acl_requests import (
    OPERATIONS, AclBinding, bindings, create_acls, delete_acls, describe_acls,
)
from kipper.protocol.errors import ErrorCode, KafkaError

CLUSTER_NAME = "kafka-cluster"


def add_parser(sub) -> None:
    p = sub.add_parser("acls", help="add, remove or list ACLs (like kafka-acls.sh)",
                       description="Manage ACLs with kafka-acls.sh's flags. The broker needs "
                                   "authorizer.class.name set.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_bootstrap(p, command_config=True)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", action="store_true", help="add ACLs")
    action.add_argument("--remove", action="store_true", help="remove the ACLs these flags describe")
    action.add_argument("--list", action="store_true", help="list ACLs (of the given resources)")
    p.add_argument("--allow-principal", action="append", default=[], help="e.g. User:alice (repeatable)")
    p.add_argument("--deny-principal", action="append", default=[], help="e.g. User:mallory (repeatable)")
    p.add_argument("--allow-host", action="append", default=[], help="hosts of the allow principals")
    p.add_argument("--deny-host", action="append", default=[], help="hosts of the deny principals")
    p.add_argument("--principal", help="--list: only the ACLs of this principal")
    p.add_argument("--operation", action="append", default=[],
                   help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
                        "AlterConfigs, IdempotentWrite, All (repeatable; default All)")
    p.add_argument("--topic", action="append", default=[], help="a topic (repeatable; * for all)")
    p.add_argument("--group", action="append", default=[], help="a consumer group (repeatable)")
    p.add_argument("--transactional-id", action="append", default=[], help="a transactional id")
    p.add_argument("--cluster", action="store_true", help="the cluster resource")
    p.add_argument("--resource-pattern-type", default="literal",
                   choices=("literal", "prefixed", "any", "match"),
                   help="how resource names match (any and match: --list and --remove only)")
    p.add_argument("--producer", action="store_true",
                   help="convenience: WRITE, DESCRIBE, CREATE on the topics (and WRITE, DESCRIBE on "
                        "the transactional ids)")
    p.add_argument("--consumer", action="store_true",
                   help="convenience: READ, DESCRIBE on the topics and READ on the groups")
    p.add_argument("--idempotent", action="store_true",
                   help="with --producer: IDEMPOTENT_WRITE on the cluster")
    p.set_defaults(func=run)


def _operation(text: str) -> str:
    """Kafka's spellings (Read, IdempotentWrite) or the enum names (READ, IDEMPOTENT_WRITE)."""
    name = text.upper() if text.isupper() or "_" in text else \
        "".join("_" + c if c.isupper() else c for c in text).strip("_").upper()
    if name not in OPERATIONS or name == "ANY":
        raise ValueError(f"unknown operation '{text}'")
    return name


def _resources(args) -> list[tuple[str, str]]:
    out = [("TOPIC", t) for t in args.topic] + [("GROUP", g) for g in args.group]
    out += [("TRANSACTIONAL_ID", t) for t in args.transactional_id]
    if args.cluster:
        out.append(("CLUSTER", CLUSTER_NAME))
    return out


def _wanted(args) -> list[tuple[str, str, str]]:
    """(resource type, name, operation) for --add and --remove."""
    if args.producer or args.consumer:
        if args.producer and not args.topic:
            raise ValueError("--producer needs --topic")
        if args.consumer and not (args.topic and args.group):
            raise ValueError("--consumer needs --topic and --group")
        out = []
        if args.producer:
            out += [("TOPIC", t, op) for t in args.topic for op in ("WRITE", "DESCRIBE", "CREATE")]
            out += [("TRANSACTIONAL_ID", t, op) for t in args.transactional_id for op in ("WRITE", "DESCRIBE")]
            if args.idempotent:
                out.append(("CLUSTER", CLUSTER_NAME, "IDEMPOTENT_WRITE"))
        if args.consumer:
            out += [("TOPIC", t, op) for t in args.topic for op in ("READ", "DESCRIBE")]
            out += [("GROUP", g, "READ") for g in args.group]
        return out
    resources = _resources(args)
    if not resources:
        raise ValueError("name a resource: --topic, --group, --transactional-id or --cluster")
    operations = [_operation(o) for o in args.operation] or ["ALL"]
    return [(rt, name, op) for rt, name in resources for op in operations]


def _bindings(args) -> list[AclBinding]:
    pattern = args.resource_pattern_type.upper()
    entries = [(p, "ALLOW", args.allow_host or ["*"]) for p in args.allow_principal]
    entries += [(p, "DENY", args.deny_host or ["*"]) for p in args.deny_principal]
    if not entries:
        raise ValueError("give --allow-principal or --deny-principal")
    return [AclBinding(rt, name if rt != "CLUSTER" else CLUSTER_NAME, pattern if rt != "CLUSTER" else "LITERAL",
                       principal, host, op, permission)
            for rt, name, op in _wanted(args) for principal, permission, hosts in entries for host in hosts]


def _print(acls: list[AclBinding]) -> None:
    by_resource: dict[tuple, list[AclBinding]] = {}
    for a in acls:
        by_resource.setdefault((a.resource_type, a.pattern_type, a.name), []).append(a)
    for (rt, pattern, name), rows in sorted(by_resource.items()):
        print(f"Current ACLs for resource `ResourcePattern(resourceType={rt}, name={name}, "
              f"patternType={pattern})`:")
        for a in rows:
            print(f" \t(principal={a.principal}, host={a.host}, operation={a.operation}, "
                  f"permissionType={a.permission})")
        print()


def run(args) -> int:
    with connect(args.bootstrap_server, args.command_config) as conn:
        if args.add:
            acls = _bindings(args)
            if args.resource_pattern_type in ("any", "match"):
                raise ValueError("--add needs --resource-pattern-type literal or prefixed")
            results = create_acls(conn, acls).results
            failed = [(a, r) for a, r in zip(acls, results) if r.error_code]
            for a, r in failed:
                print(f"kipper acls: {ErrorCode(r.error_code).name}: {r.error_message or ''} "
                      f"({a.principal} {a.operation} on {a.resource_type}:{a.name})", file=sys.stderr)
            if failed:
                return 1
            print(f"Adding ACLs: {len(acls)} ACL(s)")
            _print(acls)
            return 0
        if args.remove:
            filters = _bindings(args)
            result = delete_acls(conn, filters)
            removed = [m for f in result.filter_results for m in f.matching_acls]
            errors = [f for f in result.filter_results if f.error_code]
            if errors:
                raise KafkaError(errors[0].error_code, errors[0].error_message or "")
            print(f"Removed {len(removed)} ACL(s)")
            return 0
        resources = _resources(args) or [("ANY", None)]
        pattern = args.resource_pattern_type.upper() if args.resource_pattern_type != "literal" or \
            not _resources(args) else "LITERAL"
        if not _resources(args):
            pattern = "ANY"
        found: list[AclBinding] = []
        for rt, name in resources:
            resp = describe_acls(conn, AclBinding(rt, name, pattern, args.principal, None, "ANY", "ANY"))
            if resp.error_code:
                raise KafkaError(resp.error_code, resp.error_message or "")
            found += bindings(resp)
        _print(found)
        return 0
