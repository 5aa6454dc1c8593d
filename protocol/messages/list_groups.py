"""ListGroups (API key 16): the groups a broker coordinates.

Written by hand after Kafka's ListGroupsRequest/Response schemas, which are
not among the shared schema files.
"""

from kipper.protocol.schema import Api, F

LIST_GROUPS = Api(
    key=16, name='ListGroups', valid='0-5', flexible='3+',
    request=(
        F('states_filter', '[]string', '4+'),
        F('types_filter', '[]string', '5+'),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('error_code', 'int16'),
        F('groups', '[]', fields=(
            F('group_id', 'string'),
            F('protocol_type', 'string'),
            F('group_state', 'string', '4+'),
            F('group_type', 'string', '5+'),
        )),
    ),
)
