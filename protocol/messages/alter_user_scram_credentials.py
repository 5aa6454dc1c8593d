"""AlterUserScramCredentials (API key 51), KIP-554.

Written by hand from upstream AlterUserScramCredentials{Request,Response}.json
(not among the shared schema files), in the generated modules' style. The
client sends the salted password, never the password itself.
"""

from kipper.protocol.schema import Api, F

ALTER_USER_SCRAM_CREDENTIALS = Api(
    key=51, name='AlterUserScramCredentials', valid='0', flexible='0+',
    request=(
        F('deletions', '[]', fields=(
            F('name', 'string'),
            F('mechanism', 'int8'),
        )),
        F('upsertions', '[]', fields=(
            F('name', 'string'),
            F('mechanism', 'int8'),
            F('iterations', 'int32'),
            F('salt', 'bytes'),
            F('salted_password', 'bytes'),
        )),
    ),
    response=(
        F('throttle_time_ms', 'int32'),
        F('results', '[]', fields=(
            F('user', 'string'),
            F('error_code', 'int16'),
            F('error_message', 'string', nullable='0+'),
        )),
    ),
)
