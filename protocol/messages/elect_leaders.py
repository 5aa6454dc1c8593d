"""ElectLeaders (API key 43, KIP-460): elect the preferred or an unclean leader of partitions
(kafka-leader-election)."""

from kipper.protocol.schema import Api, F

ELECT_LEADERS = Api(
    key=43, name='ElectLeaders', valid='0-2', flexible='2+', supported='0-2',
    request=(
        F('election_type', 'int8', '1+'),
        F('topic_partitions', '[]', nullable='0+', fields=(
            F('topic', 'string'),
            F('partitions', '[]int32'),
        )),
        F('timeout_ms', 'int32', default=60000),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16', '1+'),
        F('replica_election_results', '[]', fields=(
            F('topic', 'string'),
            F('partition_result', '[]', fields=(
                F('partition_id', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', nullable='0+'),
            )),
        )),
    ),
)
