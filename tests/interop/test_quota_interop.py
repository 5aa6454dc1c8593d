"""A rogue user running confluent-kafka creates 300 idempotent producers in a
loop under producer_ids_rate=20; its admitted producer ids stay within the
quota and it sees throttling, while a good user's kafka-python and
confluent-kafka producers deliver everything without THROTTLING_QUOTA_EXCEEDED."""

from __future__ import annotations

import threading
import time

import pytest

from kipper.client.admin import ClientQuotaAlteration, NewTopic, alter_client_quotas, create_topics
from kipper.client.connect import connect
from tests.support import requires
from tests.support.certs import USERS, start_secure_broker
from tests.support.readback import read_topic

ck = requires.module("confluent_kafka", "interop")
from confluent_kafka import Producer  # noqa: E402

pytestmark = pytest.mark.interop

RATE, SAMPLES, WINDOW_S = 20, 2, 1
BURST = RATE * SAMPLES * WINDOW_S
ROGUE_PRODUCERS = 300
ROUND = 50


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    b = start_secure_broker(tmp_path_factory.mktemp("quota-interop"), {
        "producer.id.quota.window.num": str(SAMPLES),
        "producer.id.quota.window.size.seconds": str(WINDOW_S)})
    yield b
    b.stop()


def _conf(secure, user):
    return {"bootstrap.servers": secure.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": USERS[user]}


def test_rogue_confluent_producers_are_throttled_and_a_good_producer_is_not(secure, unique):
    rogue_topic, good_topic = f"rogue-{unique}", f"good-{unique}"
    with connect(secure.bootstrap("PLAINTEXT")) as conn:
        for topic in (rogue_topic, good_topic):
            create_topics(conn, [NewTopic(topic, 1, 1)], timeout_ms=5000)
        entry = alter_client_quotas(conn, [ClientQuotaAlteration({"user": None}, {"producer_ids_rate": RATE})])
        assert entry.entries[0].error_code == 0

    good_errors, good_sent, stop = [], [], threading.Event()

    def good_user():
        producer = Producer({**_conf(secure, "good"), "enable.idempotence": True, "acks": "all",
                             "linger.ms": 1})
        i = 0
        while not stop.is_set():
            producer.produce(good_topic, value=b"good-%d" % i,
                             on_delivery=lambda e, m: good_errors.append(e) if e else good_sent.append(m.offset()))
            producer.poll(0)
            i += 1
            time.sleep(0.002)
        assert producer.flush(30) == 0
        good_sent.append(("total", i))

    good = threading.Thread(target=good_user)
    good.start()
    rogue_errors, rogue_ok, throttle_events = [], [], []
    started = time.monotonic()
    try:
        # a loop of new producers; 50 at a time live side by side so a throttled one
        # (librdkafka waits and retries) does not make the loop take minutes
        for round_start in range(0, ROGUE_PRODUCERS, ROUND):
            producers = []
            for n in range(round_start, round_start + ROUND):
                producer = Producer({**_conf(secure, "rogue"), "enable.idempotence": True, "acks": "all",
                                     "message.timeout.ms": 5000,
                                     "throttle_cb": lambda ev: throttle_events.append(ev.throttle_time),
                                     "error_cb": lambda e: None})
                producer.produce(rogue_topic, value=b"rogue-%d" % n,
                                 on_delivery=lambda e, m: rogue_errors.append(e) if e else rogue_ok.append(m))
                producer.poll(0)
                producers.append(producer)
            for producer in producers:
                producer.flush(3)
            del producers
        elapsed = time.monotonic() - started
    finally:
        stop.set()
        good.join(60)

    stored_pids = {r.producer_id for r in _batches(secure, rogue_topic)}
    assert len(rogue_ok) == len(stored_pids)
    assert len(stored_pids) <= BURST + RATE * elapsed + 1
    assert len(rogue_ok) + len(rogue_errors) == ROGUE_PRODUCERS
    assert rogue_errors, "the rogue was never throttled"
    # librdkafka fails a throttled batch at once (a permanent error) and reports the throttle time
    assert {e.code() for e in rogue_errors} == {ck.KafkaError.THROTTLING_QUOTA_EXCEEDED}
    assert throttle_events and max(throttle_events) > 0

    assert good_errors == []
    total = good_sent[-1][1]
    assert len(good_sent) - 1 == total
    assert [r.value for r in read_topic(secure.bootstrap("PLAINTEXT"), good_topic)[0]] == \
        [b"good-%d" % i for i in range(total)]


def _batches(secure, topic):
    from kipper.protocol import records
    from kipper.client.blocking import BlockingConnection
    from kipper.client.consumer_requests import fetch

    with BlockingConnection("127.0.0.1", secure.ports["PLAINTEXT"]) as conn:
        resp = fetch(conn, {(topic, 0): 0})
        return [b.header for b in records.decode_all(resp.responses[0].partitions[0].records or b"")]
