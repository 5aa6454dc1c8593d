"""ShareFetch (API key 78)."""

from kipper.protocol.schema import Api, F

SHARE_FETCH = Api(
    key=78, name='ShareFetch', valid='1-2', flexible='0+',
    request=(
        F('group_id', 'string', nullable='0+', default=None),
        F('member_id', 'string', nullable='0+'),
        F('share_session_epoch', 'int32'),
        F('max_wait_ms', 'int32'),
        F('min_bytes', 'int32'),
        F('max_bytes', 'int32', default=2147483647),
        F('max_records', 'int32', '1+'),
        F('batch_size', 'int32', '1+'),
        F('share_acquire_mode', 'int8', '2+', default=0),
        F('is_renew_ack', 'bool', '2+', default=False),
        F('topics', '[]', fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('partition_max_bytes', 'int32', '0'),
                F('acknowledgement_batches', '[]', fields=(
                    F('first_offset', 'int64'),
                    F('last_offset', 'int64'),
                    F('acknowledge_types', '[]int8'),
                )),
            )),
        )),
        F('forgotten_topics_data', '[]', fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]int32'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('acquisition_lock_timeout_ms', 'int32', '1+'),
        F('responses', '[]', fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+', default=None),
                F('acknowledge_error_code', 'int16'),
                F('acknowledge_error_message', 'string', nullable='0+', default=None),
                F('current_leader', '{}', fields=(
                    F('leader_id', 'int32'),
                    F('leader_epoch', 'int32'),
                )),
                F('records', 'records', nullable='0'),
                F('acquired_records', '[]', fields=(
                    F('first_offset', 'int64'),
                    F('last_offset', 'int64'),
                    F('delivery_count', 'int16'),
                )),
            )),
        )),
        F('node_endpoints', '[]', fields=(
            F('node_id', 'int32'),
            F('host', 'string'),
            F('port', 'int32'),
            F('rack', 'string', nullable='0+', default=None),
        )),
    ),
)
