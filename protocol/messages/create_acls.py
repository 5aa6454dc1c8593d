"""CreateAcls (API key 30)."""

from kipper.protocol.schema import Api, F

UNKNOWN = 0  # the UNKNOWN code of ResourceType, PatternType, AclOperation, AclPermissionType


def _check(body, version: int) -> None:
    """Kafka's CreateAclsRequest refuses, while parsing, a creation with an UNKNOWN code:
    the connection is closed."""
    for c in body.creations:
        if UNKNOWN in (c.resource_type, c.get('resource_pattern_type', 3), c.operation, c.permission_type):
            raise ValueError("an ACL with an UNKNOWN resource, pattern, operation or permission type")


CREATE_ACLS = Api(
    key=30, name='CreateAcls', valid='1-3', flexible='2+', check=_check,
    request=(
        F('creations', '[]', fields=(
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('resource_pattern_type', 'int8', '1+', default=3),
            F('principal', 'string'),
            F('host', 'string'),
            F('operation', 'int8'),
            F('permission_type', 'int8'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('results', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
        )),
    ),
)
