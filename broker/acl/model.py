"""ACLs as Kafka names and numbers them: resource, pattern, operation and permission types,
an ACL binding, and the filters DescribeAcls and DeleteAcls match with.

The codes are Kafka's (org.apache.kafka.common.acl and .resource); ``IMPLIES`` is
the table of operations an ALLOW for another one grants, as Kafka's authorizer
reads it: READ, WRITE, DELETE and ALTER imply DESCRIBE, ALTER_CONFIGS implies
DESCRIBE_CONFIGS, and ALL implies every operation. DENY implies nothing but ALL.
"""

from __future__ import annotations

from typing import NamedTuple

from kipper.broker.acl import cidr
from kipper.protocol.errors import ErrorCode

# ResourceType
ANY_RESOURCE, TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 1, 2, 3, 4, 5, 6, 7
RESOURCE_TYPES = {"TOPIC": TOPIC, "GROUP": GROUP, "CLUSTER": CLUSTER,
                  "TRANSACTIONAL_ID": TRANSACTIONAL_ID, "DELEGATION_TOKEN": DELEGATION_TOKEN, "USER": USER}
RESOURCE_NAMES = {v: k for k, v in RESOURCE_TYPES.items()}
CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"

# PatternType
ANY_PATTERN, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
PATTERN_NAMES = {LITERAL: "LITERAL", PREFIXED: "PREFIXED"}

# AclOperation
(ANY_OPERATION, ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
 ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT) = range(1, 16)
OPERATIONS = {"ALL": ALL, "READ": READ, "WRITE": WRITE, "CREATE": CREATE, "DELETE": DELETE,
              "ALTER": ALTER, "DESCRIBE": DESCRIBE, "CLUSTER_ACTION": CLUSTER_ACTION,
              "DESCRIBE_CONFIGS": DESCRIBE_CONFIGS, "ALTER_CONFIGS": ALTER_CONFIGS,
              "IDEMPOTENT_WRITE": IDEMPOTENT_WRITE, "CREATE_TOKENS": CREATE_TOKENS,
              "DESCRIBE_TOKENS": DESCRIBE_TOKENS, "TWO_PHASE_COMMIT": TWO_PHASE_COMMIT}
OPERATION_NAMES = {v: k for k, v in OPERATIONS.items()}

# AclPermissionType
ANY_PERMISSION, DENY, ALLOW = 1, 2, 3
PERMISSIONS = {"DENY": DENY, "ALLOW": ALLOW}
PERMISSION_NAMES = {v: k for k, v in PERMISSIONS.items()}

# an ALLOW for the key also allows the operations in its set
IMPLIES: dict[int, frozenset[int]] = {
    READ: frozenset({DESCRIBE}), WRITE: frozenset({DESCRIBE}), DELETE: frozenset({DESCRIBE}),
    ALTER: frozenset({DESCRIBE}), ALTER_CONFIGS: frozenset({DESCRIBE_CONFIGS}),
    ALL: frozenset(OPERATIONS.values()),
}

NOT_PROVIDED = -2147483648  # an authorized-operations field the client did not ask for (KIP-430)

# the operations each resource type supports (Kafka's authorized-operations sets)
SUPPORTED = {
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER,
              DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE, TWO_PHASE_COMMIT),
    DELEGATION_TOKEN: (DESCRIBE,),
    USER: (CREATE_TOKENS, DESCRIBE_TOKENS),
}


def allowed_by(operation: int) -> frozenset[int]:
    """The operations whose ALLOW grants ``operation``."""
    return frozenset({operation, ALL} | {op for op, implied in IMPLIES.items() if operation in implied})


class AclBinding(NamedTuple):
    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def describe(self) -> str:
        return (f"{PERMISSION_NAMES.get(self.permission, self.permission)} {self.principal} "
                f"{OPERATION_NAMES.get(self.operation, self.operation)} from {self.host} on "
                f"{RESOURCE_NAMES.get(self.resource_type, self.resource_type)}:"
                f"{PATTERN_NAMES.get(self.pattern_type, self.pattern_type)}:{self.name}")


class AclFilter(NamedTuple):
    """DescribeAcls / DeleteAcls: None matches anything; ANY_* codes too."""

    resource_type: int
    name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission: int

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ANY_RESOURCE and self.resource_type != acl.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != ANY_OPERATION and self.operation != acl.operation:
            return False
        return self.permission == ANY_PERMISSION or self.permission == acl.permission

    def _matches_pattern(self, acl: AclBinding) -> bool:
        p = self.pattern_type
        if p == MATCH:  # every ACL that would apply to a resource of this name
            if self.name is None:
                return True
            if acl.pattern_type == LITERAL:
                return acl.name == self.name or acl.name == WILDCARD
            return acl.pattern_type == PREFIXED and self.name.startswith(acl.name)
        if p != ANY_PATTERN and p != acl.pattern_type:
            return False
        return self.name is None or self.name == acl.name


CIDR_SINCE = "4.4-IV1"  # the metadata.version from which Kafka takes CIDR hosts (isCidrAclSupported)


def validate(acl: AclBinding, cidr_allowed: bool = True) -> tuple[ErrorCode, str | None] | None:
    """Why CreateAcls must refuse ``acl`` (the error code and message), or None.

    An ANY code (resource, operation, permission) or an ANY/MATCH pattern is what a
    filter names, never an ACL: Kafka's AclBinding constructors throw for them and the
    answer is UNKNOWN_SERVER_ERROR without a message (Kafka 4.4); kipper answers the
    same. UNKNOWN codes never get here: the request does not parse (protocol/messages)."""
    if (acl.resource_type == ANY_RESOURCE or acl.pattern_type in (ANY_PATTERN, MATCH)
            or acl.operation == ANY_OPERATION or acl.permission == ANY_PERMISSION):
        return ErrorCode.UNKNOWN_SERVER_ERROR, None
    # the broker's own two checks (Kafka's AclApis), before the controller's
    if acl.resource_type == CLUSTER and acl.name != CLUSTER_NAME:
        return ErrorCode.INVALID_REQUEST, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.name:
        return ErrorCode.INVALID_REQUEST, "Invalid empty resource name"
    # (a code Kafka's enums do not know reads as their UNKNOWN)
    if acl.resource_type not in RESOURCE_NAMES:
        return ErrorCode.INVALID_REQUEST, "Invalid resourceType UNKNOWN"
    if acl.pattern_type not in (LITERAL, PREFIXED):
        return ErrorCode.INVALID_REQUEST, "Invalid patternType UNKNOWN"
    if acl.operation not in OPERATION_NAMES:
        return ErrorCode.INVALID_REQUEST, "Invalid operation UNKNOWN"
    if acl.permission not in PERMISSION_NAMES:
        return ErrorCode.INVALID_REQUEST, "Invalid permissionType UNKNOWN"
    if ":" not in acl.principal:  # (Kafka's SecurityUtils: "User:" and ":x" are principals)
        return ErrorCode.INVALID_REQUEST, (f"Could not parse principal from `{acl.principal}` (no colon is present "
                                           "separating the principal type from the principal name)")
    if not acl.host:
        return ErrorCode.INVALID_REQUEST, "Host pattern cannot be null or empty"
    if acl.host != WILDCARD and "/" in acl.host:
        if not cidr_allowed:  # (the finalized metadata.version is below CIDR_SINCE)
            return ErrorCode.UNSUPPORTED_VERSION, (f"CIDR-based ACL host patterns require metadata version "
                                                   f"{CIDR_SINCE} or higher.")
        if (why := cidr.problem(acl.host)) is not None:
            return ErrorCode.INVALID_REQUEST, f"Invalid CIDR notation '{acl.host}': {why}"
    return None
