"""Typed builders for the ACL admin requests: CreateAcls, DescribeAcls, DeleteAcls.

ACLs and filters are given with Kafka's names (``AclBinding("TOPIC", "orders",
"LITERAL", "User:alice", "*", "READ", "ALLOW")``); the codes on the wire are
Kafka's. Responses come back parsed, errors left in them for the caller.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from kipper.client.admin import send
from kipper.client.blocking import BlockingConnection
from kipper.protocol.messages.create_acls import CREATE_ACLS
from kipper.protocol.messages.delete_acls import DELETE_ACLS
from kipper.protocol.messages.describe_acls import DESCRIBE_ACLS

RESOURCE_TYPES = {"ANY": 1, "TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5,
                  "DELEGATION_TOKEN": 6, "USER": 7}
PATTERN_TYPES = {"ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"ANY": 1, "ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7,
              "DESCRIBE": 8, "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11,
              "IDEMPOTENT_WRITE": 12, "CREATE_TOKENS": 13, "DESCRIBE_TOKENS": 14, "TWO_PHASE_COMMIT": 15}
PERMISSIONS = {"ANY": 1, "DENY": 2, "ALLOW": 3}
NAMES = {kind: {v: k for k, v in table.items()}
         for kind, table in (("resource", RESOURCE_TYPES), ("pattern", PATTERN_TYPES),
                             ("operation", OPERATIONS), ("permission", PERMISSIONS))}


class AclBinding(NamedTuple):
    resource_type: str
    name: str | None
    pattern_type: str
    principal: str | None
    host: str | None
    operation: str
    permission: str

    def codes(self) -> dict:
        return {"resource_type": RESOURCE_TYPES[self.resource_type], "pattern": PATTERN_TYPES[self.pattern_type],
                "operation": OPERATIONS[self.operation], "permission": PERMISSIONS[self.permission]}


def _filter_body(f: AclBinding) -> dict:
    c = f.codes()
    return {"resource_type_filter": c["resource_type"], "resource_name_filter": f.name,
            "pattern_type_filter": c["pattern"], "principal_filter": f.principal, "host_filter": f.host,
            "operation": c["operation"], "permission_type": c["permission"]}


def create_acls(conn: BlockingConnection, acls: Iterable[AclBinding], *, version: int | None = None):
    creations = []
    for a in acls:
        c = a.codes()
        creations.append({"resource_type": c["resource_type"], "resource_name": a.name,
                          "resource_pattern_type": c["pattern"], "principal": a.principal, "host": a.host,
                          "operation": c["operation"], "permission_type": c["permission"]})
    return send(conn, CREATE_ACLS, {"creations": creations}, version)


def describe_acls(conn: BlockingConnection, acl_filter: AclBinding, *, version: int | None = None):
    return send(conn, DESCRIBE_ACLS, _filter_body(acl_filter), version)


def delete_acls(conn: BlockingConnection, filters: Iterable[AclBinding], *, version: int | None = None):
    return send(conn, DELETE_ACLS, {"filters": [_filter_body(f) for f in filters]}, version)


def bindings(describe_response) -> list[AclBinding]:
    """The ACLs of a DescribeAcls response, with Kafka's names."""
    out = []
    for r in describe_response.resources:
        for a in r.acls:
            out.append(AclBinding(NAMES["resource"][r.resource_type], r.resource_name,
                                  NAMES["pattern"][r.get("pattern_type", 3)], a.principal, a.host,
                                  NAMES["operation"][a.operation], NAMES["permission"][a.permission_type]))
    return out
