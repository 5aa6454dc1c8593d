"""OffsetCommit (API key 8)."""

from kipper.protocol.schema import Api, F

OFFSET_COMMIT = Api(
    key=8, name='OffsetCommit', valid='2-10', flexible='8+', supported='2-9',
    request=(
        F('group_id', 'string'),
        F('generation_id_or_member_epoch', 'int32', '1+', default=-1),
        F('member_id', 'string', '1+'),
        F('group_instance_id', 'string', '7+', nullable='7+', default=None),
        F('retention_time_ms', 'int64', '2-4', default=-1),
        F('topics', '[]', fields=(
            F('name', 'string', '0-9'),
            F('topic_id', 'uuid', '10+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('committed_offset', 'int64'),
                F('committed_leader_epoch', 'int32', '6+', default=-1),
                F('committed_metadata', 'string', nullable='0+'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32', '3+'),
        F('topics', '[]', fields=(
            F('name', 'string', '0-9'),
            F('topic_id', 'uuid', '10+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
            )),
        )),
    ),
)
