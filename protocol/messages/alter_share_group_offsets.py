"""AlterShareGroupOffsets (API key 91, KIP-932)."""

from kipper.protocol.schema import Api, F

ALTER_SHARE_GROUP_OFFSETS = Api(
    key=91, name='AlterShareGroupOffsets', valid='0', flexible='0+',
    request=(
        F('group_id', 'string'),
        F('topics', '[]', fields=(
            F('topic_name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('start_offset', 'int64'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('responses', '[]', fields=(
            F('topic_name', 'string'),
            F('topic_id', 'uuid'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+', default=None),
            )),
        )),
    ),
)
