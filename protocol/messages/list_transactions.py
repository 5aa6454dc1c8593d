"""ListTransactions (API key 66): transactional ids, filtered by state,
producer id, duration (v1) and an id pattern (v2)."""

from kipper.protocol.schema import Api, F

LIST_TRANSACTIONS = Api(
    key=66, name='ListTransactions', valid='0-2', flexible='0+',
    request=(
        F('state_filters', '[]string'),
        F('producer_id_filters', '[]int64'),
        F('duration_filter', 'int64', '1+', default=-1),
        F('transactional_id_pattern', 'string', '2+', nullable='2+', default=None),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('unknown_state_filters', '[]string'),
        F('transaction_states', '[]', fields=(
            F('transactional_id', 'string'),
            F('producer_id', 'int64'),
            F('transaction_state', 'string'),
        )),
    ),
)
