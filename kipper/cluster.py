"""A kipper cluster on loopback: one controller and N broker processes (docs/CLUSTER.md).

``EmbeddedCluster`` is the supervisor ``kipper cluster`` runs and the ``kafka_cluster``
fixture uses: it picks a port per node, starts each node as an ``EmbeddedBroker`` in its own
process (forked ready by the test zygote, kipper/testing/) with ``process.roles``, waits until
every broker is registered and unfenced, and can stop (a controlled shutdown), kill
(SIGKILL), start again, add and remove brokers, inject faults into one broker's answers
(``faults(id)``), and move leaders through Kafka's own admin requests
(AlterPartitionReassignments, ElectLeaders). Every node logs to its own file (``log_text``).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from kipper.testing import EmbeddedBroker

__all__ = ["EmbeddedCluster"]

CONTROLLER_ID = 0
# what a development cluster runs with: a dead broker noticed within seconds (Kafka: 9 s), yet a
# broker whose event loop a busy machine holds up for a few seconds is not taken for dead
DEFAULTS = {"broker.session.timeout.ms": "6000", "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "10000", "replica.fetch.backoff.ms": "200"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Node:
    """One process of the cluster: its id, port and properties, and the EmbeddedBroker that
    runs it while it is up."""

    def __init__(self, node_id: int, port: int, overrides: dict[str, str]):
        self.node_id = node_id
        self.port = port
        self.overrides = overrides
        self.broker: EmbeddedBroker | None = None
        self.logs: list[str] = []  # what earlier runs logged

    @property
    def running(self) -> bool:
        return self.broker is not None and self.broker.running

    def start(self, timeout: float) -> None:
        self.broker = EmbeddedBroker(self.overrides, mode="process", start_timeout=timeout).start()

    def stop(self) -> None:
        if self.broker is not None and self.broker.running:
            self.logs.append(self.broker.log_text())
            self.broker.stop()

    def kill(self) -> None:
        if self.broker is not None and self.broker.running:
            self.logs.append(self.broker.log_text())
            self.broker.kill()

    def log_text(self) -> str:
        current = self.broker.log_text() if self.running else ""
        return "".join(self.logs) + current


class EmbeddedCluster:
    """``EmbeddedCluster(brokers=3)``: ``start()``, ``bootstrap_servers``, ``kill(2)``,
    ``start_broker(2)``, ``stop()``. ``overrides`` go to every broker (Kafka's names);
    ``log_dirs``: a directory under which each node keeps its logs (durable); ``racks``: the
    brokers' broker.rack in turn (broker 1 the first, and round again); ``listeners``: security
    protocols each broker listens for besides PLAINTEXT (the nodes' own, and the first),
    ``bootstrap_of(id, protocol)`` says where."""

    def __init__(self, brokers: int = 3, overrides: Mapping[str, Any] | None = None, *,
                 controller_overrides: Mapping[str, Any] | None = None, log_dirs: str | Path | None = None,
                 first_port: int | None = None, start_timeout: float = 60.0, racks: Sequence[str] = (),
                 listeners: Sequence[str] = ()):
        if brokers < 1:
            raise ValueError("a cluster needs at least one broker")
        self.count = brokers
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.controller_overrides = {k: str(v) for k, v in (controller_overrides or {}).items()}
        self.log_dirs = Path(log_dirs) if log_dirs else None
        self.racks = tuple(racks)
        self.listeners = tuple(listeners)  # more listeners per broker (security protocols), after PLAINTEXT
        self.first_port = first_port
        self.start_timeout = start_timeout
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
                 "listeners": ",".join([f"PLAINTEXT://127.0.0.1:{port}"] +
                                       [f"{p}://127.0.0.1:{free_port()}" for p in self.listeners]),
                 "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller.port}"}
        if self.log_dirs is not None:
            props["log.dirs"] = str(self.log_dirs / f"broker-{node_id}")
        if self.racks:
            props["broker.rack"] = self.racks[(node_id - 1) % len(self.racks)]
        return Node(node_id, port, props)

    def start(self) -> EmbeddedCluster:
        """Returns once every broker is registered, unfenced and knows every other."""
        port = self._port(0)
        props = {**DEFAULTS, **self.overrides, **self.controller_overrides, "process.roles": "controller",
                 "node.id": str(CONTROLLER_ID), "listeners": f"PLAINTEXT://127.0.0.1:{port}"}
        if self.log_dirs is not None:
            props["log.dirs"] = str(self.log_dirs / "controller")
        self.controller = Node(CONTROLLER_ID, port, props)
        self.controller.start(self.start_timeout)
        for node_id in range(1, self.count + 1):
            node = self.brokers[node_id] = self._broker_node(node_id, self._port(node_id))
            node.start(self.start_timeout)
        self.wait_until(lambda: self._all_see(set(self.brokers)), self.start_timeout, "the brokers to register")
        return self

    def stop(self) -> None:
        """Every broker stops (controlled shutdowns, at once), then the controller."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max(len(self.brokers), 1)) as pool:
            list(pool.map(Node.stop, self.brokers.values()))
        if self.controller is not None:
            self.controller.stop()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- where clients connect -------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values() if n.running) or \
            ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values())

    def bootstrap_of(self, node_id: int, protocol: str = "PLAINTEXT") -> str:
        """Where broker ``node_id`` listens for ``protocol`` (PLAINTEXT, or one of ``listeners``)."""
        for listener in self.brokers[node_id].overrides["listeners"].split(","):
            if listener.startswith(f"{protocol}://"):
                return listener.split("://", 1)[1]
        raise KeyError(f"broker {node_id} has no {protocol} listener")

    def log_text(self, node_id: int = CONTROLLER_ID) -> str:
        node = self.controller if node_id == CONTROLLER_ID else self.brokers[node_id]
        return node.log_text()

    def faults(self, node_id: int):
        """The fault injection of one running broker (kipper/testing/faults.py): errors,
        delays, lost answers and closed connections for chosen requests, request counts."""
        return self.brokers[node_id].broker.faults

    # --- broker loss and return -----------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL: the broker stops dead; the controller fences it once its session ends."""
        self.brokers[node_id].kill()

    def stop_broker(self, node_id: int) -> None:
        """A controlled shutdown (its leaderships move away first), then the process ends."""
        self.brokers[node_id].stop()

    def start_broker(self, node_id: int, wait: bool = True) -> None:
        """Start a stopped or killed broker again (the same id and port); with ``wait``,
        until it is registered and unfenced."""
        node = self.brokers[node_id]
        if node.running:
            raise RuntimeError(f"broker {node_id} is running")
        node.start(self.start_timeout)
        if wait:
            self.wait_until(lambda: self._all_see({node_id}), self.start_timeout, f"broker {node_id} to return")

    def restart(self, node_id: int, *, kill: bool = True) -> None:
        self.kill(node_id) if kill else self.stop_broker(node_id)
        self.start_broker(node_id)

    def add_broker(self) -> int:
        node_id = max(self.brokers) + 1
        node = self.brokers[node_id] = self._broker_node(node_id, free_port())
        node.start(self.start_timeout)
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
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {what}")
            time.sleep(0.05)

    def __repr__(self) -> str:
        return f"EmbeddedCluster({self.count} brokers, {self.bootstrap_servers})"
