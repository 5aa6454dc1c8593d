"""Produce (API key 0)."""

from kipper.protocol import produce_codec, produce_runs
from kipper.protocol.schema import Api, F, FastCodec

PRODUCE = Api(
    key=0, name='Produce', valid='3-13', flexible='9+', supported='3-12',
    request=(
        F('transactional_id', 'string', '3+', nullable='3+', default=None),
        F('acks', 'int16'),
        F('timeout_ms', 'int32'),
        F('topic_data', '[]', fields=(
            F('name', 'string', '0-12'),
            F('topic_id', 'uuid', '13+'),
            F('partition_data', '[]', fields=(
                F('index', 'int32'),
                F('records', 'records', nullable='0+'),
            )),
        )),
    ),
    response=(
        F('responses', '[]', fields=(
            F('name', 'string', '0-12'),
            F('topic_id', 'uuid', '13+'),
            F('partition_responses', '[]', fields=(
                F('index', 'int32'),
                F('error_code', 'int16'),
                F('base_offset', 'int64'),
                F('log_append_time_ms', 'int64', '2+', default=-1),
                F('log_start_offset', 'int64', '5+', default=-1),
                F('record_errors', '[]', '8+', fields=(
                    F('batch_index', 'int32', '8+'),
                    F('batch_index_error_message', 'string', '8+', nullable='8+', default=None),
                )),
                F('error_message', 'string', '8+', nullable='8+', default=None),
                F('current_leader', '{}', '10+', tag=0, tagged='10+', fields=(
                    F('leader_id', 'int32', '10+', default=-1),
                    F('leader_epoch', 'int32', '10+', default=-1),
                )),
            )),
        )),
        F('throttle_time_ms', 'int32', '1+', default=0),
        F('node_endpoints', '[]', '10+', tag=0, tagged='10+', fields=(
            F('node_id', 'int32', '10+'),
            F('host', 'string', '10+'),
            F('port', 'int32', '10+'),
            F('rack', 'string', '10+', nullable='10+', default=None),
        )),
    ),
    # Every record goes through here: fixed-field parsing and packing on both sides (issue 15),
    # and a pipelined producer's repeated requests answered as runs; checked against the
    # declaration above by tests/property/test_produce_codec.py and test_produce_runs.py.
    fast=FastCodec(
        parse_request=produce_codec.parse_request,
        encode_response=produce_codec.encode_response,
        encode_request=produce_codec.encode_request_parts,
        parse_response=produce_codec.parse_response,
        parse_frame=produce_runs.parse_frame,
        repeat=produce_runs.repeated_records,
        run=produce_runs.ProduceRun,
    ),
)
