"""AddOffsetsToTxn (API key 25)."""

from kipper.protocol.schema import Api, F

ADD_OFFSETS_TO_TXN = Api(
    key=25, name='AddOffsetsToTxn', valid='0-4', flexible='3+', supported='0-4',
    request=(
        F('transactional_id', 'string'),
        F('producer_id', 'int64'),
        F('producer_epoch', 'int16'),
        F('group_id', 'string'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
    ),
)
