"""InitProducerId (API key 22).

kipper adds one tagged field to the response (docs/PROTOCOL_EXTENSIONS.md):
the broker's max.in.flight.sequence.number.per.connection (seed 000), so a
producer can learn its duplicate window. Clients that do not know the tag
skip it, as KIP-482 requires.
"""

from kipper.protocol.schema import Api, F

# kipper extension tags start far above Kafka's own (which count up from 0)
KIPPER_MAX_IN_FLIGHT_SEQUENCES_TAG = 10000

INIT_PRODUCER_ID = Api(
    key=22, name='InitProducerId', valid='0-6', flexible='2+', supported='0-5',
    request=(
        F('transactional_id', 'string', nullable='0+'),
        F('transaction_timeout_ms', 'int32'),
        F('producer_id', 'int64', '3+', default=-1),
        F('producer_epoch', 'int16', '3+', default=-1),
        F('enable2_pc', 'bool', '6+', default=False),
        F('keep_prepared_txn', 'bool', '6+', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('producer_id', 'int64', default=-1),
        F('producer_epoch', 'int16'),
        F('ongoing_txn_producer_id', 'int64', '6+', default=-1),
        F('ongoing_txn_producer_epoch', 'int16', '6+', default=-1),
        F('max_in_flight_sequence_number_per_connection', 'int32', '2+',
          tag=KIPPER_MAX_IN_FLIGHT_SEQUENCES_TAG, tagged='2+', default=-1),
    ),
)
