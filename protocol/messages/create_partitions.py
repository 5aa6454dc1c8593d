"""CreatePartitions (API key 37): grow a topic's partition count."""

from kipper.protocol.schema import Api, F

CREATE_PARTITIONS = Api(
    key=37, name='CreatePartitions', valid='0-3', flexible='2+',
    request=(
        F('topics', '[]', fields=(
            F('name', 'string'),
            F('count', 'int32'),
            F('assignments', '[]', nullable='0+', fields=(
                F('broker_ids', '[]int32'),
            )),
        )),
        F('timeout_ms', 'int32'),
        F('validate_only', 'bool'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('results', '[]', fields=(
            F('name', 'string'),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+', default=None),
        )),
    ),
)
