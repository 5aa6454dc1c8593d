"""Kafka's ACL operations and the authorized-operations bit fields (KIP-430).

Metadata, DescribeCluster and the group Describe APIs answer "what may this
principal do" as a 32-bit field with bit ``code`` set for each AclOperation.
Without an authorizer Kafka sets every operation the resource type supports
(AclEntry.supportedOperations); kipper has no ACLs, so that is its answer too.
"""

from __future__ import annotations

from enum import IntEnum

NOT_PROVIDED = -2147483648  # Integer.MIN_VALUE: the client did not ask


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


_O = AclOperation

SUPPORTED = {  # Kafka's AclEntry.supportedOperations
    "topic": (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS,
              _O.ALTER_CONFIGS),
    "group": (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    "cluster": (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
                _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    "transactional_id": (_O.DESCRIBE, _O.WRITE),
}


def bit_field(operations) -> int:
    """Kafka's Utils.to32BitField: bit ``code`` set for each operation."""
    field = 0
    for op in operations:
        field |= 1 << int(op)
    return field


def operations(field: int) -> list[AclOperation]:
    """The operations a bit field holds (tools print them)."""
    if field == NOT_PROVIDED:
        return []
    return [op for op in AclOperation if field & (1 << int(op))]


TOPIC_OPERATIONS = bit_field(SUPPORTED["topic"])
GROUP_OPERATIONS = bit_field(SUPPORTED["group"])
CLUSTER_OPERATIONS = bit_field(SUPPORTED["cluster"])
