"""DescribeQuorum (API key 55, KIP-595): the KRaft quorum of the cluster's metadata log, its
voters and observers (kafka-metadata-quorum describe)."""

from kipper.protocol.schema import Api, F

# the schema's common struct ReplicaState, a voter's or an observer's
REPLICA_STATE = (
    F('replica_id', 'int32'),
    F('replica_directory_id', 'uuid', '2+'),
    F('log_end_offset', 'int64'),
    F('last_fetch_timestamp', 'int64', '1+', default=-1),
    F('last_caught_up_timestamp', 'int64', '1+', default=-1),
)

DESCRIBE_QUORUM = Api(
    key=55, name='DescribeQuorum', valid='0-2', flexible='0+', supported='0-2',
    request=(
        F('topics', '[]', fields=(
            F('topic_name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
            )),
        )),
    ),
    response=(
        F('error_code', 'int16'),
        F('error_message', 'string', '2+', nullable='2+'),
        F('topics', '[]', fields=(
            F('topic_name', 'string'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('error_message', 'string', '2+', nullable='2+'),
                F('leader_id', 'int32'),
                F('leader_epoch', 'int32'),
                F('high_watermark', 'int64'),
                F('current_voters', '[]', fields=REPLICA_STATE),
                F('observers', '[]', fields=REPLICA_STATE),
            )),
        )),
        F('nodes', '[]', '2+', fields=(
            F('node_id', 'int32', '2+'),
            F('listeners', '[]', '2+', fields=(
                F('name', 'string', '2+'),
                F('host', 'string', '2+'),
                F('port', 'uint16', '2+'),
            )),
        )),
    ),
)
