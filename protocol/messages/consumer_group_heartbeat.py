"""ConsumerGroupHeartbeat (API key 68)."""

from kipper.protocol.schema import Api, F

CONSUMER_GROUP_HEARTBEAT = Api(
    key=68, name='ConsumerGroupHeartbeat', valid='0-1', flexible='0+', supported='0-1',
    request=(
        F('group_id', 'string'),
        F('member_id', 'string'),
        F('member_epoch', 'int32'),
        F('instance_id', 'string', nullable='0+', default=None),
        F('rack_id', 'string', nullable='0+', default=None),
        F('rebalance_timeout_ms', 'int32', default=-1),
        F('subscribed_topic_names', '[]string', nullable='0+', default=None),
        F('subscribed_topic_regex', 'string', '1+', nullable='1+', default=None),
        F('server_assignor', 'string', nullable='0+', default=None),
        F('topic_partitions', '[]', nullable='0+', default=None, fields=(
            F('topic_id', 'uuid'),
            F('partitions', '[]int32'),
        )),
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
