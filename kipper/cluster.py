"""A kipper cluster on loopback: one controller and N broker processes (docs/CLUSTER.md).

``EmbeddedCluster`` is the supervisor ``kipper cluster`` runs and the ``kafka_cluster``
fixture uses: it picks a port per node, starts ``python -m kipper broker`` with
``process.roles`` for each, waits until every broker is registered and unfenced, and can
stop (SIGTERM: a controlled shutdown), kill (SIGKILL), start again, add and remove brokers,
and move leaders through Kafka's own admin requests (AlterPartitionReassignments,
ElectLeaders). Every node logs to its own file (``log_text``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["EmbeddedCluster"]

CONTROLLER_ID = 0
# what a development cluster runs with: failures noticed within seconds, not Kafka's 9 s
DEFAULTS = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "250",
            "replica.lag.time.max.ms": "10000", "replica.fetch.backoff.ms": "200"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    """One process of the cluster: its id, port, properties and log file."""

    def __init__(self, node_id: int, port: int, overrides: dict[str, str], log_path: Path, python: str):
        self.node_id = node_id
        self.port = port
        self.overrides = overrides
        self.log_path = log_path
        self.python = python
        self.proc: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        cmd = [self.python, "-m", "kipper", "broker"]
        for k, v in self.overrides.items():
            cmd += ["--override", f"{k}={v}"]
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                                         start_new_session=True)
        finally:
            log.close()

    def signal(self, sig: int, wait: float = 15.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class EmbeddedCluster:
    """``EmbeddedCluster(brokers=3)``: ``start()``, ``bootstrap_servers``, ``kill(2)``,
    ``start_broker(2)``, ``stop()``. ``overrides`` go to every broker (Kafka's names);
    ``log_dirs``: a directory under which each node keeps its logs (durable)."""

    def __init__(self, brokers: int = 3, overrides: Mapping[str, Any] | None = None, *,
                 controller_overrides: Mapping[str, Any] | None = None, log_dirs: str | Path | None = None,
                 first_port: int | None = None, start_timeout: float = 60.0, python: str | None = None):
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        self.count = brokers
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.controller_overrides = {k: str(v) for k, v in (controller_overrides or {}).items()}
        self.log_dirs = Path(log_dirs) if log_dirs else None
        self.first_port = first_port
        self.start_timeout = start_timeout
        self.python = python or sys.executable
        self.work = Path(tempfile.mkdtemp(prefix="kipper-cluster-"))
        self.controller: Node | None = None
        self.brokers: dict[int, Node] = {}

    # --- lifecycle ---------------------------------------------------------------------------

    def _port(self, index: int) -> int:
        return self.first_port + index if self.first_port else free_port()

    def _broker_node(self, node_id: int, port: int) -> Node:
        replication = str(min(3, self.count))
        props = {**DEFAULTS, "offsets.topic.replication.factor": replication,
                 "transaction.state.log.replication.factor": replication,
                 **self.overrides, "process.roles": "broker", "node.id": str(node_id),
                 "listeners": f"PLAINTEXT://127.0.0.1:{port}",
                 "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller.port}"}
        if self.log_dirs is not None:
            props["log.dirs"] = str(self.log_dirs / f"broker-{node_id}")
        return Node(node_id, port, props, self.work / f"broker-{node_id}.log", self.python)

    def start(self) -> EmbeddedCluster:
        """Returns once every broker is registered, unfenced and knows every other."""
        port = self._port(0)
        props = {**DEFAULTS, **self.overrides, **self.controller_overrides, "process.roles": "controller",
                 "node.id": str(CONTROLLER_ID), "listeners": f"PLAINTEXT://127.0.0.1:{port}"}
        if self.log_dirs is not None:
            props["log.dirs"] = str(self.log_dirs / "controller")
        self.controller = Node(CONTROLLER_ID, port, props, self.work / "controller.log", self.python)
        self.controller.start()
        for node_id in range(1, self.count + 1):
            node = self.brokers[node_id] = self._broker_node(node_id, self._port(node_id))
            node.start()
        self.wait_until(lambda: self._all_see(set(self.brokers)), self.start_timeout, "the brokers to register")
        return self

    def stop(self) -> None:
        """Every broker stops (controlled shutdowns), then the controller."""
        for node in self.brokers.values():
            if node.running:
                node.proc.send_signal(signal.SIGTERM)
        for node in self.brokers.values():
            node.signal(signal.SIGTERM)
        if self.controller is not None:
            self.controller.signal(signal.SIGTERM)

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- where clients connect -------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values() if n.running) or \
            ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values())

    def bootstrap_of(self, node_id: int) -> str:
        return f"127.0.0.1:{self.brokers[node_id].port}"

    def log_text(self, node_id: int = CONTROLLER_ID) -> str:
        node = self.controller if node_id == CONTROLLER_ID else self.brokers[node_id]
        return node.log_path.read_text(errors="replace")

    # --- broker loss and return -----------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL: the broker stops dead; the controller fences it once its session ends."""
        self.brokers[node_id].signal(signal.SIGKILL)

    def stop_broker(self, node_id: int) -> None:
        """SIGTERM: a controlled shutdown (its leaderships move away first)."""
        self.brokers[node_id].signal(signal.SIGTERM)

    def start_broker(self, node_id: int, wait: bool = True) -> None:
        """Start a stopped or killed broker again (the same id and port); with ``wait``,
        until it is registered and unfenced."""
        node = self.brokers[node_id]
        if node.running:
            raise RuntimeError(f"broker {node_id} is running")
        node.start()
        if wait:
            self.wait_until(lambda: self._all_see({node_id}), self.start_timeout, f"broker {node_id} to return")

    def restart(self, node_id: int, *, kill: bool = True) -> None:
        self.kill(node_id) if kill else self.stop_broker(node_id)
        self.start_broker(node_id)

    def add_broker(self) -> int:
        node_id = max(self.brokers) + 1
        node = self.brokers[node_id] = self._broker_node(node_id, free_port())
        node.start()
        self.wait_until(lambda: self._all_see({node_id}), self.start_timeout, f"broker {node_id} to register")
        return node_id

    def remove_broker(self, node_id: int) -> None:
        """Stop the broker and unregister it (UnregisterBroker): it leaves the cluster."""
        from kipper.client.blocking import connect_any
        from kipper.protocol.messages.unregister_broker import UNREGISTER_BROKER

        self.stop_broker(node_id)
        del self.brokers[node_id]
        with connect_any(self.bootstrap_servers) as conn:
            answer = conn.request(UNREGISTER_BROKER.key, {"broker_id": node_id})
        if answer.error_code:
            raise RuntimeError(f"UnregisterBroker {node_id}: {answer.error_message or answer.error_code}")

    # --- partitions -------------------------------------------------------------------------

    def describe(self, topic: str) -> list:
        """Each partition as Metadata shows it (leader_id, leader_epoch, replica_nodes,
        isr_nodes), asked of a running broker."""
        from kipper.client import admin
        from kipper.client.blocking import connect_any

        with connect_any(self.bootstrap_servers) as conn:
            t = admin.metadata(conn, [topic]).topics[0]
        return sorted(t.partitions, key=lambda p: p.partition_index)

    def leader_of(self, topic: str, partition: int) -> int:
        return self.describe(topic)[partition].leader_id

    def move_leader(self, topic: str, partition: int, to: int, timeout: float = 30.0) -> None:
        """Make ``to`` the leader: reassign with it first (same replicas), then a preferred
        election (kafka-reassign-partitions and kafka-leader-election do the same)."""
        replicas = list(self.describe(topic)[partition].replica_nodes)
        if to not in replicas:
            replicas = [to] + replicas[1:]
        replicas = [to] + [r for r in replicas if r != to]
        self._reassign(topic, partition, replicas)
        self.wait_until(lambda: self._elect(topic, partition) or self.leader_of(topic, partition) == to,
                        timeout, f"{to} to lead {topic}-{partition}")

    def shuffle_leaders(self, topic: str) -> None:
        """Every partition's leadership moves to another of its in-sync replicas."""
        for p in self.describe(topic):
            others = [r for r in p.isr_nodes if r != p.leader_id]
            if others:
                self.move_leader(topic, p.partition_index, others[0])

    def _reassign(self, topic: str, partition: int, replicas: list[int]) -> None:
        from kipper.client.blocking import connect_any
        from kipper.protocol.messages.alter_partition_reassignments import ALTER_PARTITION_REASSIGNMENTS

        with connect_any(self.bootstrap_servers) as conn:
            answer = conn.request(ALTER_PARTITION_REASSIGNMENTS.key, {"timeout_ms": 30000, "topics": [
                {"name": topic, "partitions": [{"partition_index": partition, "replicas": replicas}]}]})
        row = answer.responses[0].partitions[0] if answer.responses else None
        if answer.error_code or (row is not None and row.error_code):
            raise RuntimeError(f"reassigning {topic}-{partition}: {answer.error_code or row.error_code}")

    def _elect(self, topic: str, partition: int) -> bool:
        from kipper.client.blocking import connect_any
        from kipper.protocol.messages.elect_leaders import ELECT_LEADERS

        with connect_any(self.bootstrap_servers) as conn:
            answer = conn.request(ELECT_LEADERS.key, {"election_type": 0, "timeout_ms": 30000,
                                                      "topic_partitions": [{"topic": topic, "partitions": [partition]}]})
        row = answer.replica_election_results[0].partition_result[0]
        return row.error_code == 0

    # --- waiting ----------------------------------------------------------------------------

    def _all_see(self, broker_ids: set[int]) -> bool:
        """Every running broker lists ``broker_ids`` (registered and unfenced) in Metadata."""
        from kipper.client import admin
        from kipper.client.blocking import BlockingConnection

        for node in self.brokers.values():
            if not node.running:
                if node.proc is not None and node.proc.returncode not in (None, 0, -9, -15):
                    raise RuntimeError(f"broker {node.node_id} exited with {node.proc.returncode}:\n"
                                       + node.log_path.read_text(errors="replace")[-4000:])
                continue
            try:
                with BlockingConnection("127.0.0.1", node.port, timeout=2.0) as conn:
                    seen = {b.node_id for b in admin.metadata(conn, []).brokers}
            except OSError:
                return False
            if not broker_ids <= seen:
                return False
        return True

    @staticmethod
    def wait_until(check: Callable[[], bool], timeout: float = 30.0, what: str = "the cluster") -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if check():
                    return
            except (OSError, RuntimeError) as exc:
                if isinstance(exc, RuntimeError) and "exited" in str(exc):
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {what}")
            time.sleep(0.05)

    def __repr__(self) -> str:
        return f"EmbeddedCluster({self.count} brokers, {self.bootstrap_servers})"
