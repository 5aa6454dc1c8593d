"""Apache Kafka as a several-broker reference: one KRaft controller and N brokers on loopback,
each its own JVM, started by our scripts (issue 39: the comparison for a kipper cluster).

    scripts/kafka-reference cluster --brokers 3      # in the foreground; prints the bootstrap

The layout mirrors ``kipper cluster``'s (docs/CLUSTER.md): the controller is node 0 (an
isolated controller, a quorum of one), brokers are nodes 1..N, with the same development
timings (a broker's session of 6 s) and internal topics of min(3, N) replicas. A node can be
killed (SIGKILL) and started again on its own data (``kill``, ``start``). Standard library
only, like scripts/kafka_reference.py, whose fetching, formatting and JVM start it reuses.
"""
from __future__ import annotations

import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from scripts.kafka_reference import (KafkaReference, KafkaReferenceError, _cluster_id, _metadata_lists_a_broker,
                                     free_port)

# the same timings as kipper/cluster.py's DEFAULTS
TIMINGS = {"broker.session.timeout.ms": "6000", "broker.heartbeat.interval.ms": "500",
           "replica.lag.time.max.ms": "10000", "replica.fetch.backoff.ms": "200"}


@dataclass
class KafkaNode(KafkaReference):
    """One node of the cluster: the controller (node 0) or a broker."""

    node_id: int = 0
    controller: bool = False
    cluster_id: str = ""
    quorum: str = ""  # the controller's host:port

    def server_properties(self) -> dict[str, str]:
        props = {**TIMINGS, "node.id": str(self.node_id), "controller.listener.names": "CONTROLLER",
                 "controller.quorum.bootstrap.servers": self.quorum, "log.dirs": str(self.workdir / "data"),
                 "group.initial.rebalance.delay.ms": "0", "num.network.threads": "2", "num.io.threads": "2"}
        if self.controller:
            props.update({"process.roles": "controller", "listeners": f"CONTROLLER://{self.quorum}",
                          "listener.security.protocol.map": "CONTROLLER:PLAINTEXT"})
        else:
            props.update({"process.roles": "broker", "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                          "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                          "inter.broker.listener.name": "PLAINTEXT",
                          "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"})
        props.update(self.properties)
        return props

    def _format(self, config: Path) -> None:
        if (self.workdir / "data" / "meta.properties").exists():
            return
        args = ["format", "--config", str(config), "--cluster-id", self.cluster_id,
                "--standalone" if self.controller else "--no-initial-controllers"]
        for name, level in self.features.items():
            args += ["--feature", f"{name}={level}"]
        with open(self.workdir / "format.log", "wb") as out:
            if self._java("kafka.tools.StorageTool", args, stdout=out, stderr=out).wait() != 0:
                raise KafkaReferenceError("kafka-storage format failed:\n"
                                          + (self.workdir / "format.log").read_text(errors="replace"))

    def _wait_ready(self, timeout: float) -> None:
        if not self.controller:
            return super()._wait_ready(timeout)
        host, port = self.quorum.rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise KafkaReferenceError(f"the controller exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return
            except OSError:
                time.sleep(0.25)
        raise KafkaReferenceError(f"the controller did not start within {timeout:.0f}s")

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()


class KafkaCluster:
    """``KafkaCluster(brokers=3).start()``, ``bootstrap``, ``kill(2)``, ``start_broker(2)``, ``stop()``."""

    def __init__(self, brokers: int = 3, properties: dict[str, str] | None = None, *, heap: str = "512m",
                 features: dict[str, int] | None = None, workdir: Path | None = None):
        self.count = brokers
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="kafka-cluster-"))
        self._own = workdir is None
        replication = str(min(3, brokers))
        self.properties = {"offsets.topic.replication.factor": replication,
                           "transaction.state.log.replication.factor": replication,
                           "transaction.state.log.min.isr": str(min(2, brokers)),
                           "share.coordinator.state.topic.replication.factor": replication,
                           "share.coordinator.state.topic.min.isr": str(min(2, brokers)),
                           **(properties or {})}
        cluster_id, quorum = _cluster_id(), f"127.0.0.1:{free_port()}"
        common = dict(cluster_id=cluster_id, quorum=quorum, heap=heap, features=dict(features or {}))
        self.controller = KafkaNode(workdir=self.workdir / "controller", node_id=0, controller=True,
                                    properties=dict(self.properties), **common)
        self.brokers = {i: KafkaNode(workdir=self.workdir / f"broker-{i}", node_id=i, port=free_port(),
                                     properties=dict(self.properties), **common) for i in range(1, brokers + 1)}

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values())

    def start(self, timeout: float = 180.0) -> "KafkaCluster":
        """The controller, then the brokers at once (each JVM takes seconds to start)."""
        from concurrent.futures import ThreadPoolExecutor

        self.controller.start(timeout)
        with ThreadPoolExecutor(self.count) as pool:
            for done in [pool.submit(b.start, timeout) for b in self.brokers.values()]:
                done.result()
        self.wait_for_brokers(timeout)
        return self

    def wait_for_brokers(self, timeout: float = 120.0) -> None:
        """Until every running broker's Metadata lists every running broker."""
        deadline = time.monotonic() + timeout
        running = [b for b in self.brokers.values() if b.proc is not None]
        while time.monotonic() < deadline:
            if all(_brokers_listed(b.port) >= len(running) for b in running):
                return
            time.sleep(0.25)
        raise KafkaReferenceError(f"the brokers did not all register within {timeout:.0f}s")

    def kill(self, node_id: int) -> None:
        self.brokers[node_id].kill()

    def start_broker(self, node_id: int, timeout: float = 120.0) -> None:
        self.brokers[node_id].start(timeout)
        self.wait_for_brokers(timeout)

    def stop(self) -> None:
        for broker in self.brokers.values():
            if broker.proc is not None:
                broker.proc.send_signal(signal.SIGTERM)
        for broker in self.brokers.values():
            broker._own_workdir = False
            broker.stop()
        self.controller._own_workdir = False
        self.controller.stop()
        if self._own:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "KafkaCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _brokers_listed(port: int) -> int:
    """How many brokers a Metadata v1 answer lists (0 when it does not answer)."""
    import struct

    from scripts.kafka_reference import _recv_exactly

    client = b"kipper-ref"
    body = struct.pack(">hhih", 3, 1, 1, len(client)) + client + struct.pack(">i", -1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            payload = _recv_exactly(s, struct.unpack(">i", _recv_exactly(s, 4))[0])
    except OSError:
        return 0
    return struct.unpack(">i", payload[4:8])[0] if len(payload) >= 8 else 0


__all__ = ["KafkaCluster", "KafkaNode", "_metadata_lists_a_broker"]
