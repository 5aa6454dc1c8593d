"""EndTxn (API key 26). v5 is transaction version 2 (KIP-890 part 2): the answer names the
producer id and the bumped epoch the producer goes on with."""

from kipper.protocol.schema import Api, F

END_TXN = Api(
    key=26, name='EndTxn', valid='0-5', flexible='3+',
    request=(
        F('transactional_id', 'string'),
        F('producer_id', 'int64'),
        F('producer_epoch', 'int16'),
        F('committed', 'bool'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('producer_id', 'int64', '5+', default=-1),
        F('producer_epoch', 'int16', '5+', default=-1),
    ),
)
