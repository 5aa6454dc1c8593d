"""OffsetDelete (API key 47): delete a group's committed offsets for partitions
it no longer consumes."""

from kipper.protocol.schema import Api, F

OFFSET_DELETE = Api(
    key=47, name='OffsetDelete', valid='0', flexible='none',
    request=(
        F('group_id', 'string'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
            )),
        )),
    ),
    response=(
        F('error_code', 'int16'),
        F('throttle_time_ms', 'int32'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
            )),
        )),
    ),
)
