"""DescribeAcls (API key 29)."""

from kipper.protocol.schema import Api, F

# an ACL filter: DescribeAcls's request, one of DeleteAcls's filters
ACL_FILTER = (
    F('resource_type_filter', 'int8'),
    F('resource_name_filter', 'string', nullable='0+'),
    F('pattern_type_filter', 'int8', '1+', default=3),
    F('principal_filter', 'string', nullable='0+'),
    F('host_filter', 'string', nullable='0+'),
    F('operation', 'int8'),
    F('permission_type', 'int8'),
)

UNKNOWN = 0  # the UNKNOWN code of ResourceType, PatternType, AclOperation, AclPermissionType


def check_filter(f, version: int) -> None:
    """Kafka's DescribeAcls/DeleteAcls requests refuse, while parsing, a filter with an
    UNKNOWN code (AclBindingFilter.isUnknown): the connection is closed."""
    codes = (f.resource_type_filter, f.get('pattern_type_filter', 3), f.operation, f.permission_type)
    if UNKNOWN in codes:
        raise ValueError("an ACL filter with an UNKNOWN resource, pattern, operation or permission type")


DESCRIBE_ACLS = Api(
    key=29, name='DescribeAcls', valid='1-3', flexible='2+',
    check=check_filter,
    request=ACL_FILTER,
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('resources', '[]', fields=(
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('pattern_type', 'int8', '1+', default=3),
            F('acls', '[]', fields=(
                F('principal', 'string'),
                F('host', 'string'),
                F('operation', 'int8'),
                F('permission_type', 'int8'),
            )),
        )),
    ),
)
