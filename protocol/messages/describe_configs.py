"""DescribeConfigs (API key 32)."""

from kipper.protocol.schema import Api, F

DESCRIBE_CONFIGS = Api(
    key=32, name='DescribeConfigs', valid='1-4', flexible='4+',
    request=(
        F('resources', '[]', fields=(
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('configuration_keys', '[]string', nullable='0+'),
        )),
        F('include_synonyms', 'bool', '1+', default=False),
        F('include_documentation', 'bool', '3+', default=False),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('results', '[]', fields=(
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
            F('resource_type', 'int8'),
            F('resource_name', 'string'),
            F('configs', '[]', fields=(
                F('name', 'string'),
                F('value', 'string', nullable='0+'),
                F('read_only', 'bool'),
                F('config_source', 'int8', '1+', default=-1),
                F('is_sensitive', 'bool'),
                F('synonyms', '[]', '1+', fields=(
                    F('name', 'string', '1+'),
                    F('value', 'string', '1+', nullable='0+'),
                    F('source', 'int8', '1+'),
                )),
                F('config_type', 'int8', '3+', default=0),
                F('documentation', 'string', '3+', nullable='0+'),
            )),
        )),
    ),
)
