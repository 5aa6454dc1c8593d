"""WriteTxnMarkers (API key 27)."""

from kipper.protocol.schema import Api, F

WRITE_TXN_MARKERS = Api(
    key=27, name='WriteTxnMarkers', valid='1-2', flexible='1+',
    request=(
        F('markers', '[]', fields=(
            F('producer_id', 'int64'),
            F('producer_epoch', 'int16'),
            F('transaction_result', 'bool'),
            F('topics', '[]', fields=(
                F('name', 'string'),
                F('partition_indexes', '[]int32'),
            )),
            F('coordinator_epoch', 'int32'),
            F('transaction_version', 'int8', '2+', default=0),
        )),
    ),
    response=(
        F('markers', '[]', fields=(
            F('producer_id', 'int64'),
            F('topics', '[]', fields=(
                F('name', 'string'),
                F('partitions', '[]', fields=(
                    F('partition_index', 'int32'),
                    F('error_code', 'int16'),
                )),
            )),
        )),
    ),
)
