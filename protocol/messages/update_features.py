"""UpdateFeatures (API key 57)."""

from kipper.protocol.schema import Api, F

UPDATE_FEATURES = Api(
    key=57, name='UpdateFeatures', valid='0-2', flexible='0+',
    request=(
        F('timeout_ms', 'int32', default=60000),
        F('feature_updates', '[]', fields=(
            F('feature', 'string'),
            F('max_version_level', 'int16'),
            F('allow_downgrade', 'bool', '0'),
            F('upgrade_type', 'int8', '1+', default=1),
        )),
        F('validate_only', 'bool', '1+', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('results', '[]', '0-1', fields=(
            F('feature', 'string'),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
        )),
    ),
)
