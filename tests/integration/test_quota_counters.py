"""The producer-id quota's counters stay cumulative when the quota's cache forgets an idle
user (seed 002: a user entry with no readable bloom filter is dropped): 8 ids admitted, the
user idles out, 5 more admitted, and both the metrics dump and /metrics say 13."""

from __future__ import annotations

import json
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from kipper.client import Producer, admin
from kipper.client.blocking import connect_any
from kipper.testing import EmbeddedBroker


def _admitted_on_metrics(broker) -> float | None:
    with urllib.request.urlopen(broker.metrics_url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "kafka_server_producerids_admitted_total" and s.labels.get("user") == "ANONYMOUS":
                return s.value
    return None


def _dumped(dump_dir) -> list[dict]:
    rows = []
    for path in sorted(dump_dir.glob("*")):
        for line in path.read_text().splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def _produce_with_new_ids(bootstrap: str, topic: str, n: int) -> None:
    for i in range(n):  # a new producer, so a new producer id, each time
        with Producer({"bootstrap.servers": bootstrap}) as p:
            p.send(topic, b"v%d" % i)
            p.flush(10)


def _wait(predicate, timeout=20.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_admitted_counter_is_cumulative_across_the_eviction_of_an_idle_user(tmp_path):
    # windows of 2 x 1 s: a user with no id for 1.5 s and a full bucket is forgotten
    dumps = tmp_path / "dumps"
    with EmbeddedBroker({"metrics.http.listener": "http://127.0.0.1:0", "metrics.dump.dir": str(dumps),
                         "metrics.dump.interval.ms": 200,
                         "producer.id.quota.window.num": 2, "producer.id.quota.window.size.seconds": 1,
                         "producer.id.quota.cache.cleanup.scheduler.interval.ms": 100}) as broker:
        with connect_any(broker.bootstrap_servers) as conn:
            resp = admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration(
                {"user": "ANONYMOUS"}, {"producer_ids_rate": 10})])  # a bucket of 20
            assert resp.entries[0].error_code == 0
        topic = broker.create_topic()
        _produce_with_new_ids(broker.bootstrap_servers, topic, 8)
        assert _wait(lambda: _admitted_on_metrics(broker) == 8)

        def forgotten() -> bool:
            rows = _dumped(dumps)
            return bool(rows) and rows[-1]["quotas"]["cleaned_users"] >= 1
        assert _wait(forgotten), "the idle user should be dropped from the quota cache"

        _produce_with_new_ids(broker.bootstrap_servers, topic, 5)
        assert _wait(lambda: _admitted_on_metrics(broker) == 13)

        def dumped_13() -> bool:
            users = [u for u in _dumped(dumps)[-1]["quotas"]["users"] if u["user"] == "ANONYMOUS"]
            return bool(users) and users[0]["admitted"] == 13
        assert _wait(dumped_13)
