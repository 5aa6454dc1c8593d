"""ListPartitionReassignments (API key 46, KIP-455)."""

from kipper.protocol.schema import Api, F

LIST_PARTITION_REASSIGNMENTS = Api(
    key=46, name='ListPartitionReassignments', valid='0', flexible='0+',
    request=(
        F('timeout_ms', 'int32', default=60000),
        F('topics', '[]', nullable='0+', default=None, fields=(
            F('name', 'string'),
            F('partition_indexes', '[]int32'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('replicas', '[]int32'),
                F('adding_replicas', '[]int32'),
                F('removing_replicas', '[]int32'),
            )),
        )),
    ),
)
