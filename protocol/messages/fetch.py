"""Fetch (API key 1)."""

from kipper.protocol import fetch_codec
from kipper.protocol.schema import Api, F, FastCodec

FETCH = Api(
    key=1, name='Fetch', valid='4-18', flexible='12+', supported='4-17',
    request=(
        F('cluster_id', 'string', '12+', nullable='12+', tag=0, tagged='12+', default=None),
        F('replica_id', 'int32', '0-14', default=-1),
        F('replica_state', '{}', '15+', tag=1, tagged='15+', fields=(
            F('replica_id', 'int32', '15+', default=-1),
            F('replica_epoch', 'int64', '15+', default=-1),
        )),
        F('max_wait_ms', 'int32'),
        F('min_bytes', 'int32'),
        F('max_bytes', 'int32', '3+', default=2147483647),
        F('isolation_level', 'int8', '4+', default=0),
        F('session_id', 'int32', '7+', default=0),
        F('session_epoch', 'int32', '7+', default=-1),
        F('topics', '[]', fields=(
            F('topic', 'string', '0-12'),
            F('topic_id', 'uuid', '13+'),
            F('partitions', '[]', fields=(
                F('partition', 'int32'),
                F('current_leader_epoch', 'int32', '9+', default=-1),
                F('fetch_offset', 'int64'),
                F('last_fetched_epoch', 'int32', '12+', default=-1),
                F('log_start_offset', 'int64', '5+', default=-1),
                F('partition_max_bytes', 'int32'),
                F('replica_directory_id', 'uuid', '17+', tag=0, tagged='17+'),
                F('high_watermark', 'int64', '18+', tag=1, tagged='18+', default=9223372036854775807),
            )),
        )),
        F('forgotten_topics_data', '[]', '7+', fields=(
            F('topic', 'string', '7-12'),
            F('topic_id', 'uuid', '13+'),
            F('partitions', '[]int32', '7+'),
        )),
        F('rack_id', 'string', '11+', default=''),
    ),
    response=(
        F('throttle_time_ms', 'int32', '1+'),
        F('error_code', 'int16', '7+'),
        F('session_id', 'int32', '7+', default=0),
        F('responses', '[]', fields=(
            F('topic', 'string', '0-12'),
            F('topic_id', 'uuid', '13+'),
            F('partitions', '[]', fields=(
                F('partition_index', 'int32'),
                F('error_code', 'int16'),
                F('high_watermark', 'int64'),
                F('last_stable_offset', 'int64', '4+', default=-1),
                F('log_start_offset', 'int64', '5+', default=-1),
                F('diverging_epoch', '{}', '12+', tag=0, tagged='12+', fields=(
                    F('epoch', 'int32', '12+', default=-1),
                    F('end_offset', 'int64', '12+', default=-1),
                )),
                F('current_leader', '{}', '12+', tag=1, tagged='12+', fields=(
                    F('leader_id', 'int32', '12+', default=-1),
                    F('leader_epoch', 'int32', '12+', default=-1),
                )),
                F('snapshot_id', '{}', '12+', tag=2, tagged='12+', fields=(
                    F('end_offset', 'int64', default=-1),
                    F('epoch', 'int32', default=-1),
                )),
                F('aborted_transactions', '[]', '4+', nullable='4+', fields=(
                    F('producer_id', 'int64', '4+'),
                    F('first_offset', 'int64', '4+'),
                )),
                F('preferred_read_replica', 'int32', '11+', default=-1),
                F('records', 'records', nullable='0+'),
            )),
        )),
        F('node_endpoints', '[]', '16+', tag=0, tagged='16+', fields=(
            F('node_id', 'int32', '16+'),
            F('host', 'string', '16+'),
            F('port', 'int32', '16+'),
            F('rack', 'string', '16+', nullable='16+', default=None),
        )),
    ),
    # Every consumed record goes out through here: fixed-field parsing and packing (issue 15),
    # checked against the declaration above by tests/property/test_fetch_codec.py.
    fast=FastCodec(parse_request=fetch_codec.parse_request, encode_response=fetch_codec.encode_response),
)
