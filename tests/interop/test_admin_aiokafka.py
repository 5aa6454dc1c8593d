"""aiokafka's AIOKafkaAdminClient against kipper, for the admin APIs it offers:
CreatePartitions, AlterConfigs (its only config change: replace-everything),
DescribeConfigs with synonyms, the cluster's brokers, and ListGroups."""

from __future__ import annotations

import asyncio

import pytest

from tests.support import requires

requires.module("aiokafka", "interop")
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic  # noqa: E402
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType  # noqa: E402
from aiokafka.errors import InvalidPartitionsError  # noqa: E402

pytestmark = pytest.mark.interop
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5


def run(bootstrap, work):
    async def main():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            return await work(admin)
        finally:
            await admin.close()
    return asyncio.run(main())


def test_create_partitions_grows_a_topic(broker, unique):
    topic = f"aio-grow-{unique}"

    async def work(admin):
        await admin.create_topics([NewTopic(topic, 2, 1)])
        grown = await admin.create_partitions({topic: NewPartitions(5)})
        with pytest.raises(InvalidPartitionsError, match="would not be an increase"):
            await admin.create_partitions({topic: NewPartitions(3)})
        return grown, await admin.describe_topics([topic])

    grown, described = run(broker.bootstrap, work)
    assert [e[1] for e in grown.topic_errors] == [0]
    assert len(described[0]["partitions"]) == 5


def test_alter_configs_replaces_the_set_and_describe_reports_sources_and_synonyms(broker, unique):
    topic = f"aio-cfg-{unique}"

    async def work(admin):
        await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "60000"})])
        altered = await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                            configs={"flush.ms": "1000"})])
        described = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                                 include_synonyms=True)
        return altered, described

    altered, described = run(broker.bootstrap, work)
    assert altered[0].resources[0][0] == 0
    entries = {e[0]: e for e in described[0].resources[0][4]}
    assert entries["flush.ms"][1] == "1000" and entries["flush.ms"][3] == DYNAMIC_TOPIC_CONFIG
    assert entries["retention.ms"][1] == "604800000" and entries["retention.ms"][3] == DEFAULT_CONFIG
    assert entries["delete.retention.ms"][5][0][0] == "log.cleaner.delete.retention.ms"
    assert len(entries) >= 30


def test_cluster_and_groups(broker, unique):
    group = f"aio-g-{unique}"
    from kipper.client.blocking import connect_any
    from kipper.client.consumer_requests import offset_commit

    async def work(admin):
        cluster = await admin.describe_cluster()
        groups = await admin.list_consumer_groups()
        return cluster, groups

    with connect_any(broker.bootstrap) as conn:
        topic = f"aio-g-{unique}"
        from kipper.client import admin as kadmin
        kadmin.create_topics(conn, [kadmin.NewTopic(topic, 1)])
        offset_commit(conn, group, {(topic, 0): 0})
    cluster, groups = run(broker.bootstrap, work)
    assert cluster["controller_id"] == 1 and [b["node_id"] for b in cluster["brokers"]] == [1]
    assert group in {g[0] for g in groups}
