"""metrics.http.listener: /metrics parsed with prometheus-client's own parser matches what
the test produced and consumed; /healthz and /readyz; scrapes run off the event loop."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kipper.client import Producer, ShareConsumer, admin
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import LATEST_TIMESTAMP, list_offsets
from kipper.testing import EmbeddedBroker
from tests.support.readback import read_topic


@pytest.fixture(scope="module")
def broker():
    # producer-id quota windows of 2 x 10 s: a quota of 1 id/s holds a bucket of 20 tokens
    with EmbeddedBroker({"metrics.http.listener": "http://127.0.0.1:0", "producer.id.quota.window.num": 2,
                         "producer.id.quota.window.size.seconds": 10}) as b:
        yield b


def scrape(broker) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of one /metrics answer."""
    with urllib.request.urlopen(broker.metrics_url + "/metrics", timeout=10) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        text = resp.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def produce(bootstrap: str, topic: str, n: int) -> int:
    """n records; returns their value bytes."""
    with Producer({"bootstrap.servers": bootstrap}) as p:
        for i in range(n):
            p.send(topic, b"value-%04d" % i, key=b"k%d" % (i % 7))
        p.flush(10)
    return n


def test_topic_counters_match_what_was_produced_and_consumed(broker):
    topic = broker.create_topic(partitions=3)
    produce(broker.bootstrap_servers, topic, 300)
    stored = read_topic(broker.bootstrap_servers, topic)
    assert sum(len(v) for v in stored.values()) == 300
    m = scrape(broker)
    label = (("topic", topic),)
    assert m[("kafka_server_brokertopicmetrics_messagesin_total", label)] == 300
    assert m[("kafka_server_brokertopicmetrics_messagesout_total", label)] == 300
    assert m[("kafka_server_brokertopicmetrics_bytesin_total", label)] > 300 * len(b"value-0000")
    assert m[("kafka_server_brokertopicmetrics_bytesout_total", label)] == \
        m[("kafka_server_brokertopicmetrics_bytesin_total", label)]


def test_request_counts_and_latency_histograms_agree_per_api(broker):
    topic = broker.create_topic()
    before = scrape(broker)
    produce(broker.bootstrap_servers, topic, 10)
    after = scrape(broker)
    def requests(snapshot, api):  # the counter is per version, as Kafka's RequestsPerSec
        return sum(v for (name, labels), v in snapshot.items()
                   if name == "kafka_network_requestmetrics_requests_total" and dict(labels)["request"] == api)
    assert requests(after, "Produce") >= requests(before, "Produce") + 1
    apis = {dict(labels)["request"] for (name, labels) in after if name == "kafka_network_requestmetrics_requests_total"}
    for api in apis:
        count = after[("kafka_network_requestmetrics_totaltime_seconds_count", (("request", api),))]
        inf = after[("kafka_network_requestmetrics_totaltime_seconds_bucket",
                     tuple(sorted({"request": api, "le": "+Inf"}.items())))]
        assert requests(after, api) == count == inf, api
    buckets = sorted((float(dict(lb)["le"]), v) for (name, lb), v in after.items()
                     if name == "kafka_network_requestmetrics_totaltime_seconds_bucket"
                     and dict(lb)["request"] == "Produce")
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative


def test_connections_and_producer_state_are_gauges(broker):
    topic = broker.create_topic()
    with connect_any(broker.bootstrap_servers):
        with connect_any(broker.bootstrap_servers):
            m = scrape(broker)
            assert m[("kafka_server_socket_server_metrics_connection_count", ())] >= 2
    produce(broker.bootstrap_servers, topic, 5)  # idempotent by default: one producer id
    m = scrape(broker)
    assert m[("kafka_server_replicamanager_produceridcount", ())] >= 1
    assert m[("kafka_server_socket_server_metrics_connection_creation_total", ())] >= \
        m[("kafka_server_socket_server_metrics_connection_close_total", ())] + \
        m[("kafka_server_socket_server_metrics_connection_count", ())]
    assert ("kafka_server_transactioncoordinator_transactional_ids", (("state", "Empty"),)) in m


def test_producer_id_quota_metrics_carry_the_kip_936_names_per_user(broker):
    with connect_any(broker.bootstrap_servers) as conn:
        resp = admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration({"user": "ANONYMOUS"},
                                                                             {"producer_ids_rate": 1})])
        assert resp.entries[0].error_code == 0
    try:
        produce(broker.bootstrap_servers, broker.create_topic(), 3)
        m = scrape(broker)
        user = (("user", "ANONYMOUS"),)
        assert m[("kafka_server_producerids_admitted_total", user)] >= 1
        assert m[("kafka_server_producerids_rate", user)] > 0
        assert 18 <= m[("kafka_server_producerids_tokens", user)] < 20  # one id took one token
        assert m[("kafka_server_producerids_throttle_time", user)] == 0
    finally:
        with connect_any(broker.bootstrap_servers) as conn:
            admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration({"user": "ANONYMOUS"},
                                                                         {"producer_ids_rate": None})])


def high_watermark(bootstrap: str, topic: str) -> int:
    with connect_any(bootstrap) as conn:
        resp = list_offsets(conn, {(topic, 0): LATEST_TIMESTAMP})
    return resp.topics[0].partitions[0].offset


def test_share_group_in_flight_and_lag_per_share_partition(broker):
    """Lag is counted in offsets up to the high watermark, as Kafka's consumer lag is, so
    the share-state control records kipper writes into the partition count until a fetch
    passes them."""
    topic = broker.create_topic(configs={"share.auto.offset.reset": "earliest"})
    produce(broker.bootstrap_servers, topic, 10)
    group = f"workers-{topic}"
    config = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
              "share.acknowledgement.mode": "explicit"}
    key = (("group", group), ("partition", "0"), ("topic", topic))
    with ShareConsumer(config) as c:
        c.subscribe([topic])
        got, deadline = [], time.time() + 15
        while len(got) < 10 and time.time() < deadline:
            got += c.poll(0.3)
        assert len(got) == 10
        m = scrape(broker)
        assert m[("kafka_server_sharepartitionmetrics_inflightmessagecount", key)] == 10
        hwm = high_watermark(broker.bootstrap_servers, topic)
        assert hwm >= 10 and m[("kafka_server_sharepartitionmetrics_lag", key)] == hwm  # nothing acknowledged
        for r in got:
            c.acknowledge(r)
        assert all(e is None for e in c.commit_sync().values())
        m = scrape(broker)
        hwm = high_watermark(broker.bootstrap_servers, topic)
        assert m[("kafka_server_sharepartitionmetrics_lag", key)] == hwm - 10  # only control records left
        assert m[("kafka_server_group_coordinator_metrics_group_count", (("protocol", "share"),))] >= 1


def test_healthz_and_readyz_answer_200_while_serving(broker):
    for path, body in (("/healthz", b"ok\n"), ("/readyz", b"ready\n")):
        with urllib.request.urlopen(broker.metrics_url + path, timeout=5) as resp:
            assert resp.status == 200 and resp.read() == body
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(broker.metrics_url + "/nope", timeout=5)
    assert err.value.code == 404


def test_an_idle_http_client_holds_neither_the_broker_nor_other_scrapes(broker):
    host, port = broker.metrics_url.removeprefix("http://").rsplit(":", 1)
    stalled = [socket.create_connection((host, int(port)), timeout=5) for _ in range(3)]
    try:
        for s in stalled:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")  # a request that never ends
        with connect_any(broker.bootstrap_servers) as conn:
            assert admin.metadata(conn, []).topics == []
        assert scrape(broker)[("kafka_server_socket_server_metrics_connection_count", ())] >= 0
    finally:
        for s in stalled:
            s.close()


def test_readyz_is_503_once_the_broker_is_stopping():
    with EmbeddedBroker({"metrics.http.listener": "http://127.0.0.1:0"}, mode="thread") as b:
        b.call(lambda broker: None)
        server = b._runner.server  # (the thread mode: the server is in this process)
        server.ready = False  # what stop() sets first
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(b.metrics_url + "/readyz", timeout=5)
        assert err.value.code == 503
        server.ready = True
