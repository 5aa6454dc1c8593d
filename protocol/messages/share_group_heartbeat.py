"""ShareGroupHeartbeat (API key 76)."""

from kipper.protocol.schema import Api, F

SHARE_GROUP_HEARTBEAT = Api(
    key=76, name='ShareGroupHeartbeat', valid='1', flexible='0+',
    request=(
        F('group_id', 'string'),
        F('member_id', 'string'),
        F('member_epoch', 'int32'),
        F('rack_id', 'string', nullable='0+', default=None),
        F('subscribed_topic_names', '[]string', nullable='0+', default=None),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('member_id', 'string', nullable='0+', default=None),
        F('member_epoch', 'int32'),
        F('heartbeat_interval_ms', 'int32'),
        F('assignment', '{}', nullable='0+', default=None, fields=(
            F('topic_partitions', '[]', fields=(
                F('topic_id', 'uuid'),
                F('partitions', '[]int32'),
            )),
        )),
    ),
)
