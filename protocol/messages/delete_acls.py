"""DeleteAcls (API key 31)."""

from kipper.protocol.messages.describe_acls import ACL_FILTER, check_filter
from kipper.protocol.schema import Api, F


def _check(body, version: int) -> None:
    for f in body.filters:
        check_filter(f, version)


DELETE_ACLS = Api(
    key=31, name='DeleteAcls', valid='1-3', flexible='2+', check=_check,
    request=(
        F('filters', '[]', fields=ACL_FILTER),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('filter_results', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
            F('matching_acls', '[]', fields=(
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+'),
                F('resource_type', 'int8'),
                F('resource_name', 'string'),
                F('pattern_type', 'int8', '1+', default=3),
                F('principal', 'string'),
                F('host', 'string'),
                F('operation', 'int8'),
                F('permission_type', 'int8'),
            )),
        )),
    ),
)
