"""kafka-python's KafkaAdminClient against kipper, for every admin API it offers:
CreatePartitions, DeleteGroups, AlterConfigs (legacy and incremental), OffsetDelete,
DescribeCluster, DescribeLogDirs, DescribeProducers, DescribeTransactions,
ListTransactions and ListGroups with its v5 filters."""

from __future__ import annotations

import pytest

from tests.support import requires

requires.module("kafka", "interop")
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic  # noqa: E402
from kafka.errors import GroupIdNotFoundError, InvalidPartitionsError  # noqa: E402

pytestmark = pytest.mark.interop


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def created(admin, topic, partitions=1, configs=None):
    admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
    return topic


def test_create_partitions_grows_a_topic_and_refuses_a_decrease(admin, unique):
    topic = created(admin, f"kp-grow-{unique}", 1)
    admin.create_partitions({topic: 4})
    [described] = admin.describe_topics([topic])
    assert len(described["partitions"]) == 4
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({topic: 2})


def test_legacy_alter_configs_replaces_the_whole_set(admin, unique):
    topic = created(admin, f"kp-alter-{unique}", configs={"retention.ms": "60000"})
    resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs={"flush.ms": "5000"})
    assert admin.alter_configs([resource], incremental=False) == {"topic": {topic: "OK"}}
    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])["topic"][topic]
    # kafka-python sends the modified keys it read along, since AlterConfigs replaces the set
    assert {k: v["value"] for k, v in described.items()} == {"flush.ms": "5000", "retention.ms": "60000"}
    assert described["flush.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs={"delete.retention.ms": "1000"})
    assert admin.alter_configs([resource], incremental=True) == {"topic": {topic: "OK"}}


def test_describe_cluster_and_log_dirs(admin, unique):
    cluster = admin.describe_cluster()
    assert cluster["controller_id"] == 1 and [b["broker_id"] for b in cluster["brokers"]] == [1]
    assert set(cluster["authorized_operations"]) == {
        "CREATE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE"}
    topic = created(admin, f"kp-dirs-{unique}", 2)
    [broker] = admin.describe_log_dirs({topic: [0, 1]})
    [log_dir] = broker["log_dirs"]
    assert log_dir["log_dir"] == "memory:" and log_dir["error_code"] == 0
    assert [p["partition_index"] for p in log_dir["topics"][0]["partitions"]] == [0, 1]


def test_producers_and_transactions_of_an_open_transaction(broker, admin, unique):
    topic, tid = created(admin, f"kp-txn-{unique}"), f"kp-txn-{unique}"
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=tid)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, b"x", partition=0).get(10)
    try:
        state = admin.describe_producers([TopicPartition(topic, 0)])[TopicPartition(topic, 0)]
        [active] = state.active_producers
        assert active.current_transaction_start_offset == 0 and active.last_sequence == 0
        description = admin.describe_transactions([tid])[tid]
        assert description.state.value == "Ongoing" and description.producer_id == active.producer_id
        assert description.topic_partitions == {TopicPartition(topic, 0)}
        listed = [t for listings in admin.list_transactions(state_filters=["Ongoing"]).values()
                  for t in listings]
        assert tid in {t.transactional_id for t in listed}
        listed = admin.list_transactions(transactional_id_pattern=f"{tid}-nothing")
        assert not [t for listings in listed.values() for t in listings]
    finally:
        producer.abort_transaction()
        producer.close()


def test_delete_offsets_and_groups(broker, admin, unique):
    topic, group = created(admin, f"kp-dg-{unique}"), f"kp-dg-{unique}"
    from kipper.client.blocking import connect_any
    from kipper.client.consumer_requests import offset_commit
    with connect_any(broker.bootstrap) as conn:
        offset_commit(conn, group, {(topic, 0): 0})
    listed = admin.list_groups(states_filter=["Empty"], types_filter=["classic"])
    assert group in {g["group_id"] for g in listed}
    assert group not in {g["group_id"] for g in admin.list_groups(types_filter=["share"])}
    errors = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
    assert errors[TopicPartition(topic, 0)].errno == 0
    assert admin.delete_groups([group]) == {group: "OK"}
    assert admin.delete_groups([group]) == {group: "GroupIdNotFoundError"}
    with pytest.raises(GroupIdNotFoundError):
        admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
