"""ACLs enforced on real clients over SASL: confluent-kafka, kafka-python and aiokafka
producers and consumers get Kafka's authorization errors, nothing is appended or created
when a request is refused, and everything works once the ACLs are added."""

from __future__ import annotations

import asyncio
import time

import pytest

from kipper.client.acl_requests import AclBinding, create_acls
from kipper.client.blocking import connect_any
from tests.support import requires
from tests.support.certs import USERS, start_secure_broker
from tests.support.readback import read_topic
from tests.support.topics import create_topics

ck = requires.module("confluent_kafka", "interop")
requires.module("kafka", "interop")
requires.module("aiokafka", "interop")

pytestmark = pytest.mark.interop

PROTOCOL = "SASL_PLAINTEXT"


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    # PLAINTEXT (User:ANONYMOUS) is the operators' listener in these tests: a super user
    b = start_secure_broker(tmp_path_factory.mktemp("acl"), {
        "authorizer.class.name": "standard", "super.users": "User:admin;User:ANONYMOUS"})
    yield b
    b.stop()


def grant(secure, *acls: tuple) -> None:
    with connect_any(secure.bootstrap("PLAINTEXT")) as conn:
        results = create_acls(conn, [AclBinding(rt, name, "LITERAL", principal, "*", op, "ALLOW")
                                     for rt, name, principal, op in acls]).results
        assert all(r.error_code == 0 for r in results), results


def _ck(secure, user="alice") -> dict:
    return {"bootstrap.servers": secure.bootstrap(PROTOCOL), "security.protocol": PROTOCOL,
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]}


def _kp(secure, user="alice") -> dict:
    return {"bootstrap_servers": secure.bootstrap(PROTOCOL), "security_protocol": PROTOCOL,
            "sasl_mechanism": "PLAIN", "sasl_plain_username": user, "sasl_plain_password": USERS[user]}


def _stored(secure, topic) -> int:
    return sum(len(r) for r in read_topic(secure.bootstrap("PLAINTEXT"), topic).values())


def test_confluent_kafka_producer_is_refused_then_allowed(secure, unique):
    from confluent_kafka import KafkaError, Producer

    topic = f"acl-ck-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)
    errors = []
    p = Producer({**_ck(secure), "enable.idempotence": False, "message.timeout.ms": 5000,
                  "topic.metadata.refresh.interval.ms": 300})
    p.produce(topic, b"refused", on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    assert errors and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _stored(secure, topic) == 0, "a refused Produce appends nothing"
    grant(secure, ("TOPIC", topic, "User:alice", "WRITE"))
    errors.clear()
    # librdkafka remembers the refusal from metadata and raises from produce() until its
    # next metadata refresh: the same producer recovers without a restart
    deadline = time.time() + 10
    while True:
        try:
            p.produce(topic, b"allowed", on_delivery=lambda err, msg: errors.append(err))
            break
        except ck.KafkaException as e:
            assert e.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
            assert time.time() < deadline, "the producer never saw the new ACL"
            p.poll(0.2)
    p.flush(10)
    assert errors == [None] and _stored(secure, topic) == 1


def test_confluent_kafka_idempotence_needs_idempotent_write_or_write_somewhere(secure, unique):
    from confluent_kafka import Producer

    topic = f"acl-idem-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)
    grant(secure, ("TOPIC", topic, "User:good", "WRITE"))  # WRITE on a topic implies idempotence
    p = Producer({**_ck(secure, "good"), "enable.idempotence": True})
    for i in range(5):
        p.produce(topic, b"%d" % i)
    assert p.flush(15) == 0 and _stored(secure, topic) == 5


def test_confluent_kafka_transactional_id_needs_write(secure, unique):
    from confluent_kafka import KafkaException, Producer

    p = Producer({**_ck(secure, "rogue"), "transactional.id": f"tx-{unique}"})
    with pytest.raises(KafkaException, match="TRANSACTIONAL_ID_AUTHORIZATION_FAILED|authoriz"):
        p.init_transactions(10)


def _groups(secure) -> set[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": secure.bootstrap("PLAINTEXT")})
    return {g.group_id for g in admin.list_consumer_groups(request_timeout=10).result(15).valid}


def test_consumers_are_refused_then_allowed(secure, unique):
    from confluent_kafka import Consumer, KafkaError, Producer

    topic, group = f"acl-c-{unique}", f"g-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)
    grant(secure, ("TOPIC", topic, "User:alice", "WRITE"), ("TOPIC", topic, "User:alice", "READ"))
    p = Producer(_ck(secure))
    for i in range(3):
        p.produce(topic, b"%d" % i)
    p.flush(10)
    c = Consumer({**_ck(secure), "group.id": group, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    errors = []
    deadline = time.time() + 10
    while not errors and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error():
            errors.append(m.error().code())
    c.close()
    assert errors and errors[0] == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert group not in _groups(secure), "a refused join leaves no group behind"
    grant(secure, ("GROUP", group, "User:alice", "READ"))
    c = Consumer({**_ck(secure), "group.id": group, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got = []
    deadline = time.time() + 20
    while len(got) < 3 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    assert got == [b"0", b"1", b"2"]
    assert group in _groups(secure)


def test_metadata_shows_only_what_may_be_described(secure, unique):
    from confluent_kafka.admin import AdminClient

    seen, hidden = f"acl-seen-{unique}", f"acl-hidden-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), seen, hidden, partitions=1)
    grant(secure, ("TOPIC", seen, "User:bob", "DESCRIBE"))
    admin = AdminClient(_ck(secure, "bob"))
    topics = admin.list_topics(timeout=10).topics
    assert seen in topics and hidden not in topics
    named = admin.list_topics(topic=hidden, timeout=10).topics[hidden]
    assert named.error is not None and named.error.code() == ck.KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_auto_create_needs_create(secure, unique):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaTimeoutError, TopicAuthorizationFailedError

    topic = f"acl-auto-{unique}"
    grant(secure, ("TOPIC", topic, "User:bob", "WRITE"))
    admin = KafkaAdminClient(**_kp(secure, "bob"))
    try:  # the admin client asks without auto-creation: a missing topic it may describe
        assert [t["error_code"] for t in admin.describe_topics([topic])] == [3]
    finally:
        admin.close()
    p = KafkaProducer(**_kp(secure, "bob"), max_block_ms=3000)  # asks with auto-creation
    try:
        with pytest.raises((TopicAuthorizationFailedError, KafkaTimeoutError)):
            p.send(topic, b"x").get(10)
        assert topic not in AdminClientTopics(secure), "a refused auto-creation creates nothing"
        grant(secure, ("TOPIC", topic, "User:bob", "CREATE"))
        deadline = time.time() + 15
        while True:
            try:
                p.send(topic, b"y").get(10)
                break
            except (TopicAuthorizationFailedError, KafkaTimeoutError):
                assert time.time() < deadline, "the topic was never auto-created"
    finally:
        p.close()
    assert topic in AdminClientTopics(secure) and _stored(secure, topic) == 1


def AdminClientTopics(secure) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": secure.bootstrap("PLAINTEXT")}).list_topics(timeout=10).topics)


def test_create_and_delete_topics_need_create_and_delete(secure, unique):
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"acl-admin-{unique}"
    admin = AdminClient(_ck(secure, "bob"))
    fut = admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=10)[topic]
    with pytest.raises(ck.KafkaException) as refused:
        fut.result(15)
    assert refused.value.args[0].code() == ck.KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert topic not in AdminClientTopics(secure)
    grant(secure, ("TOPIC", topic, "User:bob", "CREATE"))
    admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=10)[topic].result(15)
    fut = admin.delete_topics([topic], request_timeout=10)[topic]
    with pytest.raises(ck.KafkaException) as refused:
        fut.result(15)
    assert refused.value.args[0].code() == ck.KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert topic in AdminClientTopics(secure)
    grant(secure, ("TOPIC", topic, "User:bob", "DELETE"))
    admin.delete_topics([topic], request_timeout=10)[topic].result(15)
    assert topic not in AdminClientTopics(secure)


def test_offsets_need_describe(secure, unique):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError

    topic, group = f"acl-off-{unique}", f"g-off-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)
    c = KafkaConsumer(**_kp(secure, "bob"), group_id=group, enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            c.end_offsets([tp])
        with pytest.raises(GroupAuthorizationFailedError):
            c.committed(tp)
    finally:
        c.close()


def test_kafka_python_producer_and_consumer(secure, unique):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    topic = f"acl-kp-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)
    p = KafkaProducer(**_kp(secure), retries=0)
    with pytest.raises(TopicAuthorizationFailedError):
        p.send(topic, b"refused").get(10)
    assert _stored(secure, topic) == 0
    grant(secure, ("TOPIC", topic, "User:alice", "WRITE"), ("TOPIC", topic, "User:alice", "READ"))
    p.send(topic, b"allowed").get(10)
    p.close()
    c = KafkaConsumer(topic, **_kp(secure), auto_offset_reset="earliest", consumer_timeout_ms=5000)
    assert [m.value for m in c] == [b"allowed"]
    c.close()


def test_aiokafka_producer(secure, unique):
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import TopicAuthorizationFailedError

    topic = f"acl-ak-{unique}"
    create_topics(secure.bootstrap("PLAINTEXT"), topic, partitions=1)

    async def send() -> None:
        p = AIOKafkaProducer(bootstrap_servers=secure.bootstrap(PROTOCOL), security_protocol=PROTOCOL,
                             sasl_mechanism="PLAIN", sasl_plain_username="alice",
                             sasl_plain_password=USERS["alice"], request_timeout_ms=5000)
        await p.start()
        try:
            await p.send_and_wait(topic, b"x")
        finally:
            await p.stop()

    with pytest.raises(TopicAuthorizationFailedError):
        asyncio.run(send())
    assert _stored(secure, topic) == 0
    grant(secure, ("TOPIC", topic, "User:alice", "WRITE"))
    asyncio.run(send())
    assert _stored(secure, topic) == 1
