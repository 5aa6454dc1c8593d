"""Producer-id quotas against the real broker: a rogue user churning producer
ids is held to its quota while a good user notices nothing; throttled
connections are muted; quotas survive a restart; kipper configs manages them."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from kipper.client import admin as builders
from kipper.client import consumer_requests, producer_requests
from kipper.client.admin import ClientQuotaAlteration
from kipper.client.connect import connect
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.broker import ROOT, BrokerProcess
from tests.support.certs import start_secure_broker
from tests.support.readback import read_topic

RATE, SAMPLES, WINDOW_S = 20, 2, 1
BURST = RATE * SAMPLES * WINDOW_S  # 40: what a user may start at once, then RATE per second
QUOTA_CONFIG = {"producer.id.quota.window.num": str(SAMPLES),
                "producer.id.quota.window.size.seconds": str(WINDOW_S),
                "producer.id.quota.cache.cleanup.scheduler.interval.ms": "200",
                "super.users": "User:admin"}


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    b = start_secure_broker(tmp_path_factory.mktemp("quota"), QUOTA_CONFIG)
    yield b
    b.stop()


def _configs(bootstrap, *args, command_config=None):
    cmd = [sys.executable, "-m", "kipper", "configs", "--bootstrap-server", bootstrap]
    if command_config:
        cmd += ["--command-config", str(command_config)]
    return subprocess.run(cmd + list(args), cwd=ROOT, capture_output=True, text=True)


def _admin_config(secure):
    path = secure.config_dir.parent / "admin.properties"
    path.write_text("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                    f"ssl.truststore.location={secure.pki.ca}\n"
                    'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                    'username="admin" password="admin-secret";\n')
    return path


def _create_topic(conn, name):
    builders.create_topics(conn, [builders.NewTopic(name, 1, 1)], timeout_ms=5000)


def _produce(conn, topic, pid, seq, value=b"v"):
    batch = records.build_batch([(None, value)], producer_id=pid, producer_epoch=0, base_sequence=seq)
    resp = producer_requests.produce(conn, {(topic, 0): batch}, timeout_ms=5000)
    return resp.responses[0].partition_responses[0].error_code, resp.throttle_time_ms


def _init_producer_id(conn):
    resp = producer_requests.init_producer_id(conn)
    assert resp.error_code == 0
    return resp.producer_id


def test_rogue_user_is_held_to_its_quota_while_a_good_user_delivers_everything(secure, unique):
    done = _configs(secure.bootstrap("SASL_SSL"), "--alter", "--add-config", f"producer_ids_rate={RATE}",
                    "--entity-type", "users", command_config=_admin_config(secure))
    assert done.returncode == 0, done.stderr
    rogue_topic, good_topic = f"rogue-{unique}", f"good-{unique}"
    sasl = secure.bootstrap("SASL_PLAINTEXT")
    with connect(sasl, secure.settings("SASL_PLAINTEXT", user="admin")) as admin:
        _create_topic(admin, rogue_topic)
        _create_topic(admin, good_topic)

    good_results = []
    stop = threading.Event()

    def good_user():
        with connect(sasl, secure.settings("SASL_PLAINTEXT", "SCRAM-SHA-512", "good")) as conn:
            pid = _init_producer_id(conn)
            seq = 0
            while not stop.is_set() or seq < 50:
                good_results.append(_produce(conn, good_topic, pid, seq, b"good-%d" % seq))
                seq += 1
                time.sleep(0.005)

    good = threading.Thread(target=good_user)
    good.start()
    rogue_results = []
    started = time.monotonic()
    for _ in range(300):  # a new idempotent producer each time round the loop
        with connect(sasl, secure.settings("SASL_PLAINTEXT", "SCRAM-SHA-256", "rogue")) as conn:
            rogue_results.append(_produce(conn, rogue_topic, _init_producer_id(conn), 0))
    elapsed = time.monotonic() - started
    stop.set()
    good.join(60)

    admitted = [r for r in rogue_results if r[0] == 0]
    throttled = [r for r in rogue_results if r[0] == ErrorCode.THROTTLING_QUOTA_EXCEEDED]
    assert len(admitted) + len(throttled) == 300
    # the quota: at most BURST at once plus RATE per second of the run (+1 for the token being refilled)
    assert BURST <= len(admitted) <= BURST + RATE * elapsed + 1
    assert throttled and all(t > 0 for _, t in throttled)
    # nothing throttled reached producer state: the log holds exactly the admitted producers
    stored = {r.producer_id for r in read_topic_batches(secure, rogue_topic)}
    assert len(stored) == len(admitted)

    assert len(good_results) >= 50
    assert all(r == (0, 0) for r in good_results), [r for r in good_results if r != (0, 0)][:3]
    values = [r.value for r in read_topic(secure.bootstrap("PLAINTEXT"), good_topic)[0]]
    assert values == [b"good-%d" % i for i in range(len(good_results))]


def read_topic_batches(secure, topic):
    """Batch headers of a topic, to see which producer ids were admitted."""
    from kipper.client.blocking import BlockingConnection

    with BlockingConnection("127.0.0.1", secure.ports["PLAINTEXT"]) as conn:
        resp = consumer_requests.fetch(conn, {(topic, 0): 0})
        return [b.header for b in records.decode_all(resp.responses[0].partitions[0].records or b"")]


def test_a_throttled_connection_is_muted_for_the_throttle_time(secure, unique):
    topic = f"mute-{unique}"
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="admin")) as conn:
        _create_topic(conn, topic)
        assert builders.alter_client_quotas(conn, [ClientQuotaAlteration(
            {"user": "alice"}, {"producer_ids_rate": 0.5})]).entries[0].error_code == 0
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="alice")) as conn:
        # burst 0.5 x 2 x 1 = 1 token: the first new id is admitted, the second throttled for ~2 s
        assert _produce(conn, topic, 10_000, 0) == (0, 0)
        code, throttle_ms = _produce(conn, topic, 10_001, 0)
        assert code == ErrorCode.THROTTLING_QUOTA_EXCEEDED and throttle_ms >= 1000
        started = time.monotonic()
        builders.metadata(conn)
        assert time.monotonic() - started >= 0.8 * throttle_ms / 1000


def test_quotas_survive_a_restart_with_the_same_config_dir(tmp_path):
    config_dir = tmp_path / "cfg"
    with BrokerProcess({"config.dir": str(config_dir)}) as first:
        for args in (("--entity-name", "user1"), ()):
            done = _configs(first.bootstrap, "--alter", "--add-config", "producer_ids_rate=50",
                            "--entity-type", "users", *args)
            assert done.returncode == 0, done.stderr
    assert (config_dir / "quotas.json").exists()
    with BrokerProcess({"config.dir": str(config_dir)}) as second:
        shown = _configs(second.bootstrap, "--describe", "--entity-type", "users")
    assert shown.returncode == 0, shown.stderr
    assert "Quota configs for user-principal 'user1' are producer_ids_rate=50.0" in shown.stdout
    assert "Quota configs for the default user-principal are producer_ids_rate=50.0" in shown.stdout


def test_configs_tool_refuses_unknown_keys_and_deletes_quotas(fresh_broker):
    bad = _configs(fresh_broker.bootstrap, "--alter", "--add-config", "no_such_quota=10",
                   "--entity-type", "users", "--entity-name", "u")
    assert bad.returncode != 0 and "unknown config 'no_such_quota'" in bad.stderr
    fractional = _configs(fresh_broker.bootstrap, "--alter", "--add-config", "producer_byte_rate=1.5",
                          "--entity-type", "users", "--entity-name", "u")
    assert fractional.returncode != 0 and "fractional" in fractional.stderr
    assert _configs(fresh_broker.bootstrap, "--alter", "--add-config", "producer_ids_rate=5",
                    "--entity-type", "users", "--entity-name", "u").returncode == 0
    assert _configs(fresh_broker.bootstrap, "--alter", "--delete-config", "producer_ids_rate",
                    "--entity-type", "users", "--entity-name", "u").returncode == 0
    shown = _configs(fresh_broker.bootstrap, "--describe", "--entity-type", "users", "--entity-name", "u")
    assert "Quota configs" not in shown.stdout


def test_requests_pipelined_behind_a_throttled_one_wait_for_the_mute(secure, unique):
    topic = f"held-{unique}"
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="admin")) as conn:
        _create_topic(conn, topic)
        assert builders.alter_client_quotas(conn, [ClientQuotaAlteration(
            {"user": "good"}, {"producer_ids_rate": 0.5})]).entries[0].error_code == 0
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages import APIS

    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="good")) as conn:
        assert _produce(conn, topic, 20_000, 0) == (0, 0)  # the one token
        batch = records.build_batch([(None, b"v")], producer_id=20_001, producer_epoch=0, base_sequence=0)
        produce = encode_request(APIS[0], 9, 900, "t", {
            "transactional_id": None, "acks": -1, "timeout_ms": 5000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})
        metadata = encode_request(APIS[3], 9, 901, "t", {"topics": None, "allow_auto_topic_creation": False})
        started = time.monotonic()
        conn.sock.sendall(produce + metadata)  # one write: both arrive in the same read burst
        first = conn._read_frame()
        first_at = time.monotonic() - started
        second = conn._read_frame()
        second_at = time.monotonic() - started
    from kipper.protocol.header import decode_response
    cid, body = decode_response(APIS[0], 9, first)
    assert cid == 900 and body.throttle_time_ms >= 1000
    assert decode_response(APIS[3], 9, second)[0] == 901
    assert first_at < 0.5 and second_at >= 0.8 * body.throttle_time_ms / 1000
