"""ACLs, SCRAM credentials and client quotas in a cluster's metadata log, without sockets and
with a manual clock: the controller's engines answer CreateAcls, DeleteAcls,
AlterUserScramCredentials and AlterClientQuotas with the one-node handlers, write Kafka's
records (AccessControlEntryRecord and its removal by id, UserScramCredentialRecord and its
removal, ClientQuotaRecord) and nothing for a change that changes nothing; a broker that
applies the log's batches gets the same ACLs, credentials and quotas in its own stores."""

from __future__ import annotations

import uuid

import pytest

from kipper.broker.acl.model import ALLOW, CLUSTER, CLUSTER_NAME, DENY, LITERAL, READ, TOPIC, WRITE, AclBinding
from kipper.broker.config import load
from kipper.broker.context import RequestContext, Session
from kipper.broker.handlers import CONTROLLER_HANDLERS
from kipper.broker.server import open_engines
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS
from kipper.protocol.sasl import salted_password
from tests.unit.test_cluster_controller import Clock

SECURED = {"authorizer.class.name": "standard", "super.users": "User:admin"}


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def controller(clock):
    engines = open_engines(load(overrides={"process.roles": "controller", "node.id": "0", **SECURED}), clock=clock)
    engines.controller.bootstrap(clock())
    return engines


def broker(clock, node_id: int = 1):
    return open_engines(load(overrides={"process.roles": "broker", "node.id": str(node_id),
                                        "controller.quorum.bootstrap.servers": "127.0.0.1:1", **SECURED}),
                        clock=clock)


def call(engines, key: int, version: int, data: dict, principal: str = "User:admin"):
    schema = APIS[key].request_schema(version)
    ctx = RequestContext(engines, Session("PLAINTEXT", "127.0.0.1:5000", principal=principal), key, version, 1, "t")
    return CONTROLLER_HANDLERS[key](schema.parse(schema.build(data)), ctx)


def written(engines, start: int = 0) -> list[tuple[str, object]]:
    """The records the controller's metadata log holds from ``start`` on (bootstrap's left out)."""
    return [(r.name, r.data) for _, r in engines.controller.log.records(start) if r.name != "FeatureLevelRecord"]


def follow(broker_engines, controller_engines, clock) -> None:
    """The broker applies the whole metadata log, as its fetches would bring it."""
    mlog = controller_engines.controller.log
    for _, data in mlog.storage.batches_from(0):
        broker_engines.cluster.apply(data, clock(), mlog.end_offset)


def creation(name: str, principal: str, operation: int, permission: int) -> dict:
    return dict(resource_type=TOPIC, resource_name=name, resource_pattern_type=LITERAL, principal=principal,
                host="*", operation=operation, permission_type=permission)


def test_created_acls_are_records_once_each_and_removed_by_their_id(controller, clock):
    body = {"creations": [creation("orders", "User:alice", READ, ALLOW), creation("orders", "User:bob", WRITE, DENY)]}
    assert [r["error_code"] for r in call(controller, 30, 3, body)["results"]] == [0, 0]
    records = written(controller)
    assert [n for n, _ in records] == ["AccessControlEntryRecord"] * 2
    ids = {(d.principal, d.operation): d.id for _, d in records}
    assert all(isinstance(i, uuid.UUID) for i in ids.values())
    end = controller.controller.log.end_offset
    assert [r["error_code"] for r in call(controller, 30, 3, body)["results"]] == [0, 0]  # already there
    assert controller.controller.log.end_offset == end

    deleted = call(controller, 31, 3, {"filters": [dict(
        resource_type_filter=TOPIC, resource_name_filter="orders", pattern_type_filter=LITERAL,
        principal_filter="User:alice", host_filter=None, operation=1, permission_type=1)]})
    assert [m["principal"] for m in deleted["filter_results"][0]["matching_acls"]] == ["User:alice"]
    [(name, data)] = written(controller, end)
    assert (name, data.id) == ("RemoveAccessControlEntryRecord", ids[("User:alice", READ)])
    assert controller.acls.bindings() == [AclBinding(TOPIC, "orders", LITERAL, "User:bob", "*", WRITE, DENY)]


def test_refused_acl_changes_write_nothing(controller):
    body = {"creations": [creation("orders", "User:alice", READ, ALLOW)]}
    refused = call(controller, 30, 3, body, principal="User:mallory")
    assert refused["results"][0]["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    bad = call(controller, 30, 3, {"creations": [creation("", "User:alice", READ, ALLOW)]})
    assert bad["results"][0]["error_code"] == ErrorCode.INVALID_REQUEST
    assert written(controller) == []


def _upsertion(user: str, password: str, iterations: int = 4096) -> dict:
    salt = b"salt-of-" + user.encode()
    return {"name": user, "mechanism": 1, "iterations": iterations, "salt": salt,
            "salted_password": salted_password("sha256", password, salt, iterations)}


def test_scram_credentials_are_records_and_a_deletion_removes_one(controller):
    answer = call(controller, 51, 0, {"deletions": [], "upsertions": [_upsertion("alice", "pw")]})
    assert answer["results"] == [{"user": "alice", "error_code": 0, "error_message": None}]
    [(name, data)] = written(controller)
    assert (name, data.name, data.mechanism, data.iterations, data.salt) == (
        "UserScramCredentialRecord", "alice", 1, 4096, b"salt-of-alice")
    stored = controller.security.credentials.lookup("alice", "SCRAM-SHA-256")
    assert (stored.stored_key, stored.server_key) == (data.stored_key, data.server_key)
    assert controller.security.credentials.verify_password("alice", "pw")

    end = controller.controller.log.end_offset
    call(controller, 51, 0, {"deletions": [{"name": "alice", "mechanism": 1}], "upsertions": []})
    assert [(n, d.name, d.mechanism) for n, d in written(controller, end)] == [
        ("RemoveUserScramCredentialRecord", "alice", 1)]
    assert controller.security.describe_credentials() == {}


def _quota(entity: dict, ops: dict, validate_only: bool = False) -> dict:
    return {"entries": [{"entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
                         "ops": [{"key": k, "value": v or 0.0, "remove": v is None} for k, v in ops.items()]}],
            "validate_only": validate_only}


def test_client_quotas_are_records_of_what_changed(controller):
    entity = {"user": "alice", "client-id": None}
    assert call(controller, 49, 1, _quota(entity, {"producer_byte_rate": 1024.0}, validate_only=True)
                )["entries"][0]["error_code"] == 0
    assert written(controller) == []  # validate_only
    call(controller, 49, 1, _quota(entity, {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}))
    records = written(controller)
    assert [(d.key, d.value, d.remove) for _, d in records] == [
        ("consumer_byte_rate", 2048.0, False), ("producer_byte_rate", 1024.0, False)]
    assert {(e.entity_type, e.entity_name) for e in records[0][1].entity} == {("client-id", None), ("user", "alice")}
    end = controller.controller.log.end_offset
    call(controller, 49, 1, _quota(entity, {"producer_byte_rate": 1024.0, "consumer_byte_rate": None}))
    assert [(n, d.key, d.remove) for n, d in written(controller, end)] == [
        ("ClientQuotaRecord", "consumer_byte_rate", True)]  # the unchanged value is not written again
    assert controller.quotas.store.quotas == {(("client-id", None), ("user", "alice")): {"producer_byte_rate": 1024.0}}


def test_a_broker_following_the_log_enforces_and_authenticates_with_it(controller, clock):
    call(controller, 30, 3, {"creations": [creation("orders", "User:alice", WRITE, ALLOW)]})
    call(controller, 51, 0, {"deletions": [], "upsertions": [_upsertion("alice", "pw")]})
    call(controller, 49, 1, _quota({"user": "alice"}, {"producer_byte_rate": 10.0}))
    b = broker(clock)
    alice = Session("SASL_PLAINTEXT", "127.0.0.1:6000", principal="User:alice")
    assert not b.acls.authorize(alice, WRITE, TOPIC, "orders")
    follow(b, controller, clock)
    assert b.acls.authorize(alice, WRITE, TOPIC, "orders")
    assert not b.acls.authorize(alice, WRITE, CLUSTER, CLUSTER_NAME)
    assert b.security.credentials.verify_password("alice", "pw")
    assert b.quotas.produce.enabled and b.quotas.store.quotas == {(("user", "alice"),): {"producer_byte_rate": 10.0}}

    end = controller.controller.log.end_offset  # a later change: the broker takes it batch by batch
    call(controller, 31, 3, {"filters": [dict(
        resource_type_filter=TOPIC, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
        host_filter=None, operation=1, permission_type=1)]})
    for _, data in controller.controller.log.storage.batches_from(end):
        b.cluster.apply(data, clock(), controller.controller.log.end_offset)
    assert not b.acls.authorize(alice, WRITE, TOPIC, "orders")


def test_records_decode_as_kafkas_layout():
    """Upstream's field order (metadata/src/main/resources/common/metadata/*.json, version 0):
    a ClientQuotaRecord's bytes after the frame are the entity array, key, value, remove."""
    value = mr.encode("ClientQuotaRecord", {"entity": [{"entity_type": "user", "entity_name": None}],
                                            "key": "k", "value": 1.5, "remove": False})
    assert value[:3] == bytes([1, 14, 0])  # frame version, type 14, version 0
    assert value[3:] == (bytes([2, 5]) + b"user" + bytes([0]) + bytes([0]) + bytes([2]) + b"k"
                         + bytes.fromhex("3ff8000000000000") + bytes([0, 0]))
    assert mr.decode(value).data.value == 1.5


def envelope(engines, inner_key: int, inner_version: int, data: dict, client: str, *,
             broker_principal: str = "User:admin", principal_bytes: bytes | None = None):
    """An Envelope (v0) to the controller's handler, as a broker sends it; (its error, the inner answer)."""
    from kipper.protocol.header import decode_response, encode_request
    from kipper.protocol.messages.envelope import encode_principal

    frame = encode_request(APIS[inner_key], inner_version, 77, "client-x", data)[4:]
    answer = call(engines, 58, 0, {"request_data": bytes(frame), "client_host_address": bytes([10, 0, 0, 9]),
                                   "request_principal": principal_bytes or encode_principal(client)},
                  principal=broker_principal)
    if answer["response_data"] is None:
        return answer["error_code"], None
    cid, body = decode_response(APIS[inner_key], inner_version, answer["response_data"])
    assert cid == 77
    return answer["error_code"], body


def test_an_envelope_is_answered_as_the_client_it_carries(controller):
    body = {"creations": [creation("orders", "User:alice", READ, ALLOW)]}
    code, inner = envelope(controller, 30, 3, body, client="User:mallory")  # forwarded by a super user
    assert (code, inner.results[0].error_code) == (0, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert written(controller) == []
    code, inner = envelope(controller, 30, 3, body, client="User:admin")
    assert (code, inner.results[0].error_code) == (0, 0)
    assert [n for n, _ in written(controller)] == ["AccessControlEntryRecord"]


def test_an_envelope_from_a_broker_without_cluster_action_or_unreadable_is_refused(controller):
    body = {"creations": [creation("orders", "User:alice", READ, ALLOW)]}
    assert envelope(controller, 30, 3, body, "User:admin", broker_principal="User:mallory") == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    assert envelope(controller, 30, 3, body, "User:admin", principal_bytes=b"\x00\x07junk") == (
        ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE, None)
    produce = {"transactional_id": None, "acks": 1, "timeout_ms": 100, "topic_data": []}
    assert envelope(controller, 0, 9, produce, "User:admin") == (ErrorCode.INVALID_REQUEST, None)
    assert written(controller) == []


def test_the_principal_is_kafkas_default_principal_data():
    from kipper.protocol.messages.envelope import decode_principal, encode_principal

    data = encode_principal("User:alice")
    assert data == b"\x00\x00" + b"\x05User" + b"\x06alice" + b"\x00" + b"\x00"  # version, type, name, token, tags
    assert decode_principal(data) == "User:alice"
