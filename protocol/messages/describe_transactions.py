"""DescribeTransactions (API key 65): the coordinator's state of transactional ids."""

from kipper.protocol.schema import Api, F

DESCRIBE_TRANSACTIONS = Api(
    key=65, name='DescribeTransactions', valid='0', flexible='0+',
    request=(
        F('transactional_ids', '[]string'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('transaction_states', '[]', fields=(
            F('error_code', 'int16'),
            F('transactional_id', 'string'),
            F('transaction_state', 'string'),
            F('transaction_timeout_ms', 'int32'),
            F('transaction_start_time_ms', 'int64'),
            F('producer_id', 'int64'),
            F('producer_epoch', 'int16'),
            F('topics', '[]', fields=(
                F('topic', 'string'),
                F('partitions', '[]int32'),
            )),
        )),
    ),
)
