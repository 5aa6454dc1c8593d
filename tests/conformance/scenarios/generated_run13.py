"""What the generator's thirteenth run found or its new values led to (issue 36,
docs/FUZZ_FINDINGS.md), replayed against Kafka 4.4 (tests/unit/test_authorizer.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario


def _creation(**changed) -> dict:
    acl = {"resource_type": 2, "resource_name": "1", "resource_pattern_type": 3, "principal": "User:<T>-u0",
           "host": "*", "operation": 2, "permission_type": 3}
    return {**acl, **changed}


@scenario("generated/acl-principals-and-unknown-codes")
def _(run):
    """CreateAcls splits a principal at its first colon as Kafka's SecurityUtils does ("User:"
    and ":x" are principals, "User" is refused with Kafka's words), and names a code its enums
    do not know UNKNOWN; the texts are compared word for word."""
    token = run.token
    for changed in ({"principal": "User:"}, {"principal": ":x"}, {"principal": "User"}, {"principal": ""},
                    {"permission_type": 9}, {"resource_pattern_type": 9}, {"operation": 99}, {"resource_type": 99}):
        creation = {key: value.replace("<T>", token) if isinstance(value, str) else value
                    for key, value in _creation(**changed).items()}
        run.call(k.CREATE_ACLS, 3, {"creations": [creation]}, messages=True, label=f"CreateAcls {changed}")
    run.call(k.DESCRIBE_ACLS, 3, {"resource_type_filter": 2, "resource_name_filter": "1", "pattern_type_filter": 3,
                                  "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1})
    run.call(k.DELETE_ACLS, 3, {"filters": [{"resource_type_filter": 2, "resource_name_filter": "1",
                                             "pattern_type_filter": 3, "principal_filter": p, "host_filter": None,
                                             "operation": 1, "permission_type": 1} for p in ("User:", ":x")]})
