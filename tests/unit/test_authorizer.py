"""The authorizer's matching rules, as Kafka's StandardAuthorizer decides: operation
implications, DENY over ALLOW, LITERAL, PREFIXED and wildcard resources and principals,
hosts, super users, allow.everyone.if.no.acl.found, and the ACL filters."""

from __future__ import annotations

import pytest

from kipper.protocol.errors import ErrorCode

from kipper.broker.acl.authorizer import Authorizer
from kipper.broker.acl.model import (
    ALL, ALLOW, ALTER, ALTER_CONFIGS, ANY_OPERATION, ANY_PATTERN, ANY_PERMISSION, ANY_RESOURCE, CLUSTER,
    CLUSTER_ACTION, CREATE, DELETE, DELEGATION_TOKEN, DENY, DESCRIBE, DESCRIBE_CONFIGS, GROUP,
    IDEMPOTENT_WRITE, LITERAL, MATCH, PREFIXED, READ, TOPIC, TRANSACTIONAL_ID, WRITE, AclBinding, AclFilter,
    validate,
)

ALICE = "User:alice"


def acl(op, permission=ALLOW, name="orders", pattern=LITERAL, principal=ALICE, host="*",
        rtype=TOPIC) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, permission)


def allowed(a: Authorizer, op, name="orders", principal=ALICE, host="10.0.0.1", rtype=TOPIC) -> bool:
    return a.authorize(principal, host, op, rtype, name)


@pytest.mark.parametrize("granted,implied", [
    (READ, DESCRIBE), (WRITE, DESCRIBE), (DELETE, DESCRIBE), (ALTER, DESCRIBE),
    (ALTER_CONFIGS, DESCRIBE_CONFIGS),
])
def test_an_allow_implies_describe_or_describe_configs(granted, implied):
    a = Authorizer()
    a.add([acl(granted)])
    assert allowed(a, granted) and allowed(a, implied)


@pytest.mark.parametrize("granted,not_implied", [
    (DESCRIBE, READ), (READ, WRITE), (WRITE, READ), (DESCRIBE_CONFIGS, ALTER_CONFIGS), (CREATE, DESCRIBE),
])
def test_implications_go_one_way_only(granted, not_implied):
    a = Authorizer()
    a.add([acl(granted)])
    assert not allowed(a, not_implied)


def test_all_allows_every_operation_and_a_deny_of_all_denies_every_one():
    a = Authorizer()
    a.add([acl(ALL)])
    assert all(allowed(a, op) for op in (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, ALTER_CONFIGS))
    a.add([acl(ALL, DENY)])
    assert not any(allowed(a, op) for op in (READ, WRITE, DESCRIBE))


def test_deny_wins_over_allow_and_denies_nothing_it_does_not_name():
    a = Authorizer()
    a.add([acl(READ), acl(WRITE), acl(WRITE, DENY)])
    assert allowed(a, READ) and not allowed(a, WRITE)
    a.add([acl(READ, DENY)])
    assert not allowed(a, READ)
    assert allowed(a, DESCRIBE), "a DENY of READ does not deny the DESCRIBE an ALLOW of WRITE gives"


def test_prefixed_literal_and_wildcard_resources():
    a = Authorizer()
    a.add([acl(READ, name="app-", pattern=PREFIXED), acl(WRITE, name="logs"), acl(DESCRIBE, name="*")])
    assert allowed(a, READ, "app-orders") and allowed(a, READ, "app-")
    assert not allowed(a, READ, "ap") and not allowed(a, READ, "other")
    assert allowed(a, WRITE, "logs") and not allowed(a, WRITE, "logs2")
    assert allowed(a, DESCRIBE, "anything")
    assert not a.matching(TOPIC, "zzz-app-x") or all(x.name == "*" for x in a.matching(TOPIC, "zzz-app-x"))


def test_principals_and_hosts():
    a = Authorizer()
    a.add([acl(READ, principal="User:*", host="10.0.0.1"), acl(WRITE, principal="User:bob")])
    assert allowed(a, READ, principal="User:anyone")
    assert not allowed(a, READ, host="10.0.0.2")
    assert not allowed(a, WRITE) and allowed(a, WRITE, principal="User:bob")


def test_super_users_bypass_every_check_and_nobody_else_without_an_acl():
    a = Authorizer(super_users={"User:admin"})
    a.add([acl(READ, DENY, principal="User:*")])
    assert allowed(a, WRITE, principal="User:admin") and allowed(a, READ, principal="User:admin")
    assert not allowed(a, READ)
    assert not allowed(a, READ, name="no-acl-at-all"), "allow.everyone.if.no.acl.found is false"


def test_allow_everyone_if_no_acl_found_only_where_no_acl_names_the_resource():
    a = Authorizer(allow_everyone_if_no_acl_found=True)
    a.add([acl(READ, principal="User:bob")])
    assert allowed(a, WRITE, name="unnamed")
    assert not allowed(a, WRITE), "an ACL names 'orders', so the default does not apply"


def test_cluster_transactional_id_and_group_resources():
    a = Authorizer()
    a.add([acl(IDEMPOTENT_WRITE, rtype=CLUSTER, name="kafka-cluster"),
           acl(WRITE, rtype=TRANSACTIONAL_ID, name="tx-", pattern=PREFIXED), acl(READ, rtype=GROUP, name="g")])
    assert allowed(a, IDEMPOTENT_WRITE, "kafka-cluster", rtype=CLUSTER)
    assert not allowed(a, CLUSTER_ACTION, "kafka-cluster", rtype=CLUSTER)
    assert allowed(a, WRITE, "tx-1", rtype=TRANSACTIONAL_ID) and allowed(a, DESCRIBE, "tx-1", rtype=TRANSACTIONAL_ID)
    assert allowed(a, READ, "g", rtype=GROUP) and not allowed(a, READ, "g", rtype=TOPIC)


def test_authorized_operations_are_kafkas_bit_sets():
    a = Authorizer()
    a.add([acl(READ)])
    assert a.authorized_operations(ALICE, "h", TOPIC, "orders") == (1 << READ) | (1 << DESCRIBE)
    a.add([acl(ALL)])
    assert bin(a.authorized_operations(ALICE, "h", TOPIC, "orders")).count("1") == 8


def test_filters_match_as_kafkas_acl_binding_filter():
    acls = [acl(READ, name="app-", pattern=PREFIXED), acl(WRITE, name="app-orders"), acl(READ, name="*"),
            acl(READ, name="other")]
    match = AclFilter(TOPIC, "app-orders", MATCH, None, None, ANY_OPERATION, ANY_PERMISSION)
    assert [x.name for x in acls if match.matches(x)] == ["app-", "app-orders", "*"]
    literal = AclFilter(TOPIC, "app-", LITERAL, None, None, ANY_OPERATION, ANY_PERMISSION)
    assert not any(literal.matches(x) for x in acls)
    anything = AclFilter(ANY_RESOURCE, None, ANY_PATTERN, None, None, ANY_OPERATION, ANY_PERMISSION)
    assert all(anything.matches(x) for x in acls)
    writes = AclFilter(ANY_RESOURCE, None, ANY_PATTERN, ALICE, "*", WRITE, ALLOW)
    assert [x.name for x in acls if writes.matches(x)] == ["app-orders"]


def test_remove_by_filter_and_the_version_moves_on_every_change():
    a = Authorizer()
    a.add([acl(READ), acl(WRITE)])
    v = a.version
    [gone] = a.remove([AclFilter(TOPIC, "orders", LITERAL, None, None, WRITE, ANY_PERMISSION)])
    assert [x.operation for x in gone] == [WRITE] and a.version > v
    assert allowed(a, READ) and not allowed(a, WRITE)


def test_every_filter_of_one_removal_matches_the_acls_as_they_were():
    # Kafka's controller answers each filter of a DeleteAcls from the ACLs before the request
    a = Authorizer()
    a.add([acl(READ), acl(WRITE)])
    writes = AclFilter(TOPIC, "orders", LITERAL, None, None, WRITE, ANY_PERMISSION)
    everything = AclFilter(TOPIC, "orders", LITERAL, None, None, ANY_OPERATION, ANY_PERMISSION)
    first, second, third = a.remove([writes, writes, everything])
    assert [x.operation for x in first] == [x.operation for x in second] == [WRITE]
    assert sorted(x.operation for x in third) == sorted([READ, WRITE])
    assert a.acls() == []


@pytest.mark.parametrize("binding,problem", [
    (acl(READ, pattern=5), "Invalid patternType UNKNOWN"),
    (acl(READ, principal="alice"), "Could not parse principal from `alice` (no colon"),
    (acl(ALTER, rtype=CLUSTER, name="other"), "kafka-cluster"),
    (acl(READ, host=""), "Host pattern"),
    (acl(READ, name=""), "empty resource name"),
])
def test_acls_that_cannot_be_created(binding, problem):
    code, message = validate(binding)
    assert code == ErrorCode.INVALID_REQUEST and problem in message


@pytest.mark.parametrize("principal", ["User:", ":x"])
def test_a_principal_with_an_empty_type_or_name_is_one(principal):
    """Kafka's SecurityUtils splits at the first colon: "User:" and ":x" are principals."""
    assert validate(acl(READ, principal=principal)) is None


@pytest.mark.parametrize("binding", [
    acl(READ, pattern=MATCH), acl(READ, pattern=ANY_PATTERN), acl(READ, rtype=ANY_RESOURCE),
    acl(ANY_OPERATION), acl(READ, permission=ANY_PERMISSION),
])
def test_a_binding_with_a_filters_any_or_match_code_is_an_unknown_server_error_as_in_kafka(binding):
    assert validate(binding) == (ErrorCode.UNKNOWN_SERVER_ERROR, None)


def test_delegation_token_acls_are_accepted_as_kafka_does():
    assert validate(acl(DESCRIBE, rtype=DELEGATION_TOKEN, name="t")) is None


def test_a_cidr_host_allows_every_address_of_its_network_and_no_other():
    a = Authorizer()
    a.add([acl(READ, host="10.0.0.0/8"), acl(WRITE, host="fd00::/16"), acl(DELETE, permission=DENY, host="10.9.0.0/16")])
    assert allowed(a, READ, host="10.200.3.4") and allowed(a, READ, host="10.0.0.0")
    assert allowed(a, READ, host="::ffff:10.1.2.3")  # an IPv4 client seen by a dual-stack listener
    assert not allowed(a, READ, host="11.0.0.1") and not allowed(a, READ, host="::1")
    assert allowed(a, WRITE, host="fd00::7") and not allowed(a, WRITE, host="fd01::7") and not allowed(a, WRITE,
                                                                                                     host="10.0.0.1")
    a.add([acl(DELETE, host="10.0.0.0/8")])
    assert allowed(a, DELETE, host="10.8.0.1") and not allowed(a, DELETE, host="10.9.1.1")  # the DENY's network


@pytest.mark.parametrize("host,why", [
    ("1.2.3.4/99", "Value [99] not in range [0,32]"), ("300.1.1.1/8", "Value [300] not in range [0,255]"),
    ("abc/3", "Could not parse [abc/3]"), ("10.0.0.1/+8", "Could not parse [10.0.0.1/+8]"),
    ("fd00::/129", "Could not parse [fd00::/129] - prefix length must be between 0 and 128"),
    ("fd00::/x", "Could not parse [fd00::/x] - invalid prefix length"),
    ("::ffff:1.2.3.4/96", "Could not parse [::ffff:1.2.3.4] - not an IPv6 address"), ("a:b/8", "Could not parse [a:b]"),
])
def test_a_host_that_is_no_cidr_network_is_refused_in_kafka_s_words(host, why):
    assert validate(acl(READ, host=host)) == (ErrorCode.INVALID_REQUEST, f"Invalid CIDR notation '{host}': {why}")
    for fine in ("10.0.0.0/8", "[::1]/128", "fe80::1%1/64", "no-slash-is-any-text"):
        assert validate(acl(READ, host=fine)) is None


def test_the_broker_checks_a_cluster_s_name_and_an_empty_name_before_the_rest():
    assert validate(acl(READ, name="", rtype=99, pattern=99)) == (ErrorCode.INVALID_REQUEST, "Invalid empty resource name")
    assert validate(acl(CLUSTER_ACTION, name="kafka-cluster", pattern=PREFIXED, rtype=CLUSTER)) is None


def test_a_cidr_host_counts_for_an_operation_on_any_resource_of_a_type_too():
    a = Authorizer()
    a.add([acl(WRITE, host="10.0.0.0/8")])
    assert a.authorize_any(ALICE, "10.1.1.1", WRITE, TOPIC) and not a.authorize_any(ALICE, "11.1.1.1", WRITE, TOPIC)


def test_a_cidr_host_needs_metadata_version_4_4_iv1():
    refused = validate(acl(READ, host="10.0.0.0/8"), cidr_allowed=False)
    assert refused == (ErrorCode.UNSUPPORTED_VERSION,
                       "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.")
    assert validate(acl(READ, host="10.0.0.0/8"), cidr_allowed=True) is None
    assert validate(acl(READ, host="10.0.0.1"), cidr_allowed=False) is None  # (no "/": any text, at any version)
    from kipper.broker.handlers.acls import CIDR_LEVEL
    assert CIDR_LEVEL == 32  # 4.4-IV1's feature level
