"""AllocateProducerIds (API key 67): a broker takes a block of producer ids from the controller."""

from kipper.protocol.schema import Api, F

ALLOCATE_PRODUCER_IDS = Api(
    key=67, name='AllocateProducerIds', valid='0', flexible='0+',
    request=(
        F('broker_id', 'int32'),
        F('broker_epoch', 'int64', default=-1),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('producer_id_start', 'int64'),
        F('producer_id_len', 'int32'),
    ),
)
