"""The common structs of the streams-group schemas (KIP-1071), declared once as Kafka's
StreamsGroupHeartbeat and StreamsGroupDescribe JSON schemas declare them: KeyValue, TopicInfo,
TaskIds, TaskOffset and Endpoint. Each function gives the field ``name`` holding that struct;
keyword arguments (versions, nullable, default) pass through to ``F``."""

from kipper.protocol.schema import F


def key_values(name: str, **options):
    return F(name, '[]', fields=(F('key', 'string'), F('value', 'string')), **options)


def topic_infos(name: str, **options):
    return F(name, '[]', fields=(
        F('name', 'string'),
        F('partitions', 'int32'),
        F('replication_factor', 'int16'),
        key_values('topic_configs'),
    ), **options)


def task_ids(name: str, **options):
    return F(name, '[]', fields=(F('subtopology_id', 'string'), F('partitions', '[]int32')), **options)


def task_offsets(name: str, **options):
    return F(name, '[]', fields=(F('subtopology_id', 'string'), F('partition', 'int32'), F('offset', 'int64')),
             **options)


def endpoint(name: str, **options):
    return F(name, '{}', fields=(F('host', 'string'), F('port', 'uint16')), **options)


def topic_partitions(name: str):
    return F(name, '[]', fields=(F('topic', 'string'), F('partitions', '[]int32')))


def topology_nodes(name: str, struct: str):
    """Describe v1's topology nodes (``struct`` '[]' for a list, '{}' for one node)."""
    return F(name, struct, '1+', fields=(
        F('name', 'string', '1+'),
        F('node_type', 'int8', '1+'),
        F('source_topics', '[]string', '1+'),
        F('sink_topic', 'string', '1+', nullable='1+', default=None),
        F('stores', '[]string', '1+'),
        F('successors', '[]string', '1+'),
    ))
