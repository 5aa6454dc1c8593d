"""``kipper cluster`` from the command line, and the ``kafka_cluster`` fixture: a cluster
starts in one command, a broker is killed and started again from another shell, and
``quit`` stops it all (docs/CLUSTER.md)."""

from __future__ import annotations

import re
import subprocess
import sys

from kipper.client import admin
from kipper.client.blocking import connect_any
from kipper.cluster import EmbeddedCluster

QUICK = ["--override", "broker.session.timeout.ms=3000", "--override", "broker.heartbeat.interval.ms=150"]


def _brokers(bootstrap: str) -> list[int]:
    with connect_any(bootstrap) as conn:
        return sorted(b.node_id for b in admin.metadata(conn, []).brokers)


def _kipper(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "kipper", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_cluster_in_one_command_takes_commands_from_another_shell():
    proc = subprocess.Popen([sys.executable, "-m", "kipper", "cluster", "--brokers", "2", *QUICK],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        bootstrap = re.search(r"at (\S+)", first).group(1)
        state = re.search(r"state (\S+)", second).group(1)
        assert _brokers(bootstrap) == [1, 2]
        assert _kipper("cluster", "kill", "2", "--state", state) == "broker 2: kill done"
        EmbeddedCluster.wait_until(lambda: _brokers(bootstrap.split(",")[0]) == [1], 30, "broker 2 to be fenced")
        assert _kipper("cluster", "start", "2", "--state", state) == "broker 2: start done"
        assert _brokers(bootstrap) == [1, 2]
        assert _kipper("cluster", "quit", "--state", state) == "stopping"
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_kafka_cluster_fixture_starts_a_cluster(kafka_cluster):
    cluster = kafka_cluster(brokers=2)
    assert _brokers(cluster.bootstrap_servers) == [1, 2]
    assert cluster.faults(1) is not None
