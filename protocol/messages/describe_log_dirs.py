"""DescribeLogDirs (API key 35): the broker's log directories and the size of
each partition in them."""

from kipper.protocol.schema import Api, F

DESCRIBE_LOG_DIRS = Api(
    key=35, name='DescribeLogDirs', valid='1-5', flexible='2+',
    request=(
        F('topics', '[]', nullable='0+', fields=(
            F('topic', 'string'),
            F('partitions', '[]int32'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16', '3+'),
        F('results', '[]', fields=(
            F('error_code', 'int16'),
            F('log_dir', 'string'),
            F('topics', '[]', fields=(
                F('name', 'string'),
                F('partitions', '[]', fields=(
                    F('partition_index', 'int32'),
                    F('partition_size', 'int64'),
                    F('offset_lag', 'int64'),
                    F('is_future_key', 'bool'),
                )),
            )),
            F('total_bytes', 'int64', '4+', default=-1),
            F('usable_bytes', 'int64', '4+', default=-1),
            F('is_cordoned', 'bool', '5+', default=False),
        )),
    ),
)
