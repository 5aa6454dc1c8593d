"""Idempotent producers of all three clients against kipper, including a proxy
that cuts connections right after the broker answered a Produce."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.proxy import FaultProxy
from tests.support.readback import read_topic
from tests.support.topics import create_topics

pytestmark = pytest.mark.interop

N = 3000


def _key(i: int) -> bytes:
    return f"k{i % 23}".encode()


def _value(i: int) -> bytes:
    return f"{i:08d}".encode()


def _check_exactly_once_in_key_order(bootstrap: str, topic: str, n: int) -> None:
    by_partition = read_topic(bootstrap, topic)
    values = [r.value for recs in by_partition.values() for r in recs]
    assert len(values) == len(set(values)), f"{len(values) - len(set(values))} duplicates stored"
    assert set(values) == {_value(i) for i in range(n)}
    for recs in by_partition.values():
        last_by_key: dict[bytes, int] = {}
        for r in recs:
            i = int(r.value)
            assert last_by_key.get(r.key, -1) < i, f"key {r.key!r} out of order at {i}"
            last_by_key[r.key] = i


def _confluent_produce(bootstrap: str, topic: str, n: int, **extra) -> None:
    from confluent_kafka import Producer

    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 5, "batch.num.messages": 200, **extra})
    for i in range(n):
        p.produce(topic, key=_key(i), value=_value(i),
                  on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    assert p.flush(60) == 0
    assert errors == []


def _kafka_python_produce(bootstrap: str, topic: str, n: int, **extra) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                      linger_ms=2, batch_size=1024, **extra)
    futures = [p.send(topic, key=_key(i), value=_value(i)) for i in range(n)]
    p.flush(60)
    for f in futures:
        f.get(30)
    p.close()


async def _aiokafka_produce(bootstrap: str, topic: str, n: int) -> None:
    from aiokafka import AIOKafkaProducer

    p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")
    await p.start()
    try:
        futures = [await p.send(topic, key=_key(i), value=_value(i)) for i in range(n)]
        for f in futures:
            await f
    finally:
        await p.stop()


def test_idempotent_confluent_kafka_stores_every_record_once(broker, unique):
    topic = f"idem-ck-{unique}"
    create_topics(broker.bootstrap, topic)
    _confluent_produce(broker.bootstrap, topic, N)
    _check_exactly_once_in_key_order(broker.bootstrap, topic, N)


def test_idempotent_kafka_python_stores_every_record_once(broker, unique):
    topic = f"idem-kp-{unique}"
    create_topics(broker.bootstrap, topic)
    _kafka_python_produce(broker.bootstrap, topic, N)
    _check_exactly_once_in_key_order(broker.bootstrap, topic, N)


def test_idempotent_aiokafka_with_init_producer_id_v0_stores_every_record_once(broker, unique):
    topic = f"idem-ak-{unique}"
    create_topics(broker.bootstrap, topic)
    asyncio.run(_aiokafka_produce(broker.bootstrap, topic, N))
    _check_exactly_once_in_key_order(broker.bootstrap, topic, N)


@pytest.fixture(params=["latest", "window5"])
def proxied_broker(request):
    """A broker that advertises a fault proxy in front of itself."""
    port = free_port()
    proxy = FaultProxy("127.0.0.1", port, cut_produce_every=3, max_cuts=25)
    proxy.start()
    broker = BrokerProcess({"producer.state.mode": request.param}, port=port,
                           advertise=("127.0.0.1", proxy.port)).start()
    yield broker, proxy
    broker.stop()
    proxy.stop()


@pytest.mark.parametrize("client", ["confluent_kafka", "kafka_python"])
def test_connection_cut_after_produce_response_leaves_each_record_once_in_key_order(
        proxied_broker, client, unique):
    broker, proxy = proxied_broker
    bootstrap = f"127.0.0.1:{proxy.port}"
    topic = f"cut-{client}-{unique}"
    create_topics(bootstrap, topic)
    if client == "confluent_kafka":
        _confluent_produce(bootstrap, topic, N, **{"retry.backoff.ms": 20})
    else:
        _kafka_python_produce(bootstrap, topic, N, retry_backoff_ms=20)
    assert proxy.cuts > 0, "the proxy never cut a connection: the test proved nothing"
    _check_exactly_once_in_key_order(broker.bootstrap, topic, N)
    broker.stop()
    found = re.search(r"'duplicates': (\d+)", broker.log_text())
    assert found, "the broker did not log its producer-state counters at shutdown"
    assert int(found.group(1)) > 0, "no retry was recognised as a duplicate: the cuts did not exercise dedup"
