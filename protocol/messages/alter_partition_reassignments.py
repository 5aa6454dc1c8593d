"""AlterPartitionReassignments (API key 45, KIP-455)."""

from kipper.protocol.schema import Api, F

ALTER_PARTITION_REASSIGNMENTS = Api(
    key=45, name='AlterPartitionReassignments', valid='0-1', flexible='0+',
    request=(
        F('timeout_ms', 'int32', default=60000),
        F('allow_replication_factor_change', 'bool', '1+', default=True),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('replicas', '[]int32', nullable='0+', default=None),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('allow_replication_factor_change', 'bool', '1+', default=True),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('responses', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+'),
            )),
        )),
    ),
)
