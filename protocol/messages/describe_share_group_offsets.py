"""DescribeShareGroupOffsets (API key 90, KIP-932; v1 adds Lag, KIP-1226)."""

from kipper.protocol.schema import Api, F

DESCRIBE_SHARE_GROUP_OFFSETS = Api(
    key=90, name='DescribeShareGroupOffsets', valid='0-1', flexible='0+',
    request=(
        F('groups', '[]', fields=(
            F('group_id', 'string'),
            F('topics', '[]', nullable='0+', fields=(
                F('topic_name', 'string'),
                F('partitions', '[]int32'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('groups', '[]', fields=(
            F('group_id', 'string'),
            F('topics', '[]', fields=(
                F('topic_name', 'string'),
                F('topic_id', 'uuid'),
                F('partitions', '[]', fields=(
                    F('partition_index', 'int32'),
                    F('start_offset', 'int64'),
                    F('leader_epoch', 'int32'),
                    F('lag', 'int64', versions='1+', default=-1),
                    F('error_code', 'int16'),
                    F('error_message', 'string', nullable='0+', default=None),
                )),
            )),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+', default=None),
        )),
    ),
)
