"""DescribeProducers (API key 61): the idempotent and transactional producers a
partition keeps state for (kafka-transactions.sh describe-producers)."""

from kipper.protocol.schema import Api, F

DESCRIBE_PRODUCERS = Api(
    key=61, name='DescribeProducers', valid='0', flexible='0+',
    request=(
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partition_indexes', '[]int32'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+', default=None),
                F('active_producers', '[]', fields=(
                    F('producer_id', 'int64'),
                    F('producer_epoch', 'int32'),
                    F('last_sequence', 'int32', default=-1),
                    F('last_timestamp', 'int64', default=-1),
                    F('coordinator_epoch', 'int32'),
                    F('current_txn_start_offset', 'int64', default=-1),
                )),
            )),
        )),
    ),
)
