"""OffsetFetch (API key 9)."""

from kipper.protocol.schema import Api, F

OFFSET_FETCH = Api(
    key=9, name='OffsetFetch', valid='1-10', flexible='6+', supported='1-9',
    request=(
        F('group_id', 'string', '0-7'),
        F('topics', '[]', '0-7', nullable='2-7', fields=(
            F('name', 'string', '0-7'),
            F('partition_indexes', '[]int32', '0-7'),
        )),
        F('groups', '[]', '8+', fields=(
            F('group_id', 'string', '8+'),
            F('member_id', 'string', '9+', nullable='9+', default=None),
            F('member_epoch', 'int32', '9+', default=-1),
            F('topics', '[]', '8+', nullable='8+', fields=(
                F('name', 'string', '8-9'),
                F('topic_id', 'uuid', '10+'),
                F('partition_indexes', '[]int32', '8+'),
            )),
        )),
        F('require_stable', 'bool', '7+', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32', '3+'),
        F('topics', '[]', '0-7', fields=(
            F('name', 'string', '0-7'),
            F('partitions', '[]', '0-7', fields=(
                F('partition_index', 'int32', '0-7'),
                F('committed_offset', 'int64', '0-7'),
                F('committed_leader_epoch', 'int32', '5-7', default=-1),
                F('metadata', 'string', '0-7', nullable='0-7'),
                F('error_code', 'int16', '0-7'),
            )),
        )),
        F('error_code', 'int16', '2-7', default=0),
        F('groups', '[]', '8+', fields=(
            F('group_id', 'string', '8+'),
            F('topics', '[]', '8+', fields=(
                F('name', 'string', '8-9'),
                F('topic_id', 'uuid', '10+'),
                F('partitions', '[]', '8+', fields=(
                    F('partition_index', 'int32', '8+'),
                    F('committed_offset', 'int64', '8+'),
                    F('committed_leader_epoch', 'int32', '8+', default=-1),
                    F('metadata', 'string', '8+', nullable='8+'),
                    F('error_code', 'int16', '8+'),
                )),
            )),
            F('error_code', 'int16', '8+', default=0),
        )),
    ),
)
