"""GetTelemetrySubscriptions (API key 71)."""

from kipper.protocol.schema import Api, F

GET_TELEMETRY_SUBSCRIPTIONS = Api(
    key=71, name='GetTelemetrySubscriptions', valid='0', flexible='0+',
    request=(
        F('client_instance_id', 'uuid'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('client_instance_id', 'uuid'),
        F('subscription_id', 'int32'),
        F('accepted_compression_types', '[]int8'),
        F('push_interval_ms', 'int32'),
        F('telemetry_max_bytes', 'int32'),
        F('delta_temporality', 'bool'),
        F('requested_metrics', '[]string'),
    ),
)
