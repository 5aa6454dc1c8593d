"""confluent-kafka's AdminClient against kipper, for every admin API it offers:
CreatePartitions, DeleteGroups, AlterConfigs, IncrementalAlterConfigs (topic,
broker and group resources), OffsetDelete, DescribeCluster and Metadata with
authorized operations, ListGroups filters, ListOffsets MAX_TIMESTAMP, and
CreateTopics with a replica assignment and validate_only."""

from __future__ import annotations

import time

import pytest

from tests.support import requires

requires.module("confluent_kafka", "interop")
from confluent_kafka import (  # noqa: E402
    ConsumerGroupState, ConsumerGroupTopicPartitions, ConsumerGroupType, KafkaException, Producer,
    TopicCollection, TopicPartition,
)
from confluent_kafka.admin import (  # noqa: E402
    AclOperation, AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, NewPartitions,
    NewTopic, OffsetSpec,
)

pytestmark = pytest.mark.interop
TOPIC_OPS = {AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
             AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
             AclOperation.ALTER_CONFIGS}
CLUSTER_OPS = {AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
               AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE}


@pytest.fixture
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def created(admin, topic, partitions=1, **kw):
    admin.create_topics([NewTopic(topic, partitions, 1, **kw)])[topic].result(15)
    return topic


def produce(bootstrap, topic, rows):
    p = Producer({"bootstrap.servers": bootstrap})
    for key, value, ts in rows:
        p.produce(topic, key=key, value=value, partition=0, timestamp=ts)
    assert p.flush(15) == 0


def test_create_topics_with_an_assignment_validate_only_and_any_config(admin, unique):
    topic = f"ck-assign-{unique}"
    admin.create_topics([NewTopic(topic, num_partitions=2, replica_assignment=[[1], [1]],
                                  config={"delete.retention.ms": "1000", "flush.ms": "100"})])[topic].result(15)
    meta = admin.list_topics(topic, timeout=10).topics[topic]
    assert sorted(meta.partitions) == [0, 1]
    other = f"ck-vo-{unique}"
    admin.create_topics([NewTopic(other, 3, 1)], validate_only=True)[other].result(15)
    assert other not in admin.list_topics(timeout=10).topics
    with pytest.raises(KafkaException, match="already exists"):
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)


def test_create_partitions_grows_and_refuses_a_decrease(admin, unique):
    topic = created(admin, f"ck-grow-{unique}", 2)
    admin.create_partitions([NewPartitions(topic, 5)])[topic].result(15)
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 5
    with pytest.raises(KafkaException) as exc:
        admin.create_partitions([NewPartitions(topic, 3)])[topic].result(15)
    assert exc.value.args[0].name() == "INVALID_PARTITIONS"


def test_alter_configs_replaces_everything_and_describe_reports_sources(admin, unique):
    topic = created(admin, f"ck-alter-{unique}", config={"retention.ms": "60000"})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={"segment.ms": "3600000"})
    admin.alter_configs([resource])[resource].result(15)
    configs = list(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values())[0].result(15)
    assert configs["segment.ms"].value == "3600000"
    assert configs["segment.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value  # replaced away
    assert {"flush.ms", "min.insync.replicas", "message.timestamp.after.max.ms"} <= set(configs)


def test_incremental_alter_configs_of_a_broker_and_a_group(admin, unique):
    broker_res = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("log.retention.ms", "7200000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([broker_res])[broker_res].result(15)
    topic = created(admin, f"ck-dyn-{unique}")
    configs = list(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values())[0].result(15)
    assert configs["retention.ms"].value == "7200000"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    reset = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("log.retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    admin.incremental_alter_configs([reset])[reset].result(15)
    static = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("num.partitions", "4", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException, match="Cannot update these configs dynamically"):
        admin.incremental_alter_configs([static])[static].result(15)
    group_res = ConfigResource(ConfigResource.Type.GROUP, f"ck-g-{unique}", incremental_configs=[
        ConfigEntry("consumer.heartbeat.interval.ms", "6000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([group_res])[group_res].result(15)


def test_describe_cluster_and_topics_with_authorized_operations(admin, unique):
    cluster = admin.describe_cluster(include_authorized_operations=True).result(15)
    assert [n.id for n in cluster.nodes] == [1] and cluster.controller.id == 1
    assert set(cluster.authorized_operations) == CLUSTER_OPS
    topic = created(admin, f"ck-ops-{unique}")
    described = admin.describe_topics(TopicCollection([topic]),
                                      include_authorized_operations=True)[topic].result(15)
    assert set(described.authorized_operations) == TOPIC_OPS


def test_delete_groups_and_their_offsets(broker, admin, unique):
    topic, group = created(admin, f"ck-dg-{unique}"), f"ck-dg-{unique}"
    offsets = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1)])
    produce(broker.bootstrap, topic, [(b"k", b"v", 0), (b"k", b"v", 0)])
    admin.alter_consumer_group_offsets([offsets])[group].result(15)
    admin.delete_consumer_groups([group])[group].result(15)
    with pytest.raises(KafkaException) as exc:
        admin.delete_consumer_groups([group])[group].result(15)
    assert exc.value.args[0].name() == "GROUP_ID_NOT_FOUND"


def test_list_groups_by_state_and_type(admin, unique):
    group = f"ck-list-{unique}"
    topic = created(admin, f"ck-list-{unique}")
    admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 0)])])[
        group].result(15)
    found = admin.list_consumer_groups(states={ConsumerGroupState.EMPTY},
                                       types={ConsumerGroupType.CLASSIC}).result(15)
    assert group in {g.group_id for g in found.valid}
    found = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(15)
    assert group not in {g.group_id for g in found.valid}


def test_list_offsets_max_timestamp_is_the_record_that_carries_it(broker, admin, unique):
    topic = created(admin, f"ck-maxts-{unique}")
    now = int(time.time() * 1000)
    produce(broker.bootstrap, topic, [(b"a", b"1", now - 300), (b"b", b"2", now - 100), (b"c", b"3", now - 200)])
    tp = TopicPartition(topic, 0)
    found = admin.list_offsets({tp: OffsetSpec.max_timestamp()})[tp].result(15)
    assert (found.offset, found.timestamp) == (1, now - 100)
