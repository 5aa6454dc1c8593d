"""BrokerHeartbeat (API key 63): a broker's heartbeat to the controller, with the metadata offset it has applied."""

from kipper.protocol.schema import Api, F

BROKER_HEARTBEAT = Api(
    key=63, name='BrokerHeartbeat', valid='0-2', flexible='0+',
    request=(
        F('broker_id', 'int32'),
        F('broker_epoch', 'int64', default=-1),
        F('current_metadata_offset', 'int64'),
        F('want_fence', 'bool'),
        F('want_shut_down', 'bool'),
        F('offline_log_dirs', '[]uuid', '1+', tag=0, tagged='1+'),
        F('cordoned_log_dirs', '[]uuid', '2+', nullable='2+', tag=1, tagged='2+', default=None),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('is_caught_up', 'bool', default=False),
        F('is_fenced', 'bool', default=True),
        F('should_shut_down', 'bool'),
    ),
)
