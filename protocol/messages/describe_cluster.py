"""DescribeCluster (API key 60): the cluster id, controller and brokers, and
the operations the principal may perform on the cluster."""

from kipper.protocol.schema import Api, F

DESCRIBE_CLUSTER = Api(
    key=60, name='DescribeCluster', valid='0-2', flexible='0+',
    request=(
        F('include_cluster_authorized_operations', 'bool'),
        F('endpoint_type', 'int8', '1+', default=1),
        F('include_fenced_brokers', 'bool', '2+'),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+', default=None),
        F('endpoint_type', 'int8', '1+', default=1),
        F('cluster_id', 'string'),
        F('controller_id', 'int32', default=-1),
        F('brokers', '[]', fields=(
            F('broker_id', 'int32'),
            F('host', 'string'),
            F('port', 'int32'),
            F('rack', 'string', nullable='0+', default=None),
            F('is_fenced', 'bool', '2+'),
        )),
        F('cluster_authorized_operations', 'int32', default=-2147483648),
    ),
)
