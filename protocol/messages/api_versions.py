"""ApiVersions (API key 18)."""

from kipper.protocol.schema import Api, F

API_VERSIONS = Api(
    key=18, name='ApiVersions', valid='0-5', flexible='3+', supported='0-4',
    request=(
        F('client_software_name', 'string', '3+'),
        F('client_software_version', 'string', '3+'),
        F('cluster_id', 'string', '5+', nullable='5+', default=None),
        F('node_id', 'int32', '5+', default=-1),
    ),
    response=(
        F('error_code', 'int16'),
        F('api_keys', '[]', fields=(
            F('api_key', 'int16'),
            F('min_version', 'int16'),
            F('max_version', 'int16'),
        )),
        F('throttle_time_ms', 'int32', '1+'),
        F('supported_features', '[]', '3+', tag=0, tagged='3+', fields=(
            F('name', 'string', '3+'),
            F('min_version', 'int16', '3+'),
            F('max_version', 'int16', '3+'),
        )),
        F('finalized_features_epoch', 'int64', '3+', tag=1, tagged='3+', default=-1),
        F('finalized_features', '[]', '3+', tag=2, tagged='3+', fields=(
            F('name', 'string', '3+'),
            F('max_version_level', 'int16', '3+'),
            F('min_version_level', 'int16', '3+'),
        )),
        F('zk_migration_ready', 'bool', '3+', tag=3, tagged='3+', default=False),
    ),
)
