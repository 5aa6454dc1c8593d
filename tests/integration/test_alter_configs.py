"""IncrementalAlterConfigs from confluent-kafka's admin client: topic configs,
and the per-group share.auto.offset.reset that share groups read (KIP-932)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic


@pytest.fixture
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _alter(admin, resource):
    return admin.incremental_alter_configs([resource])[resource].result(15)


def test_topic_config_set_and_delete(admin, unique):
    topic = f"iac-{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "5000", incremental_operation=AlterConfigOpType.SET)])
    _alter(admin, res)
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    assert list(described.values())[0].result(15)["retention.ms"].value == "5000"
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    _alter(admin, res)
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    assert list(described.values())[0].result(15)["retention.ms"].value == "604800000"


def test_invalid_topic_config_value_is_refused(admin, unique):
    topic = f"iac-bad-{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("cleanup.policy", "shred", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(Exception, match="cleanup.policy"):
        _alter(admin, res)


def test_group_share_auto_offset_reset_earliest_makes_a_share_group_read_old_records(broker, admin, unique):
    from kipper.client import Producer
    from kipper.client.share_consumer import ShareConsumer

    topic, group = f"iac-share-{unique}", f"iac-g-{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    with Producer({"bootstrap.servers": broker.bootstrap}) as p:
        for i in range(10):
            p.send(topic, f"old-{i}".encode())
    res = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    _alter(admin, res)
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.GROUP, group)])
    assert list(described.values())[0].result(15)["share.auto.offset.reset"].value == "earliest"
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    consumer.subscribe([topic])
    got = []
    deadline = time.time() + 20
    while len(got) < 10 and time.time() < deadline:
        got += [r.value for r in consumer.poll(0.5)]
    consumer.commit_sync()
    consumer.close()
    assert sorted(got) == sorted(f"old-{i}".encode() for i in range(10))


def test_unknown_group_config_is_refused(admin, unique):
    res = ConfigResource(ConfigResource.Type.GROUP, f"g-{unique}", incremental_configs=[
        ConfigEntry("share.no.such", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(Exception, match="Unknown group config name"):
        _alter(admin, res)
