"""PushTelemetry (API key 72)."""

from kipper.protocol.schema import Api, F

PUSH_TELEMETRY = Api(
    key=72, name='PushTelemetry', valid='0', flexible='0+',
    request=(
        F('client_instance_id', 'uuid'),
        F('subscription_id', 'int32'),
        F('terminating', 'bool'),
        F('compression_type', 'int8'),
        F('metrics', 'bytes'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
    ),
)
