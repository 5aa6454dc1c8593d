"""What the generator's thirteenth run found or its new values led to (issue 36,
docs/FUZZ_FINDINGS.md), replayed against Kafka 4.4 (tests/unit/test_authorizer.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register, scenario
from tests.conformance.scenarios.generated import replay


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
    listing = {"resource_type_filter": 2, "resource_name_filter": "1", "pattern_type_filter": 3,
               "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
    # Kafka's authorizer applies ACLs from the metadata log a moment later: both of them first
    run.poll(lambda: run.call(k.DESCRIBE_ACLS, 3, listing, record=False),
             lambda r: sum(len(res.get("acls") or []) for res in r.get("resources") or []) >= 2)
    run.call(k.DESCRIBE_ACLS, 3, listing)
    run.call(k.DELETE_ACLS, 3, {"filters": [{"resource_type_filter": 2, "resource_name_filter": "1",
                                             "pattern_type_filter": 3, "principal_filter": p, "host_filter": None,
                                             "operation": 1, "permission_type": 1} for p in ("User:", ":x")]})


@scenario("generated/a-request-kafka-fails-whole-changes-nothing")
def _(run):
    """Where Kafka 4.4 fails a whole request inside (UNKNOWN_SERVER_ERROR for each entry), nothing
    is changed: a CreateAcls of a valid binding beside one with an ANY operation creates neither,
    an IncrementalAlterConfigs with an operation type above 3 in one resource changes no other
    (the thirteenth run met the first: an ACL only kipper had). Within a resource Kafka's
    controller goes through the keys in a Java HashMap's order: an APPEND of a key that is no
    list met first refuses the resource alone."""
    token = run.token
    t0, t1 = k.create_topic(run), k.create_topic(run, "t1")
    run.call(k.CREATE_ACLS, 3, {"creations": [_creation(principal=f"User:{token}-u1"),
                                              _creation(principal=f"User:{token}-u1", resource_name="2", operation=1)]})
    run.call(k.DESCRIBE_ACLS, 3, {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                                  "principal_filter": f"User:{token}-u1", "host_filter": None, "operation": 1,
                                  "permission_type": 1})

    def alter(*resources, validate_only=False):
        return run.call(k.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": validate_only, "resources": [
            {"resource_type": 2, "resource_name": name, "configs": [
                {"name": key, "config_operation": op, "value": "1234567"} for key, op in ops]} for name, ops in resources]})
    alter((t0, [("retention.ms", 0)]), (t1, [("retention.ms", 7)]))
    for ops in ([("segment.ms", 7), ("retention.ms", 2)], [("retention.ms", 7), ("segment.ms", 3)],
                [("cleanup.policy", 2), ("retention.ms", 7)]):
        alter((t0, ops), validate_only=True)
    run.call(k.DESCRIBE_CONFIGS, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
        {"resource_type": 2, "resource_name": t0, "configuration_keys": ["retention.ms"]}]})
    # a BROKER resource is the broker's to refuse, before the controller: its name, then an
    # operation type it does not know (INVALID_REQUEST "Unknown operations type 7")
    for resources in (((4, "x", 7),), ((4, "7", 7),), ((4, "1", 7),), ((4, "", 7),), ((4, "x", 7), (2, t0, 0)),
                      ((4, "1", 7), (4, "x", 0))):
        run.call(k.INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": True, "resources": [
            {"resource_type": kind, "resource_name": name, "configs": [
                {"name": "log.retention.ms" if kind == 4 else "retention.ms", "config_operation": op, "value": "1"}]}
            for kind, name, op in resources]})
    # it reads every operation type before it applies one: an unknown one anywhere comes first
    # (the nineteenth run, seed 10103)
    for name in ("", "1"):
        run.call(k.INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": name, "configs": [
                {"name": "message.timestamp.after.max.ms", "config_operation": 7, "value": "1"},
                {"name": "retention.ms", "config_operation": 2, "value": "1"}]}]})


@scenario("generated/alter-share-group-offsets-of-a-negative-partition-changes-nothing")
def _(run):
    """AlterShareGroupOffsets naming a negative partition beside a valid one: Kafka's share
    coordinator refuses to initialize its state and the whole request fails inside (top-level
    UNKNOWN_SERVER_ERROR, Kafka's text); the valid partition keeps no offset."""
    t = k.create_topic(run, partitions=2)
    group = run.name("g0")

    def alter(*partitions):
        return run.call(k.APIS[91], 0, {"group_id": group, "topics": [{"topic_name": t, "partitions": [
            {"partition_index": p, "start_offset": 0} for p in partitions]}]})
    alter(0, -1)
    # the group Kafka made is at epoch 1 all the same (the eighteenth run, seed 11001)
    run.call(k.APIS[77], 1, {"group_ids": [group], "include_authorized_operations": False})
    alter(1)
    run.call(k.APIS[90], 1, {"groups": [{"group_id": group, "topics": None}]})


# CreateTopics with a config named twice: the last value stands, but a null for it anywhere is
# refused (Kafka looks for nulls in the request's list before it reads it into a map, seed 9535)
register("generated/create-topics-a-config-named-twice", replay([
    {"api": "CreateTopics", "version": 5, "body": {"timeout_ms": 30000, "validate_only": True, "topics": [
        {"name": "<T>-t1", "num_partitions": 1, "replication_factor": 1, "assignments": [],
         "configs": [{"name": "retention.ms", "value": v} for v in values]}]}}
    for values in ((None, "1"), ("1", None), ("x", "1"), ("1", "x"))]))
