"""Admin answers the conformance suite (tests/conformance, issue 29) found to differ from
Apache Kafka 4.4's, fixed in kipper; these hold without Kafka. Each states what Kafka answers."""

from __future__ import annotations

import pytest

from kipper.protocol.messages import APIS

CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = APIS[30], APIS[29], APIS[31]
TOPIC = 2


def _acl_filter(rt=1, pt=1, op=1, perm=1):
    return {"resource_type_filter": rt, "resource_name_filter": None, "pattern_type_filter": pt,
            "principal_filter": None, "host_filter": None, "operation": op, "permission_type": perm}


@pytest.mark.parametrize("api,body", [
    (CREATE_ACLS, {"creations": [{"resource_type": 0, "resource_name": "t", "resource_pattern_type": 3,
                                  "principal": "User:x", "host": "*", "operation": 2, "permission_type": 3}]}),
    (CREATE_ACLS, {"creations": [{"resource_type": TOPIC, "resource_name": "t", "resource_pattern_type": 3,
                                  "principal": "User:x", "host": "*", "operation": 0, "permission_type": 3}]}),
    (DESCRIBE_ACLS, _acl_filter(pt=0)),
    (DELETE_ACLS, {"filters": [_acl_filter(perm=0)]}),
])
def test_an_acl_request_with_an_unknown_code_closes_the_connection_as_kafka_does(conn, api, body):
    # Kafka's ACL requests refuse UNKNOWN (0) codes while parsing: no answer, the connection closes
    with pytest.raises(ConnectionError):
        conn.send_raw(api, 3, body)
