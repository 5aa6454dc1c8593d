"""ListConfigResources (API key 74)."""

from kipper.protocol.schema import Api, F

LIST_CONFIG_RESOURCES = Api(
    key=74, name='ListConfigResources', valid='0-1', flexible='0+',
    request=(
        F('resource_types', '[]int8', '1+'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('config_resources', '[]', fields=(
            F('resource_name', 'string'),
            F('resource_type', 'int8', '1+', default=16),
        )),
    ),
)
