"""AddPartitionsToTxn (API key 24). v0-3 are the clients'; v4+ (batched, VerifyOnly) the
brokers', which kipper serves too, as Kafka does (CLUSTER_ACTION)."""

from kipper.protocol.schema import Api, F

ADD_PARTITIONS_TO_TXN = Api(
    key=24, name='AddPartitionsToTxn', valid='0-5', flexible='3+',
    request=(
        F('transactions', '[]', '4+', fields=(
            F('transactional_id', 'string', '4+'),
            F('producer_id', 'int64', '4+'),
            F('producer_epoch', 'int16', '4+'),
            F('verify_only', 'bool', '4+', default=False),
            F('topics', '[]', '4+', fields=(
                F('name', 'string'),
                F('partitions', '[]int32'),
            )),
        )),
        F('v3_and_below_transactional_id', 'string', '0-3'),
        F('v3_and_below_producer_id', 'int64', '0-3'),
        F('v3_and_below_producer_epoch', 'int16', '0-3'),
        F('v3_and_below_topics', '[]', '0-3', fields=(
            F('name', 'string'),
            F('partitions', '[]int32'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16', '4+'),
        F('results_by_transaction', '[]', '4+', fields=(
            F('transactional_id', 'string', '4+'),
            F('topic_results', '[]', '4+', fields=(
                F('name', 'string'),
                F('results_by_partition', '[]', fields=(
                    F('partition_index', 'int32'),
                    F('partition_error_code', 'int16'),
                )),
            )),
        )),
        F('results_by_topic_v3_and_below', '[]', '0-3', fields=(
            F('name', 'string'),
            F('results_by_partition', '[]', fields=(
                F('partition_index', 'int32'),
                F('partition_error_code', 'int16'),
            )),
        )),
    ),
)
