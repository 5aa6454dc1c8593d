"""ACLs created, described and deleted through confluent-kafka's and kafka-python's admin
clients and `kipper acls`, kept across a SIGKILL; SECURITY_DISABLED without an authorizer."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.requires import module

pytestmark = pytest.mark.interop
ck = module("confluent_kafka", "interop")


@pytest.fixture
def acl_broker(tmp_path):
    broker = BrokerProcess({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                            "super.users": "User:ANONYMOUS", "log.dirs": str(tmp_path / "data")},
                           port=free_port()).start()
    yield broker
    broker.stop()


def _confluent_acls(bootstrap: str):
    from confluent_kafka.admin import (
        AclBindingFilter, AclOperation, AclPermissionType, AdminClient, ResourcePatternType, ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    return admin, everything


def test_confluent_kafka_creates_describes_and_deletes_acls(acl_broker):
    from confluent_kafka.admin import (
        AclBinding, AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType, ResourceType,
    )

    admin, everything = _confluent_acls(acl_broker.bootstrap)
    bindings = [AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*",
                           AclOperation.READ, AclPermissionType.ALLOW),
                AclBinding(ResourceType.TOPIC, "app-", ResourcePatternType.PREFIXED, "User:bob", "*",
                           AclOperation.WRITE, AclPermissionType.ALLOW),
                AclBinding(ResourceType.GROUP, "g", ResourcePatternType.LITERAL, "User:alice", "*",
                           AclOperation.READ, AclPermissionType.DENY)]
    for f in admin.create_acls(bindings).values():
        assert f.result(10) is None
    found = admin.describe_acls(everything).result(10)
    assert sorted((b.name, b.principal, b.operation.name) for b in found) == [
        ("app-", "User:bob", "WRITE"), ("g", "User:alice", "READ"), ("orders", "User:alice", "READ")]
    matching = admin.describe_acls(AclBindingFilter(
        ResourceType.TOPIC, "app-orders", ResourcePatternType.MATCH, None, None, AclOperation.ANY,
        AclPermissionType.ANY)).result(10)
    assert [b.name for b in matching] == ["app-"]
    [deleted] = admin.delete_acls([AclBindingFilter(
        ResourceType.TOPIC, None, ResourcePatternType.ANY, "User:alice", None, AclOperation.ANY,
        AclPermissionType.ANY)]).values()
    assert [b.name for b in deleted.result(10)] == ["orders"]
    assert len(admin.describe_acls(everything).result(10)) == 2
    bad = AclBinding(ResourceType.BROKER, "not-the-cluster", ResourcePatternType.LITERAL, "User:x", "*",
                     AclOperation.ALTER, AclPermissionType.ALLOW)
    with pytest.raises(ck.KafkaException):
        list(admin.create_acls([bad]).values())[0].result(10)


def test_kafka_python_creates_describes_and_deletes_acls(acl_broker):
    module("kafka", "interop")
    from kafka.admin import (
        ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
        ResourcePattern, ResourcePatternFilter, ResourceType,
    )

    admin = KafkaAdminClient(bootstrap_servers=acl_broker.bootstrap)
    acl = ACL("User:carol", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
              ResourcePattern(ResourceType.TOPIC, "logs", ACLResourcePatternType.LITERAL))
    result = admin.create_acls([acl])
    assert result["failed"] == [] and len(result["succeeded"]) == 1
    flt = ACLFilter("User:carol", None, ACLOperation.ANY, ACLPermissionType.ANY,
                    ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    acls, error = admin.describe_acls(flt)
    assert [a.resource_pattern.resource_name for a in acls] == ["logs"]
    [(_, deleted, error)] = admin.delete_acls([flt])
    assert [a.resource_pattern.resource_name for a in deleted] == ["logs"] and error.errno == 0
    assert admin.describe_acls(flt)[0] == []
    admin.close()


def _kipper(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kipper", "acls", *args], capture_output=True, text=True,
                          timeout=60)


def test_kipper_acls_and_acls_surviving_a_sigkill(acl_broker):
    bs = ["--bootstrap-server", acl_broker.bootstrap]
    added = _kipper(*bs, "--add", "--allow-principal", "User:dave", "--producer", "--topic", "t",
                    "--transactional-id", "tx", "--idempotent")
    assert added.returncode == 0, added.stderr
    consumer = _kipper(*bs, "--add", "--allow-principal", "User:erin", "--consumer", "--topic", "t",
                       "--group", "g")
    assert consumer.returncode == 0, consumer.stderr
    acl_broker.kill()
    acl_broker.start()
    listed = _kipper(*bs, "--list")
    assert listed.returncode == 0, listed.stderr
    for expected in ("principal=User:dave, host=*, operation=WRITE",
                     "principal=User:dave, host=*, operation=IDEMPOTENT_WRITE",
                     "resourceType=TRANSACTIONAL_ID, name=tx", "principal=User:erin, host=*, operation=READ"):
        assert expected in listed.stdout
    removed = _kipper(*bs, "--remove", "--allow-principal", "User:erin", "--consumer", "--topic", "t",
                      "--group", "g")
    assert removed.returncode == 0 and "Removed 3 ACL(s)" in removed.stdout
    only_t = _kipper(*bs, "--list", "--topic", "t")
    assert "User:erin" not in only_t.stdout and "User:dave" in only_t.stdout
    usage = _kipper(*bs, "--add", "--allow-principal", "User:x")
    assert usage.returncode != 0 and "name a resource" in usage.stderr


def test_without_an_authorizer_the_acl_apis_say_security_disabled():
    from confluent_kafka.admin import (
        AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType,
    )

    from kipper.client.acl_requests import AclBinding as Binding
    from kipper.client.acl_requests import describe_acls
    from kipper.client.blocking import connect_any
    from kipper.protocol.errors import ErrorCode

    with BrokerProcess() as broker:
        with connect_any(broker.bootstrap) as conn:
            got = describe_acls(conn, Binding("ANY", None, "ANY", None, None, "ANY", "ANY"))
            assert got.error_code == ErrorCode.SECURITY_DISABLED
        admin, everything = _confluent_acls(broker.bootstrap)
        assert admin.describe_acls(everything).result(10) == []  # what librdkafka makes of it
        binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:a", "*",
                             AclOperation.READ, AclPermissionType.ALLOW)
        with pytest.raises(ck.KafkaException):
            list(admin.create_acls([binding]).values())[0].result(10)
