"""TxnOffsetCommit (API key 28).

kipper serves v0-4: v5 implies transaction version 2 (KIP-890 part 2, not advertised)
and v6 uses topic ids.
"""

from kipper.protocol.schema import Api, F

TXN_OFFSET_COMMIT = Api(
    key=28, name='TxnOffsetCommit', valid='0-6', flexible='3+', supported='0-4',
    request=(
        F('transactional_id', 'string'),
        F('group_id', 'string'),
        F('producer_id', 'int64'),
        F('producer_epoch', 'int16'),
        F('generation_id_or_member_epoch', 'int32', '3+', default=-1),
        F('member_id', 'string', '3+', default=''),
        F('group_instance_id', 'string', '3+', nullable='3+', default=None),
        F('topics', '[]', fields=(
            F('name', 'string', '0-5'),
            F('topic_id', 'uuid', '6+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('committed_offset', 'int64'),
                F('committed_leader_epoch', 'int32', '2+', default=-1),
                F('committed_metadata', 'string', nullable='0+'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('topics', '[]', fields=(
            F('name', 'string', '0-5'),
            F('topic_id', 'uuid', '6+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
            )),
        )),
    ),
)
