"""DescribeTopicPartitions (API key 75, KIP-966): topics and their partitions, a page at a
time behind a cursor. Kafka's Admin describeTopics (kafka-topics --describe) asks this
before Metadata; it carries the eligible leader replicas Metadata lacks."""

from kipper.protocol.schema import Api, F

_CURSOR = (
    F('topic_name', 'string'),
    F('partition_index', 'int32'),
)

DESCRIBE_TOPIC_PARTITIONS = Api(
    key=75, name='DescribeTopicPartitions', valid='0', flexible='0+',
    request=(
        F('topics', '[]', fields=(
            F('name', 'string'),
        )),
        F('response_partition_limit', 'int32', default=2000),
        F('cursor', '{}', nullable='0+', default=None, fields=_CURSOR),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('topics', '[]', fields=(
            F('error_code', 'int16'),
            F('name', 'string', nullable='0+'),
            F('topic_id', 'uuid'),
            F('is_internal', 'bool'),
            F('partitions', '[]', fields=(
                F('error_code', 'int16'),
                F('partition_index', 'int32'),
                F('leader_id', 'int32'),
                F('leader_epoch', 'int32', default=-1),
                F('replica_nodes', '[]int32'),
                F('isr_nodes', '[]int32'),
                F('eligible_leader_replicas', '[]int32', nullable='0+', default=None),
                F('last_known_elr', '[]int32', nullable='0+', default=None),
                F('offline_replicas', '[]int32'),
            )),
            F('topic_authorized_operations', 'int32', default=-2147483648),
        )),
        F('next_cursor', '{}', nullable='0+', default=None, fields=_CURSOR),
    ),
)
