"""SaslHandshake (API key 17)."""

from kipper.protocol.schema import Api, F

SASL_HANDSHAKE = Api(
    key=17, name='SaslHandshake', valid='0-1', flexible='none',
    request=(
        F('mechanism', 'string'),
    ),
    response=(
        F('error_code', 'int16'),
        F('mechanisms', '[]string'),
    ),
)
