"""FindCoordinator (API key 10)."""

from kipper.protocol.schema import Api, F

FIND_COORDINATOR = Api(
    key=10, name='FindCoordinator', valid='0-6', flexible='3+',
    request=(
        F('key', 'string', '0-3'),
        F('key_type', 'int8', '1+', default=0),
        F('coordinator_keys', '[]string', '4+'),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('error_code', 'int16', '0-3'),
        F('error_message', 'string', '1-3', nullable='1-3'),
        F('node_id', 'int32', '0-3'),
        F('host', 'string', '0-3'),
        F('port', 'int32', '0-3'),
        F('coordinators', '[]', '4+', fields=(
            F('key', 'string', '4+'),
            F('node_id', 'int32', '4+'),
            F('host', 'string', '4+'),
            F('port', 'int32', '4+'),
            F('error_code', 'int16', '4+'),
            F('error_message', 'string', '4+', nullable='4+'),
        )),
    ),
)
