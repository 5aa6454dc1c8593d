"""ACLs, SCRAM credentials and client quotas in a three-broker kipper cluster live in the
metadata log, as in KRaft (docs/CLUSTER.md): a change made through one broker goes to the
controller, which writes it, and every broker replays it, so an ACL created through broker 1
refuses or allows on broker 2, a SCRAM user made through broker 2 logs in on broker 3, a quota
set through broker 1 throttles on every broker, and a restarted broker has them all again.
The changes are made with confluent-kafka's AdminClient (ACLs, SCRAM) and kipper's client
(quotas, which confluent-kafka does not alter); logins are real SASL/SCRAM exchanges."""

from __future__ import annotations

import time

import pytest

from kipper.client import admin
from kipper.client.blocking import BlockingConnection, connect_any
from kipper.client.connect import connect
from kipper.client.producer_requests import produce
from kipper.cluster import EmbeddedCluster
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.testing import unique_name
from tests.support import requires

ck = requires.module("confluent_kafka", "interop")

SASL = "SASL_PLAINTEXT"
# PLAINTEXT (User:ANONYMOUS) is the operators' listener, and the brokers' own toward the controller
SETTINGS = {"authorizer.class.name": "standard", "super.users": "User:ANONYMOUS;User:brokers-own",
            "broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "150"}
# brokers-own is a super user of the brokers' authorizers, not of the controller's: what the
# controller decides for it shows whose principal it saw
CONTROLLER = {"super.users": "User:ANONYMOUS"}
WITHIN_S = 20.0


@pytest.fixture(scope="module")
def cluster():
    with EmbeddedCluster(3, SETTINGS, controller_overrides=CONTROLLER, listeners=[SASL]) as c:
        yield c


_ADMINS: dict = {}


def _admin(cluster, node_id: int):
    """One AdminClient per broker (kept: a client that goes while a request is out fails it)."""
    from confluent_kafka.admin import AdminClient

    bootstrap = cluster.bootstrap_of(node_id)
    if bootstrap not in _ADMINS:
        _ADMINS[bootstrap] = AdminClient({"bootstrap.servers": bootstrap})
    return _ADMINS[bootstrap]


def _wait(check, what: str) -> None:
    deadline = time.monotonic() + WITHIN_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WITHIN_S}s for {what}")
        time.sleep(0.05)


def _add_user(cluster, node_id: int, user: str, password: str) -> None:
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                          password.encode())
    for future in _admin(cluster, node_id).alter_user_scram_credentials([upsert]).values():
        future.result(30)


def _logs_in(cluster, node_id: int, user: str, password: str) -> bool:
    settings = {"security.protocol": SASL, "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
                "sasl.password": password}
    try:
        with connect(cluster.bootstrap_of(node_id, SASL), settings, timeout=10) as conn:
            return admin.metadata(conn, []).brokers is not None  # Metadata, once logged in
    except Exception:  # a refused login closes the connection or raises the client's SASL error
        return False


def _topic_error(cluster, node_id: int, user: str, password: str, topic: str) -> int:
    """Metadata of ``topic`` as ``user`` on broker ``node_id``: NONE with DESCRIBE allowed,
    TOPIC_AUTHORIZATION_FAILED without."""
    settings = {"security.protocol": SASL, "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user,
                "sasl.password": password}
    with connect(cluster.bootstrap_of(node_id, SASL), settings, timeout=10) as conn:
        return admin.metadata(conn, [topic], allow_auto_topic_creation=False).topics[0].error_code


def test_scram_user_made_through_one_broker_logs_in_on_every_broker(cluster):
    user = unique_name("user")
    assert not _logs_in(cluster, 3, user, "s3cret")
    _add_user(cluster, 2, user, "s3cret")
    for node_id in (1, 2, 3):
        _wait(lambda: _logs_in(cluster, node_id, user, "s3cret"), f"{user} to log in on broker {node_id}")
    assert not _logs_in(cluster, 3, user, "wrong")
    described = _admin(cluster, 1).describe_user_scram_credentials([user])[user].result(30)
    assert [(i.mechanism.name, i.iterations) for i in described.scram_credential_infos] == [("SCRAM_SHA_256", 4096)]

    from confluent_kafka.admin import ScramMechanism, UserScramCredentialDeletion

    deletion = UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256)
    for future in _admin(cluster, 3).alter_user_scram_credentials([deletion]).values():
        future.result(30)
    _wait(lambda: not _logs_in(cluster, 1, user, "s3cret"), f"{user} to be refused on broker 1")


def test_acl_made_through_one_broker_allows_and_refuses_on_the_others(cluster):
    from confluent_kafka.admin import (
        AclBinding, AclBindingFilter, AclOperation, AclPermissionType, NewTopic, ResourcePatternType,
        ResourceType,
    )

    topic, user = unique_name("acl"), unique_name("alice")
    _admin(cluster, 1).create_topics([NewTopic(topic, 1, 3)])[topic].result(30)
    _add_user(cluster, 1, user, "pw")
    _wait(lambda: all(_logs_in(cluster, n, user, "pw") for n in (1, 2, 3)), f"{user} on every broker")
    for node_id in (1, 2, 3):
        assert _topic_error(cluster, node_id, user, "pw", topic) == ErrorCode.TOPIC_AUTHORIZATION_FAILED

    allow = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, f"User:{user}", "*",
                       AclOperation.DESCRIBE, AclPermissionType.ALLOW)
    _admin(cluster, 1).create_acls([allow])[allow].result(30)
    assert _topic_error(cluster, 1, user, "pw", topic) == ErrorCode.NONE  # answered once broker 1 has it
    for node_id in (2, 3):
        _wait(lambda: _topic_error(cluster, node_id, user, "pw", topic) == ErrorCode.NONE,
              f"the ACL on broker {node_id}")
    wanted = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.ANY, None, None,
                              AclOperation.ANY, AclPermissionType.ANY)
    assert _admin(cluster, 3).describe_acls(wanted).result(30) == [allow]

    deny = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, f"User:{user}", "*",
                      AclOperation.ALL, AclPermissionType.DENY)
    _admin(cluster, 2).create_acls([deny])[deny].result(30)
    for node_id in (1, 2, 3):
        _wait(lambda: _topic_error(cluster, node_id, user, "pw", topic) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              f"the DENY on broker {node_id}")
    deleted = _admin(cluster, 3).delete_acls([wanted])[wanted].result(30)
    assert sorted(map(str, deleted)) == sorted(map(str, [allow, deny]))
    _wait(lambda: _admin(cluster, 1).describe_acls(wanted).result(30) == [], "the ACLs gone from broker 1")


def _throttled_everywhere(cluster, topic: str, client_id: str) -> dict[int, int]:
    """Each broker's throttle time for a Produce of 4 KB by ``client_id`` to the partition it leads."""
    out = {}
    for p in cluster.describe(topic):
        host, port = cluster.bootstrap_of(p.leader_id).split(":")
        with BlockingConnection(host, int(port), client_id=client_id) as conn:
            batch = records.build_batch([(None, b"x" * 4096)])
            answer = produce(conn, {(topic, p.partition_index): batch}, acks=1)
        assert answer.responses[0].partition_responses[0].error_code == 0
        out[p.leader_id] = answer.throttle_time_ms
    return out


def test_quota_set_through_one_broker_throttles_on_every_broker(cluster):
    topic, client_id = unique_name("quota"), unique_name("slow")
    with connect_any(cluster.bootstrap_of(1)) as conn:
        assert admin.create_topics(conn, [admin.NewTopic(topic, 3, 1)]).topics[0].error_code == 0
    _wait(lambda: {p.leader_id for p in cluster.describe(topic)} == {1, 2, 3}, "a partition led by each broker")
    assert set(_throttled_everywhere(cluster, topic, client_id).values()) == {0}

    entity = {"client-id": client_id}
    with connect_any(cluster.bootstrap_of(1)) as conn:
        entry = admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration(entity, {"producer_byte_rate": 100})])
    assert entry.entries[0].error_code == 0
    with connect_any(cluster.bootstrap_of(3)) as conn:
        _wait(lambda: [(e.entity[0].entity_name, [(v.key, v.value) for v in e["values"]])
                       for e in admin.describe_client_quotas(
                           conn, [admin.ClientQuotaFilterComponent.of_entity("client-id", client_id)]).entries]
              == [(client_id, [("producer_byte_rate", 100.0)])], "the quota on broker 3")
    _wait(lambda: all(t > 0 for t in _throttled_everywhere(cluster, topic, client_id).values()),
          "every broker to throttle the client")


def test_a_restarted_broker_has_them_all_again(cluster):
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    user, group = unique_name("back"), unique_name("group")
    _add_user(cluster, 1, user, "pw")
    acl = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL, f"User:{user}", "*",
                     AclOperation.READ, AclPermissionType.ALLOW)
    _admin(cluster, 1).create_acls([acl])[acl].result(30)
    with connect_any(cluster.bootstrap_of(1)) as conn:
        admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration({"user": user}, {"consumer_byte_rate": 5000})])
    _wait(lambda: _logs_in(cluster, 3, user, "pw"), f"{user} on broker 3")

    cluster.restart(3, kill=False)  # in memory: it comes back empty and replays the metadata log
    assert _logs_in(cluster, 3, user, "pw")
    with connect_any(cluster.bootstrap_of(3)) as conn:
        quotas = admin.describe_client_quotas(conn, [admin.ClientQuotaFilterComponent.of_entity("user", user)])
    assert [[(v.key, v.value) for v in e["values"]] for e in quotas.entries] == [[("consumer_byte_rate", 5000.0)]]
    from confluent_kafka.admin import AclBindingFilter

    wanted = AclBindingFilter(ResourceType.GROUP, group, ResourcePatternType.ANY, None, None,
                              AclOperation.ANY, AclPermissionType.ANY)
    assert _admin(cluster, 3).describe_acls(wanted).result(30) == [acl]


def test_the_controller_authorizes_the_client_not_the_broker_that_forwards(cluster):
    """CreateAcls goes to the controller inside an Envelope with the client's principal: a user
    whom the brokers take for a super user, but the controller does not, is refused there (the
    brokers' own principal, ANONYMOUS, would be allowed), and allowed once an ACL lets it."""
    from confluent_kafka.admin import (
        AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType, ResourceType,
    )
    from confluent_kafka import KafkaException

    user = "brokers-own"
    _add_user(cluster, 1, user, "pw")
    _wait(lambda: _logs_in(cluster, 2, user, "pw"), f"{user} on broker 2")
    operator = AdminClient({"bootstrap.servers": cluster.bootstrap_of(2, SASL), "security.protocol": SASL,
                            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": "pw"})
    acl = AclBinding(ResourceType.TOPIC, unique_name("t"), ResourcePatternType.LITERAL, "User:someone", "*",
                     AclOperation.READ, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException) as refused:
        operator.create_acls([acl])[acl].result(30)
    assert refused.value.args[0].code() == ErrorCode.CLUSTER_AUTHORIZATION_FAILED

    may_alter = AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, f"User:{user}", "*",
                           AclOperation.ALTER, AclPermissionType.ALLOW)
    _admin(cluster, 1).create_acls([may_alter])[may_alter].result(30)
    _wait(lambda: _may_create(operator, acl), f"{user} allowed by the controller")


def _may_create(admin_client, acl) -> bool:
    from confluent_kafka import KafkaException

    try:
        admin_client.create_acls([acl])[acl].result(30)
        return True
    except KafkaException:
        return False


def test_the_controller_decides_a_forwarded_create_topics_for_the_client(cluster):
    """CreateTopics too goes inside an Envelope: the brokers' super user (not the controller's)
    may not create a topic without an ACL that lets it (TOPIC_AUTHORIZATION_FAILED, as Kafka),
    and may once one does."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic, ResourcePatternType, ResourceType,
    )

    user, topic = "brokers-own", unique_name("made")
    _add_user(cluster, 1, user, "pw")
    _wait(lambda: _logs_in(cluster, 3, user, "pw"), f"{user} on broker 3")
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_of(3, SASL), "security.protocol": SASL,
                          "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": "pw"})
    with pytest.raises(KafkaException) as refused:
        client.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    assert refused.value.args[0].code() == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    may_create = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, f"User:{user}", "*",
                            AclOperation.CREATE, AclPermissionType.ALLOW)
    _admin(cluster, 1).create_acls([may_create])[may_create].result(30)
    _wait(lambda: _creates(client, topic), f"{user} allowed to create {topic}")


def _creates(admin_client, topic: str) -> bool:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    try:
        admin_client.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        return True
    except KafkaException:
        return False


def test_a_new_cluster_starts_with_the_users_of_its_config_dir(tmp_path):
    """Kafka's `kafka-storage format --add-scram`: `kipper users add --config-dir DIR`, then a
    cluster whose config.dir is DIR, whose controller writes them as its log's first records;
    every broker logs them in, and brokers never write DIR (the log is where they live)."""
    from kipper.broker.security.credentials import CredentialStore

    CredentialStore(str(tmp_path)).add_user("first-admin", "pw")
    before = (tmp_path / "users.json").read_bytes()
    with EmbeddedCluster(2, {**SETTINGS, "config.dir": str(tmp_path)}, controller_overrides=CONTROLLER,
                         listeners=[SASL]) as c:
        for node_id in (1, 2):
            _wait(lambda: _logs_in(c, node_id, "first-admin", "pw"), f"first-admin on broker {node_id}")
        assert not _logs_in(c, 1, "first-admin", "wrong")
        _add_user(c, 2, "second", "pw2")  # (a change goes to the log, not to the file)
        _wait(lambda: _logs_in(c, 1, "second", "pw2"), "second on broker 1")
    assert (tmp_path / "users.json").read_bytes() == before
