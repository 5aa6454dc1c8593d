"""UnregisterBroker (API key 64): remove a (fenced) broker's registration."""

from kipper.protocol.schema import Api, F

UNREGISTER_BROKER = Api(
    key=64, name='UnregisterBroker', valid='0', flexible='0+',
    request=(
        F('broker_id', 'int32'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
    ),
)
