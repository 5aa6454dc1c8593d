"""DescribeGroups (API key 15): classic group state and members.

Written by hand after Kafka's DescribeGroupsRequest/Response schemas, which
are not among the shared schema files.
"""

from kipper.protocol.schema import Api, F

DESCRIBE_GROUPS = Api(
    key=15, name='DescribeGroups', valid='0-6', flexible='5+',
    request=(
        F('groups', '[]string'),
        F('include_authorized_operations', 'bool', '3+'),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('groups', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', '6+', nullable='6+', default=None),
            F('group_id', 'string'),
            F('group_state', 'string'),
            F('protocol_type', 'string'),
            F('protocol_data', 'string'),
            F('members', '[]', fields=(
                F('member_id', 'string'),
                F('group_instance_id', 'string', '4+', nullable='4+', default=None),
                F('client_id', 'string'),
                F('client_host', 'string'),
                F('member_metadata', 'bytes'),
                F('member_assignment', 'bytes'),
            )),
            F('authorized_operations', 'int32', '3+', default=-2147483648),
        )),
    ),
)
