"""Kafka's own tools reading and acting on a 3-broker kipper cluster (issue 39): kafka-topics
--describe with replicas and ISR (and --under-replicated-partitions while a broker is down),
kafka-reassign-partitions (--execute, then --verify until done), kafka-leader-election
(preferred) and kafka-metadata-quorum (the controller the one voter, the brokers its observers),
each a JVM of Kafka's tools against the cluster's brokers."""

from __future__ import annotations

import json
import re
import subprocess
import time

from scripts.kafka_fetch import TOOLS
from tests.support.java_programs import java_command

QUICK = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "150"}


def _tool(name: str, *args: str) -> str:
    done = subprocess.run(java_command(TOOLS[name], "tools") + list(args), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{name} {' '.join(args)}:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout


def _described(bootstrap: str, topic: str, *extra: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, isr) as kafka-topics --describe prints them."""
    out = _tool("kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic, *extra)
    rows = {}
    for m in re.finditer(r"Partition: (\d+)\s+Leader: (-?\d+)\s+Replicas: ([\d,]+)\s+Isr: ([\d,]*)", out):
        rows[int(m[1])] = (int(m[2]), [int(x) for x in m[3].split(",")], [int(x) for x in m[4].split(",") if x])
    return rows


def test_kafkas_tools_describe_reassign_and_elect_on_a_kipper_cluster(kafka_cluster, tmp_path, java_classes):
    cluster = kafka_cluster(brokers=3, overrides=QUICK)
    bootstrap = cluster.bootstrap_servers
    _tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "tools", "--partitions", "3",
          "--replication-factor", "3")
    rows = _described(bootstrap, "tools")
    assert sorted(rows) == [0, 1, 2]
    assert {leader for leader, _, _ in rows.values()} == {1, 2, 3}
    assert all(sorted(replicas) == [1, 2, 3] and sorted(isr) == [1, 2, 3] for _, replicas, isr in rows.values())

    cluster.kill(3)
    cluster.wait_until(lambda: all(3 not in isr for _, _, isr in _described(bootstrap, "tools").values()), 60,
                       "broker 3 to leave the ISRs")
    assert sorted(_described(bootstrap, "tools", "--under-replicated-partitions")) == [0, 1, 2]
    cluster.start_broker(3)
    cluster.wait_until(lambda: all(sorted(isr) == [1, 2, 3] for _, _, isr in _described(bootstrap, "tools").values()),
                       60, "broker 3 back in the ISRs")

    leader = _described(bootstrap, "tools")[0][0]
    first = next(b for b in (3, 2, 1) if b != leader)  # a preferred replica that does not lead yet
    target = [first] + [b for b in (1, 2, 3) if b != first]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "tools", "partition": 0, "replicas": target}]}))
    _tool("kafka-reassign-partitions", "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan),
          "--execute")
    deadline = time.monotonic() + 60
    while "is completed" not in (verified := _tool("kafka-reassign-partitions", "--bootstrap-server", bootstrap,
                                                   "--reassignment-json-file", str(plan), "--verify")):
        assert time.monotonic() < deadline, verified
        time.sleep(0.5)
    assert _described(bootstrap, "tools")[0][1] == target
    elected = _tool("kafka-leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED",
                    "--topic", "tools", "--partition", "0")
    assert "Successfully completed leader election (PREFERRED)" in elected, elected
    assert _described(bootstrap, "tools")[0][0] == first

    quorum = ("kafka-metadata-quorum", "--bootstrap-server", bootstrap, "describe")
    status = _tool(*quorum, "--status")
    assert re.search(r"^LeaderId:\s+0$", status, re.M), status  # the controller, node 0
    assert re.search(r"^HighWatermark:\s+[1-9]\d*$", status, re.M), status  # its metadata log's end
    voters, observers = (re.search(rf"^{field}:\s+(.*)$", status, re.M)[1]
                         for field in ("CurrentVoters", "CurrentObservers"))
    assert re.findall(r'"id": (\d+)', voters) == ["0"] and "PLAINTEXT://127.0.0.1:" in voters, status
    assert sorted(re.findall(r'"id": (\d+)', observers)) == ["1", "2", "3"], status
    rows = [line.split() for line in _tool(*quorum, "--replication").splitlines()[1:] if line.strip()]
    assert sorted((int(r[0]), r[-1]) for r in rows) == [(0, "Leader"), (1, "Observer"), (2, "Observer"),
                                                        (3, "Observer")], rows
