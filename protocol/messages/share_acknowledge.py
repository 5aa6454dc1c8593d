"""ShareAcknowledge (API key 79)."""

from kipper.protocol.schema import Api, F

SHARE_ACKNOWLEDGE = Api(
    key=79, name='ShareAcknowledge', valid='1-2', flexible='0+',
    request=(
        F('group_id', 'string', nullable='0+', default=None),
        F('member_id', 'string', nullable='0+'),
        F('share_session_epoch', 'int32'),
        F('is_renew_ack', 'bool', '2+', default=False),
        F('topics', '[]', fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('acknowledgement_batches', '[]', fields=(
                    F('first_offset', 'int64'),
                    F('last_offset', 'int64'),
                    F('acknowledge_types', '[]int8'),
                )),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('acquisition_lock_timeout_ms', 'int32', '2+'),
        F('responses', '[]', fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+', default=None),
                F('current_leader', '{}', fields=(
                    F('leader_id', 'int32'),
                    F('leader_epoch', 'int32'),
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
