"""SyncGroup (API key 14)."""

from kipper.protocol.schema import Api, F

SYNC_GROUP = Api(
    key=14, name='SyncGroup', valid='0-5', flexible='4+',
    request=(
        F('group_id', 'string'),
        F('generation_id', 'int32'),
        F('member_id', 'string'),
        F('group_instance_id', 'string', '3+', nullable='3+', default=None),
        F('protocol_type', 'string', '5+', nullable='5+', default=None),
        F('protocol_name', 'string', '5+', nullable='5+', default=None),
        F('assignments', '[]', fields=(
            F('member_id', 'string'),
            F('assignment', 'bytes'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('error_code', 'int16'),
        F('protocol_type', 'string', '5+', nullable='5+', default=None),
        F('protocol_name', 'string', '5+', nullable='5+', default=None),
        F('assignment', 'bytes'),
    ),
)
