"""IncrementalAlterConfigs (API key 44): set, delete, append to or subtract
from configs of topics, groups and brokers.

Written by hand after Kafka's IncrementalAlterConfigsRequest/Response
schemas, which are not among the shared schema files.
"""

from kipper.protocol.schema import Api, F

INCREMENTAL_ALTER_CONFIGS = Api(
    key=44, name='IncrementalAlterConfigs', valid='0-1', flexible='1+',
    request=(
        F('resources', '[]', fields=(
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('configs', '[]', fields=(
                F('name', 'string'),
                F('config_operation', 'int8'),
                F('value', 'string', nullable='0+'),
            )),
        )),
        F('validate_only', 'bool'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('responses', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
        )),
    ),
)
