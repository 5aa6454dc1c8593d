"""DescribeClientQuotas (API key 48)."""

from kipper.protocol.schema import Api, F

DESCRIBE_CLIENT_QUOTAS = Api(
    key=48, name='DescribeClientQuotas', valid='0-1', flexible='1+',
    request=(
        F('components', '[]', fields=(
            F('entity_type', 'string'),
            F('match_type', 'int8'),
            F('match', 'string', nullable='0+'),
        )),
        F('strict', 'bool'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('entries', '[]', nullable='0+', fields=(
            F('entity', '[]', fields=(
                F('entity_type', 'string'),
                F('entity_name', 'string', nullable='0+'),
            )),
            F('values', '[]', fields=(
                F('key', 'string'),
                F('value', 'float64'),
            )),
        )),
    ),
)
