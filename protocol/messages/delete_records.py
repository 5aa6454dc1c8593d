"""DeleteRecords (API key 21)."""

from kipper.protocol.schema import Api, F

DELETE_RECORDS = Api(
    key=21, name='DeleteRecords', valid='0-2', flexible='2+',
    request=(
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('offset', 'int64'),
            )),
        )),
        F('timeout_ms', 'int32'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('low_watermark', 'int64'),
                F('error_code', 'int16'),
            )),
        )),
    ),
)
