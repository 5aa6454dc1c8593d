"""DescribeUserScramCredentials (API key 50), KIP-554.

Written by hand from upstream DescribeUserScramCredentials{Request,Response}.json
(not among the shared schema files), in the generated modules' style.
"""

from kipper.protocol.schema import Api, F

DESCRIBE_USER_SCRAM_CREDENTIALS = Api(
    key=50, name='DescribeUserScramCredentials', valid='0', flexible='0+',
    request=(
        F('users', '[]', nullable='0+', fields=(
            F('name', 'string'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('error_code', 'int16'),
        F('error_message', 'string', nullable='0+'),
        F('results', '[]', fields=(
            F('user', 'string'),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
            F('credential_infos', '[]', fields=(
                F('mechanism', 'int8'),
                F('iterations', 'int32'),
            )),
        )),
    ),
)
