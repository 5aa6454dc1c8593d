"""The pytest plugin (entry point pytest11 = kipper.pytest_plugin), seen from a user's
test suite: a test file that only names the fixtures passes under plain pytest and under
pytest-xdist, where each worker has a broker of its own."""

from __future__ import annotations

from tests.support import requires

requires.module("xdist", "dev")

USER_TESTS = '''
import os

from kipper.client import Producer
from kipper.client.admin import metadata
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import fetch
from kipper.protocol import records


def produce_and_read(bootstrap, topic, n):
    with Producer({"bootstrap.servers": bootstrap}) as p:
        for i in range(n):
            p.send(topic, b"v%d" % i, partition=0)
        p.flush(10)
    with connect_any(bootstrap) as conn:
        part = fetch(conn, {(topic, 0): 0}).responses[0].partitions[0]
    return [r.value for b in records.decode_all(part.records or b"") for r in b.records]


def test_a_fresh_topic_per_call(kafka_topic, kafka_bootstrap_servers):
    a, b = kafka_topic(), kafka_topic(partitions=3, configs={"retention.ms": "60000"})
    assert a != b and a.startswith("test_a_fresh_topic_per_call-")
    with connect_any(kafka_bootstrap_servers) as conn:
        meta = {t.name: len(t.partitions) for t in metadata(conn, [a, b]).topics}
    assert meta == {a: 1, b: 3}


def test_produce_and_read_back(kafka_topic, kafka_bootstrap_servers):
    topic = kafka_topic()
    assert produce_and_read(kafka_bootstrap_servers, topic, 5) == [b"v%d" % i for i in range(5)]


def test_one_broker_per_session(kafka_broker, kafka_bootstrap_servers):
    assert kafka_broker.bootstrap_servers == kafka_bootstrap_servers
    assert kafka_broker.running


def test_ini_overrides_reach_the_broker(kafka_bootstrap_servers):
    with connect_any(kafka_bootstrap_servers) as conn:
        metadata(conn, ["auto-created"], allow_auto_topic_creation=True)  # creates it, as Kafka
        meta = metadata(conn, ["auto-created"])
    assert len(meta.topics[0].partitions) == int(os.environ["EXPECTED_PARTITIONS"])


def test_reset_between_tests(kafka_broker, kafka_topic):
    topic = kafka_topic()
    kafka_broker.reset()
    with connect_any(kafka_broker.bootstrap_servers) as conn:
        assert topic not in {t.name for t in metadata(conn).topics}
'''

INI = """
[pytest]
kafka_broker_overrides =
    num.partitions=2
    auto.create.topics.enable=true
"""


def run(pytester, monkeypatch, *args, expected_partitions=2):
    pytester.makepyfile(test_user_suite=USER_TESTS)
    pytester.makeini(INI)
    monkeypatch.setenv("EXPECTED_PARTITIONS", str(expected_partitions))
    (pytester.path / "brokers").mkdir()
    monkeypatch.setenv("BROKERS_DIR", str(pytester.path / "brokers"))
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=240)


def test_a_users_suite_passes_with_nothing_but_the_fixtures(pytester, monkeypatch):
    result = run(pytester, monkeypatch)
    result.assert_outcomes(passed=5)


def test_the_command_line_override_wins_over_the_ini_option(pytester, monkeypatch):
    result = run(pytester, monkeypatch, "--kafka-broker-override", "num.partitions=4", expected_partitions=4)
    result.assert_outcomes(passed=5)


def test_the_subprocess_mode_passes_the_same_suite(pytester, monkeypatch):
    result = run(pytester, monkeypatch, "--kafka-broker-subprocess")
    result.assert_outcomes(passed=5)


def test_under_xdist_each_worker_has_a_broker_of_its_own(pytester, monkeypatch):
    # every test records which broker its worker has (xdist's load scheduling gives each
    # of the two workers some of the five tests)
    pytester.makeconftest("""
import os
import pytest

@pytest.fixture(autouse=True)
def record_broker(kafka_bootstrap_servers):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["BROKERS_DIR"], worker), "w") as out:
        out.write(kafka_bootstrap_servers)
""")
    result = run(pytester, monkeypatch, "-n", "2")
    result.assert_outcomes(passed=5)
    assert "2 workers" in result.stdout.str()
    seen = {p.name: p.read_text() for p in (pytester.path / "brokers").iterdir()}
    assert set(seen) == {"gw0", "gw1"} and seen["gw0"] != seen["gw1"]


def test_a_malformed_override_is_a_usage_error(pytester, monkeypatch):
    result = run(pytester, monkeypatch, "--kafka-broker-override", "num.partitions")
    assert result.ret != 0
    assert "is not key=value" in result.stdout.str() + result.stderr.str()


REGISTRY_TESTS = '''
import json
import urllib.request


def test_the_registry_fixture_serves_confluents_api(schema_registry_url, kafka_broker):
    assert schema_registry_url == kafka_broker.schema_registry_url
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    request = urllib.request.Request(
        schema_registry_url + "/subjects/fixture-value/versions", method="POST",
        data=json.dumps({"schema": json.dumps(schema)}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.loads(answer.read())["id"] == 1
    with urllib.request.urlopen(schema_registry_url + "/subjects", timeout=10) as answer:
        assert json.loads(answer.read()) == ["fixture-value"]
'''


def test_a_users_suite_gets_a_schema_registry_with_the_broker(pytester):
    requires.module("avro", "schema-registry")
    pytester.makepyfile(test_registry=REGISTRY_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=240)
    result.assert_outcomes(passed=1)
