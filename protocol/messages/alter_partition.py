"""AlterPartition (API key 56): a partition leader asks the controller for a new ISR."""

from kipper.protocol.schema import Api, F

ALTER_PARTITION = Api(
    key=56, name='AlterPartition', valid='2-3', flexible='0+',
    request=(
        F('broker_id', 'int32'),
        F('broker_epoch', 'int64', default=-1),
        F('topics', '[]', fields=(
            F('topic_id', 'uuid', '2+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('leader_epoch', 'int32'),
                F('new_isr', '[]int32', '0-2'),
                F('new_isr_with_epochs', '[]', '3+', fields=(
                    F('broker_id', 'int32', '3+'),
                    F('broker_epoch', 'int64', '3+', default=-1),
                )),
                F('leader_recovery_state', 'int8', '1+', default=0),
                F('partition_epoch', 'int32'),
            )),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('topics', '[]', fields=(
            F('topic_id', 'uuid', '2+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('leader_id', 'int32'),
                F('leader_epoch', 'int32'),
                F('isr', '[]int32'),
                F('leader_recovery_state', 'int8', '1+', default=0),
                F('partition_epoch', 'int32'),
            )),
        )),
    ),
)
