"""The Prometheus view of the metrics registry, without sockets: cumulative counts that
metrics dumps do not reset, and kipper's fine latency buckets summed into Prometheus ones."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kipper.broker.metrics import Metrics
from kipper.broker.metrics_dump import normalize_quotas, normalize_share
from kipper.broker.prometheus import LATENCY_BUCKETS_S, families


class Registry:
    def __init__(self, snap):
        self.snap = snap

    def collect(self):
        return families(self.snap)


def samples(metrics: Metrics) -> dict:
    snap = metrics.cumulative()
    snap["share"] = normalize_share(snap.get("share"))
    snap["quotas"] = normalize_quotas(snap.get("quotas"))
    text = generate_latest(Registry(snap)).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_counts_survive_the_dump_taking_its_interval():
    m = Metrics()
    m.record_in("t", 0, 100, 3)
    m.record_in("t", 1, 50, 2)
    m.observe_request("Produce", 120)
    m.take_interval()  # a metrics dump: interval counts reset, cumulative ones must not
    m.record_in("t", 0, 10, 1)
    m.record_out("t", 0, 40, 4)
    m.observe_request("Produce", 3000)
    s = samples(m)
    assert s[("kafka_server_brokertopicmetrics_messagesin_total", (("topic", "t"),))] == 6
    assert s[("kafka_server_brokertopicmetrics_bytesin_total", (("topic", "t"),))] == 160
    assert s[("kafka_server_brokertopicmetrics_messagesout_total", (("topic", "t"),))] == 4
    assert s[("kafka_network_requestmetrics_requests_total", (("request", "Produce"), ("version", "-1")))] == 2
    assert s[("kafka_network_requestmetrics_totaltime_seconds_sum", (("request", "Produce"),))] == 0.00312


def test_requests_are_counted_per_version_as_kafkas_requests_per_sec_tags_them():
    m = Metrics()
    for version in (4, 5, 5):
        m.observe_latency(m.latency_of("EndTxn", version), 100)
    m.take_interval()
    m.observe_latency(m.latency_of("EndTxn", 5), 100)
    s = samples(m)
    assert s[("kafka_network_requestmetrics_requests_total", (("request", "EndTxn"), ("version", "5")))] == 3
    assert s[("kafka_network_requestmetrics_requests_total", (("request", "EndTxn"), ("version", "4")))] == 1
    assert s[("kafka_network_requestmetrics_totaltime_seconds_count", (("request", "EndTxn"),))] == 4
    assert m.take_interval()["api_versions"] == {"EndTxn": {"5": 1}}


def test_latency_buckets_are_cumulative_and_never_count_a_latency_above_their_bound():
    m = Metrics()
    latencies_us = [5, 90, 260, 900, 4_000, 40_000, 700_000, 50_000_000]
    for us in latencies_us:
        m.observe_request("Fetch", us)
    s = samples(m)
    label = lambda le: (("le", le), ("request", "Fetch"))  # noqa: E731
    previous = 0
    for le in LATENCY_BUCKETS_S:
        got = s[("kafka_network_requestmetrics_totaltime_seconds_bucket", label(repr(le)))]
        assert got >= previous
        assert got <= sum(1 for us in latencies_us if us / 1e6 <= le)
        previous = got
    assert s[("kafka_network_requestmetrics_totaltime_seconds_bucket", label("+Inf"))] == len(latencies_us)
    assert s[("kafka_network_requestmetrics_totaltime_seconds_count", (("request", "Fetch"),))] == 8


def test_provider_sections_become_kafka_named_families():
    m = Metrics(providers={
        "producer_state": lambda: {"mode": "latest", "entries": 7, "bytes": 300, "duplicates": 2,
                                   "out_of_order": 1, "fencings": 0, "expired": 0,
                                   "duplicate_sequence_errors": 0},
        "transactions": lambda: {"transactional_ids": 2, "states": {"Empty": 1, "Ongoing": 1},
                                 "commits": 5, "aborts": 1, "timed_out": 0, "fenced": 0, "expired": 0,
                                 "open_in_partitions": 3},
        "quotas": lambda: {"users": {"alice": {"quota": 10.0, "admitted": 4, "throttled": 2,
                                               "ProducerIds": {"rate": 0.5, "tokens": 3.5,
                                                               "throttle-time": 12.0}}}},
        "share": lambda: {"partitions": [{"group": "g", "topic": "t", "partition": 0, "spso": 5,
                                          "speo": 9, "in_flight": 4, "acknowledged": 1, "archived": 1,
                                          "lock_expiries": 2, "high_watermark": 20}]},
        "share_groups": lambda: {"groups": 1, "members": 2, "share_sessions": 2},
        "security": lambda: {"authentications": {"authenticated": 3, "failed": 1}},
    })
    m.connection_opened()
    s = samples(m)
    assert s[("kafka_server_replicamanager_produceridcount", ())] == 7
    assert s[("kafka_server_producerstate_duplicates_total", ())] == 2
    assert s[("kafka_server_transactioncoordinator_transactional_ids", (("state", "Ongoing"),))] == 1
    assert s[("kafka_server_transactioncoordinator_commits_total", ())] == 5
    alice = (("user", "alice"),)
    assert s[("kafka_server_producerids_rate", alice)] == 0.5
    assert s[("kafka_server_producerids_tokens", alice)] == 3.5
    assert s[("kafka_server_producerids_throttle_time", alice)] == 12.0
    assert s[("kafka_server_producerids_throttled_total", alice)] == 2
    sp = (("group", "g"), ("partition", "0"), ("topic", "t"))
    assert s[("kafka_server_sharepartitionmetrics_inflightmessagecount", sp)] == 4
    assert s[("kafka_server_sharepartitionmetrics_lag", sp)] == 20 - 5 - 2
    assert s[("kafka_server_sharepartitionmetrics_acquisitionlocktimeout_total", sp)] == 2
    assert s[("kafka_server_share_group_members", ())] == 2
    assert s[("kafka_server_socket_server_metrics_connection_count", ())] == 1
    assert s[("kafka_server_socket_server_metrics_failed_authentication_total", ())] == 1


def test_cleaner_and_authorizer_families():
    m = Metrics()
    m.providers["cleaner"] = lambda: {"runs": 2, "bytes_read": 1000, "bytes_written": 400,
                                      "records_removed": 9, "running": 0,
                                      "partitions": [{"topic": "c", "partition": 0, "dirty_ratio": 0.25}],
                                      "uncleanable": [{"topic": "d", "partition": 1, "reason": "x"}]}
    m.providers["authorizer"] = lambda: {"enabled": True, "acls": 12, "denied": {"Produce": 3, "Metadata": 1}}
    s = samples(m)
    assert s[("kafka_log_logcleaner_records_removed_total", ())] == 9
    assert s[("kafka_log_logcleanermanager_dirty_ratio", (("partition", "0"), ("topic", "c")))] == 0.25
    assert s[("kafka_log_logcleanermanager_uncleanable_partitions_count", ())] == 1
    assert s[("kafka_server_authorizer_metrics_acls_total_count", ())] == 12
    assert s[("kafka_server_authorizer_metrics_authorization_denied_total", (("request", "Produce"),))] == 3


def test_a_scraper_that_hangs_up_before_the_answer_is_not_an_error():
    """The answer's write fails with a broken pipe: logged at debug, not as a failure with a
    traceback, and nothing else is attempted on the dead socket."""
    import concurrent.futures
    import socket

    from structlog.testing import capture_logs

    from kipper.broker.prometheus import MetricsHttpServer

    def at_once(fn):
        future = concurrent.futures.Future()
        future.set_result(fn())
        return future

    server = MetricsHttpServer("127.0.0.1", 0, on_loop=at_once, snapshot=dict, ready=lambda: True)
    ours, scraper = socket.socketpair()
    try:
        scraper.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        scraper.close()  # gone before the answer
        with capture_logs() as logs:
            server.listener.httpd.RequestHandlerClass(ours, ("scraper", 0), server.listener.httpd)
    finally:
        ours.close()
        server.listener.httpd.server_close()
    assert [e["event"] for e in logs] == ["metrics_http_client_gone"]
    assert logs[0]["log_level"] == "debug"
