"""TxnOffsetCommit (API key 28). v5 is transaction version 2's (the group is added to the
transaction, KIP-890 part 2); v6 names topics by id (KIP-1319)."""

from kipper.protocol.schema import Api, F

TXN_OFFSET_COMMIT = Api(
    key=28, name='TxnOffsetCommit', valid='0-6', flexible='3+',
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
