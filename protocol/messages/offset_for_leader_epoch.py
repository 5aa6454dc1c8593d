"""OffsetForLeaderEpoch (API key 23): the end offset of a leader epoch (KIP-101, KIP-320)."""

from kipper.protocol.schema import Api, F

OFFSET_FOR_LEADER_EPOCH = Api(
    key=23, name='OffsetForLeaderEpoch', valid='2-4', flexible='4+',
    request=(
        F('replica_id', 'int32', '3+', default=-2),
        F('topics', '[]', fields=(
            F('topic', 'string'),
            F('partitions', '[]', fields=(
                F('partition', 'int32'),
                F('current_leader_epoch', 'int32', '2+', default=-1),
                F('leader_epoch', 'int32'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32', '2+'),
        F('topics', '[]', fields=(
            F('topic', 'string'),
            F('partitions', '[]', fields=(
                F('error_code', 'int16'),
                F('partition', 'int32'),
                F('leader_epoch', 'int32', '1+', default=-1),
                F('end_offset', 'int64', default=-1),
            )),
        )),
    ),
)
