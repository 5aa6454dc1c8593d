"""ListOffsets (API key 2)."""

from kipper.protocol.schema import Api, F

LIST_OFFSETS = Api(
    key=2, name='ListOffsets', valid='1-11', flexible='6+', supported='1-10',
    request=(
        F('replica_id', 'int32'),
        F('isolation_level', 'int8', '2+'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('current_leader_epoch', 'int32', '4+', default=-1),
                F('timestamp', 'int64'),
            )),
        )),
        F('timeout_ms', 'int32', '10+'),
    ),
    response=(
        F('throttle_time_ms', 'int32', '2+'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('timestamp', 'int64', '1+', default=-1),
                F('offset', 'int64', '1+', default=-1),
                F('leader_epoch', 'int32', '4+', default=-1),
            )),
        )),
    ),
)
