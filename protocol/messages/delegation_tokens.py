"""The delegation-token APIs (KIP-48): CreateDelegationToken (38), RenewDelegationToken (39),
ExpireDelegationToken (40), DescribeDelegationToken (41).

Written by hand from upstream's {Create,Renew,Expire,Describe}DelegationToken{Request,Response}.json
(not among the shared schema files); Kafka 4 serves version 1 and later (KIP-896 removed 0).
"""

from kipper.protocol.schema import Api, F

CREATE_DELEGATION_TOKEN = Api(
    key=38, name='CreateDelegationToken', valid='1-3', flexible='2+',
    request=(
        F('owner_principal_type', 'string', '3+', nullable='3+', default=None),
        F('owner_principal_name', 'string', '3+', nullable='3+', default=None),
        F('renewers', '[]', fields=(
            F('principal_type', 'string'),
            F('principal_name', 'string'),
        )),
        F('max_lifetime_ms', 'int64'),
    ),
    response=(
        F('error_code', 'int16'),
        F('principal_type', 'string'),
        F('principal_name', 'string'),
        F('token_requester_principal_type', 'string', '3+'),
        F('token_requester_principal_name', 'string', '3+'),
        F('issue_timestamp_ms', 'int64'),
        F('expiry_timestamp_ms', 'int64'),
        F('max_timestamp_ms', 'int64'),
        F('token_id', 'string'),
        F('hmac', 'bytes'),
        F('throttle_time_ms', 'int32'),
    ),
)

def _token_change(key: int, name: str, period: str) -> Api:
    """RenewDelegationToken and ExpireDelegationToken: a token's HMAC and a period, answered
    with its new expiry time."""
    return Api(
        key=key, name=name, valid='1-2', flexible='2+',
        request=(
            F('hmac', 'bytes'),
            F(period, 'int64'),
        ),
        response=(
            F('error_code', 'int16'),
            F('expiry_timestamp_ms', 'int64'),
            F('throttle_time_ms', 'int32'),
        ),
    )


RENEW_DELEGATION_TOKEN = _token_change(39, 'RenewDelegationToken', 'renew_period_ms')
EXPIRE_DELEGATION_TOKEN = _token_change(40, 'ExpireDelegationToken', 'expiry_time_period_ms')

DESCRIBE_DELEGATION_TOKEN = Api(
    key=41, name='DescribeDelegationToken', valid='1-3', flexible='2+',
    request=(
        F('owners', '[]', nullable='0+', fields=(
            F('principal_type', 'string'),
            F('principal_name', 'string'),
        )),
    ),
    response=(
        F('error_code', 'int16'),
        F('tokens', '[]', fields=(
            F('principal_type', 'string'),
            F('principal_name', 'string'),
            F('token_requester_principal_type', 'string', '3+'),
            F('token_requester_principal_name', 'string', '3+'),
            F('issue_timestamp', 'int64'),
            F('expiry_timestamp', 'int64'),
            F('max_timestamp', 'int64'),
            F('token_id', 'string'),
            F('hmac', 'bytes'),
            F('renewers', '[]', fields=(
                F('principal_type', 'string'),
                F('principal_name', 'string'),
            )),
        )),
        F('throttle_time_ms', 'int32'),
    ),
)
