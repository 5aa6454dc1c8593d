"""DeleteGroups (API key 42): delete groups that have no members, with their
committed offsets."""

from kipper.protocol.schema import Api, F

DELETE_GROUPS = Api(
    key=42, name='DeleteGroups', valid='0-3', flexible='2+',
    request=(
        F('groups_names', '[]string'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('results', '[]', fields=(
            F('group_id', 'string'),
            F('error_code', 'int16'),
            F('error_message', 'string', '3+', nullable='3+', default=None),
        )),
    ),
)
