"""DeleteShareGroupOffsets (API key 92, KIP-932)."""

from kipper.protocol.schema import Api, F

DELETE_SHARE_GROUP_OFFSETS = Api(
    key=92, name='DeleteShareGroupOffsets', valid='0', flexible='0+',
    request=(
        F('group_id', 'string'),
        F('topics', '[]', fields=(
            F('topic_name', 'string'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('responses', '[]', fields=(
            F('topic_name', 'string'),
            F('topic_id', 'uuid'),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+', default=None),
        )),
    ),
)
