"""kipper.testing.EmbeddedBroker: the real broker in a process of its own (forked by the
zygote) or in a thread, reset between tests, from synchronous and asyncio code. Each test
runs in both modes."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kipper.broker.config import ConfigError
from kipper.client import Producer, admin
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import offset_commit, offset_fetch
from kipper.client.producer_requests import init_producer_id
from kipper.testing import MODES, EmbeddedBroker, unique_name


@pytest.fixture(params=MODES)
def mode(request) -> str:
    return request.param


def topic_names(bootstrap: str) -> set[str]:
    with connect_any(bootstrap) as conn:
        return {t.name for t in admin.metadata(conn).topics}


def group_ids(bootstrap: str) -> set[str]:
    with connect_any(bootstrap) as conn:
        return {g.group_id for g in admin.list_groups(conn).groups}


def committed(bootstrap: str, group: str, topic: str) -> int:
    with connect_any(bootstrap) as conn:
        resp = offset_fetch(conn, group, {topic: [0]}, version=7)
    return resp.topics[0].partitions[0].committed_offset


def fill(broker: EmbeddedBroker) -> str:
    """A topic with idempotent records, a group with a committed offset, a transactional id."""
    topic = broker.create_topic(partitions=2)
    with Producer({"bootstrap.servers": broker.bootstrap_servers}) as p:
        for i in range(20):
            p.send(topic, b"v%d" % i, key=b"k%d" % i)
        p.flush(10)
    with connect_any(broker.bootstrap_servers) as conn:
        assert offset_commit(conn, "g1", {(topic, 0): 5}).topics[0].partitions[0].error_code == 0
        assert init_producer_id(conn, "txn-1", transaction_timeout_ms=60000).error_code == 0
    return topic


def counts(broker) -> dict:
    return {"topics": len(broker.topics.all()), "producer_state": broker.producer_states.snapshot()["entries"],
            "transactional_ids": broker.txn.snapshot()["transactional_ids"],
            "offsets": broker.offsets.count()}


def test_a_started_broker_serves_clients_on_an_ephemeral_loopback_port(mode):
    with EmbeddedBroker(mode=mode) as broker:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        topic = broker.create_topic(partitions=3)
        with connect_any(broker.bootstrap_servers) as conn:
            meta = admin.metadata(conn, [topic])
        assert len(meta.topics[0].partitions) == 3
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()


def test_reset_removes_every_topic_group_offset_producer_state_and_transaction(mode):
    with EmbeddedBroker(mode=mode) as broker:
        topic = fill(broker)
        before = broker.call(counts)
        assert before["producer_state"] >= 1 and before["transactional_ids"] == 1 and before["offsets"] == 1
        assert topic in topic_names(broker.bootstrap_servers)
        broker.reset()
        assert broker.call(counts) == {"topics": 0, "producer_state": 0, "transactional_ids": 0, "offsets": 0}
        assert topic_names(broker.bootstrap_servers) == set()
        assert group_ids(broker.bootstrap_servers) == set()
        # the broker goes on serving: the same names are free again
        assert broker.create_topic(topic, partitions=1) == topic
        assert committed(broker.bootstrap_servers, "g1", topic) == -1


def test_reset_keeps_producer_ids_unique(mode):
    with EmbeddedBroker(mode=mode) as broker:
        with connect_any(broker.bootstrap_servers) as conn:
            first = init_producer_id(conn).producer_id
        broker.reset()
        with connect_any(broker.bootstrap_servers) as conn:
            assert init_producer_id(conn).producer_id > first


def test_overrides_take_kafka_property_names(mode):
    with EmbeddedBroker({"num.partitions": 4, "auto.create.topics.enable": "true"}, mode=mode) as broker:
        name = unique_name("auto")
        with connect_any(broker.bootstrap_servers) as conn:
            admin.metadata(conn, [name], allow_auto_topic_creation=True)  # creates it
            meta = admin.metadata(conn, [name])
        assert len(meta.topics[0].partitions) == 4


def test_a_bad_override_raises_before_anything_starts(mode):
    with pytest.raises(ConfigError, match="num.partitionz"):
        EmbeddedBroker({"num.partitionz": "3"}, mode=mode).start()


async def test_an_asyncio_test_with_a_running_loop_uses_it_through_async_with(mode):
    async with EmbeddedBroker(mode=mode) as broker:
        topic = broker.create_topic()
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        writer.close()
        await writer.wait_closed()
        await broker.areset()
        assert topic not in topic_names(broker.bootstrap_servers)
    assert not broker.running


def test_a_process_broker_starts_resets_logs_and_stops():
    with EmbeddedBroker({"num.partitions": "2"}) as broker:
        assert broker.mode == "process"
        topic = fill(broker)
        assert topic in topic_names(broker.bootstrap_servers)
        broker.reset()
        assert topic_names(broker.bootstrap_servers) == set()
        assert group_ids(broker.bootstrap_servers) == set()
        assert committed(broker.bootstrap_servers, "g1", topic) == -1
        assert "broker_reset" in broker.log_text()
        port = broker.port
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_the_older_subprocess_flag_still_chooses_the_mode():
    assert EmbeddedBroker(subprocess=True).mode == "process"
    assert EmbeddedBroker(subprocess=False).mode == "thread"
    assert EmbeddedBroker().mode == "process"
    with pytest.raises(ValueError, match="mode"):
        EmbeddedBroker(mode="fork")


def test_reset_refuses_a_broker_with_log_dirs(tmp_path, mode):
    with EmbeddedBroker({"log.dirs": str(tmp_path)}, mode=mode) as broker:
        with pytest.raises(RuntimeError, match="in-memory"):
            broker.reset()
