"""AlterConfigs (API key 33): replace the whole dynamic config set of topics,
brokers or groups (the non-incremental API older tools still send)."""

from kipper.protocol.schema import Api, F

ALTER_CONFIGS = Api(
    key=33, name='AlterConfigs', valid='0-2', flexible='2+',
    request=(
        F('resources', '[]', fields=(
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('configs', '[]', fields=(
                F('name', 'string'),
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
