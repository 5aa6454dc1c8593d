"""kipper perf produce, kipper produce and kipper consume, run as commands."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support.broker import ROOT, free_port
from tests.support.readback import read_topic


def kipper(*args, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kipper", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=timeout)


def test_perf_produce_reports_rate_and_latency_percentiles(broker, unique):
    topic = f"perf-{unique}"
    r = kipper("perf", "produce", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--num-records", "20000", "--record-size", "100", "--producer-prop", "linger.ms=2")
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    final = out.strip().splitlines()[-1]
    assert re.match(r"20000 records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
                    r"\d+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th", final), final
    assert sum(len(v) for v in read_topic(broker.bootstrap, topic).values()) == 20000


def test_perf_produce_with_a_throughput_cap_takes_at_least_the_implied_time(broker, unique):
    r = kipper("perf", "produce", "--bootstrap-server", broker.bootstrap, "--topic", f"cap-{unique}",
               "--num-records", "300", "--record-size", "10", "--throughput", "1000")
    rate = float(re.search(r"([\d.]+) records/sec", r.stdout.decode().splitlines()[-1]).group(1))
    assert r.returncode == 0 and rate <= 1000 * 1.2


def test_perf_produce_rejects_a_bad_producer_property(broker):
    r = kipper("perf", "produce", "--bootstrap-server", broker.bootstrap, "--topic", "x",
               "--num-records", "10", "--record-size", "10", "--producer-prop", "acks=7")
    assert r.returncode == 2
    assert b"acks" in r.stderr and b"Traceback" not in r.stderr


def test_console_produce_then_consume_round_trips_keys_and_values(broker, unique):
    topic = f"console-{unique}"
    r = kipper("produce", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--key-separator", ":", stdin=b"k1:hello\nk2:world\n")
    assert r.returncode == 0, r.stderr.decode()
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--from-beginning", "--max-messages", "2", "--print-key", "--key-separator", "=")
    assert r.returncode == 0, r.stderr.decode()
    assert sorted(r.stdout.decode().splitlines()) == ["k1=hello", "k2=world"]
    assert b"Processed a total of 2 messages" in r.stderr


def test_consume_of_a_missing_topic_is_a_readable_error(broker, unique):
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", f"nope-{unique}",
               "--timeout-ms", "100")
    assert r.returncode == 1
    assert b"UNKNOWN_TOPIC_OR_PARTITION" in r.stderr and b"Traceback" not in r.stderr


def test_produce_to_an_unreachable_broker_fails_cleanly():
    r = kipper("produce", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--topic", "t",
               "--producer-prop", "max.block.ms=500", "--producer-prop", "delivery.timeout.ms=31000",
               stdin=b"x\n", timeout=60)
    assert r.returncode == 1 and b"Traceback" not in r.stderr
