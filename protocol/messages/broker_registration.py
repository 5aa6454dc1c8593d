"""BrokerRegistration (API key 62): a broker registers with the controller (docs/CLUSTER.md)."""

from kipper.protocol.schema import Api, F

BROKER_REGISTRATION = Api(
    key=62, name='BrokerRegistration', valid='0-4', flexible='0+',
    request=(
        F('broker_id', 'int32'),
        F('cluster_id', 'string'),
        F('incarnation_id', 'uuid'),
        F('listeners', '[]', fields=(
            F('name', 'string'),
            F('host', 'string'),
            F('port', 'uint16'),
            F('security_protocol', 'int16'),
        )),
        F('features', '[]', fields=(
            F('name', 'string'),
            F('min_supported_version', 'int16'),
            F('max_supported_version', 'int16'),
        )),
        F('rack', 'string', nullable='0+'),
        F('is_migrating_zk_broker', 'bool', '1+', default=False),
        F('log_dirs', '[]uuid', '2+'),
        F('previous_broker_epoch', 'int64', '3+', default=-1),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('broker_epoch', 'int64', default=-1),
    ),
)
