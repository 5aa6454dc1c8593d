"""producer_byte_rate and consumer_byte_rate against a real broker process with real
clients: quotas set with `kipper configs` (client id, user and client), a confluent-kafka
producer over its quota sees throttle_time_ms while another client id does not, every
message is still delivered, and the throttle times the broker answers hold a producer to
about its byte rate. Assertions are on the protocol's numbers, never on wall-clock speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kipper.client import admin as builders
from kipper.client import consumer_requests, producer_requests
from kipper.client.connect import connect
from kipper.protocol import records
from tests.support import requires
from tests.support.broker import ROOT, BrokerProcess

confluent_kafka = requires.module("confluent_kafka", "interop")

RATE = 100_000  # bytes per second
WINDOWS = {"quota.window.num": "2", "quota.window.size.seconds": "1"}


@pytest.fixture(scope="module")
def quota_broker():
    b = BrokerProcess(WINDOWS)
    b.start()
    yield b
    b.stop()


def _configs(bootstrap, *args):
    return subprocess.run([sys.executable, "-m", "kipper", "configs", "--bootstrap-server", bootstrap, *args],
                          cwd=ROOT, capture_output=True, text=True)


def test_configs_tool_sets_and_describes_client_and_user_client_quotas(quota_broker, unique):
    bs = quota_broker.bootstrap
    done = _configs(bs, "--alter", "--add-config", "producer_byte_rate=2048,consumer_byte_rate=4096",
                    "--entity-type", "clients", "--entity-name", f"app-{unique}")
    assert done.returncode == 0, done.stderr
    done = _configs(bs, "--alter", "--add-config", "request_percentage=25.5", "--user", f"u-{unique}",
                    "--client-defaults")
    assert done.returncode == 0, done.stderr
    shown = _configs(bs, "--describe", "--entity-type", "clients", "--entity-name", f"app-{unique}").stdout
    assert f"Quota configs for client-id 'app-{unique}' are" in shown
    assert "consumer_byte_rate=4096.0" in shown and "producer_byte_rate=2048.0" in shown
    shown = _configs(bs, "--describe", "--user", f"u-{unique}", "--client-defaults").stdout
    assert f"user-principal 'u-{unique}', the default client-id are request_percentage=25.5" in shown
    assert _configs(bs, "--alter", "--delete-config", "producer_byte_rate,consumer_byte_rate",
                    "--entity-type", "clients", "--entity-name", f"app-{unique}").returncode == 0
    shown = _configs(bs, "--describe", "--entity-type", "clients", "--entity-name", f"app-{unique}").stdout
    assert "Quota configs" not in shown
    assert _configs(bs, "--alter", "--add-config", "connection_creation_rate=10", "--entity-type", "ips",
                    "--entity-name", "127.0.0.77").returncode == 0
    shown = _configs(bs, "--describe", "--entity-type", "ips", "--entity-name", "127.0.0.77").stdout
    assert "Quota configs for ip '127.0.0.77' are connection_creation_rate=10.0" in shown


def _produce_all(bootstrap, topic, client_id, count, size):
    throttles, errors = [], []
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "linger.ms": 5,
                                  "batch.size": 16384, "statistics.interval.ms": 100,
                                  "stats_cb": lambda s: throttles.append(
                                      max(b["throttle"]["max"] for b in json.loads(s)["brokers"].values()))})
    for i in range(count):
        p.produce(topic, b"x" * size, on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    assert p.flush(60) == 0
    p.poll(0.3)  # one more statistics interval
    return max(throttles, default=0), errors


def test_a_producer_over_its_byte_rate_sees_throttle_time_and_delivers_everything(quota_broker, unique):
    topic, slow, free = f"bytes-{unique}", f"slow-{unique}", f"free-{unique}"
    with connect(quota_broker.bootstrap) as conn:
        builders.create_topics(conn, [builders.NewTopic(topic, 1, 1)], timeout_ms=5000)
    done = _configs(quota_broker.bootstrap, "--alter", "--add-config", f"producer_byte_rate={RATE}",
                    "--entity-type", "clients", "--entity-name", slow)
    assert done.returncode == 0, done.stderr
    throttle, errors = _produce_all(quota_broker.bootstrap, topic, slow, 400, 1000)  # 400 kB: 4 s of quota
    assert errors == [] and throttle > 0
    throttle, errors = _produce_all(quota_broker.bootstrap, topic, free, 400, 1000)
    assert errors == [] and throttle == 0
    with connect(quota_broker.bootstrap) as conn:
        offsets = consumer_requests.list_offsets(conn, {(topic, 0): -1})
    assert offsets.topics[0].partitions[0].offset == 800


def test_throttle_times_hold_a_producer_to_about_its_byte_rate(quota_broker, unique):
    """Sequential requests of 20 kB from one connection: the broker mutes it for each
    throttle time it answers, so the bytes it accepts per second of throttle are about
    the quota; the first window's allowance (rate x (samples - 1) windows) goes unthrottled."""
    topic, client = f"paced-{unique}", f"paced-{unique}"
    with connect(quota_broker.bootstrap) as conn:
        builders.create_topics(conn, [builders.NewTopic(topic, 1, 1)], timeout_ms=5000)
    assert _configs(quota_broker.bootstrap, "--alter", "--add-config", f"producer_byte_rate={RATE}",
                    "--entity-type", "clients", "--entity-name", client).returncode == 0
    size, count = 20_000, 30  # 600 kB: 6 s at the quota
    sent, throttled_ms, first_throttled = 0, 0, None
    with connect(quota_broker.bootstrap, client_id=client) as conn:
        for i in range(count):
            batch = records.build_batch([(None, b"x" * size)])
            resp = producer_requests.produce(conn, {(topic, 0): batch}, timeout_ms=5000)
            assert resp.responses[0].partition_responses[0].error_code == 0
            sent += len(batch)
            if resp.throttle_time_ms and first_throttled is None:
                first_throttled = sent
            throttled_ms += resp.throttle_time_ms
    # nothing is throttled within the first window's allowance (100 kB), everything past it is
    assert first_throttled is not None and RATE <= first_throttled <= RATE + 2 * size
    # bytes past the allowance per second the broker made the client wait: about the quota
    # (time spent between requests counts too, so it can only be a little more)
    per_second = (sent - RATE) / (throttled_ms / 1000)
    assert 0.8 * RATE <= per_second <= 2.0 * RATE, (sent, throttled_ms)
