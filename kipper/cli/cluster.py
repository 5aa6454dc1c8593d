"""``kipper cluster``: a Kafka cluster on loopback in one command (docs/CLUSTER.md).

``kipper cluster --brokers 3`` starts a controller and three broker processes
(kipper.cluster.EmbeddedCluster), prints the bootstrap servers and a state directory, and
runs until Ctrl-C or ``quit``. Meanwhile it takes commands, on its stdin or from another
shell (``kipper cluster kill 2 --state DIR``, through the state directory's socket):

  status                 the brokers, their ports, and whether each runs
  kill ID                SIGKILL a broker (its leaderships move once its session ends)
  stop ID                a controlled shutdown of a broker
  start ID               start a stopped or killed broker again
  restart ID             kill it, then start it
  add                    a new broker
  remove ID              stop a broker and unregister it
  move TOPIC PART ID     make broker ID the leader of a partition
  elect                  preferred leader election everywhere (as kafka-leader-election)
  quit                   stop the cluster
"""

from __future__ import annotations

import json
import select
import socket
import sys
import tempfile
import threading
from pathlib import Path

from kipper.cli.common import ToolError, UsageError, add_command, key_values

ACTIONS = ("run", "status", "kill", "stop", "start", "restart", "add", "remove", "move", "elect", "quit")
SOCKET = "control.sock"


def add_parser(sub) -> None:
    p = add_command(sub, "cluster", "run a cluster of kipper brokers, or act on a running one", __doc__.split("\n\n")[1])
    p.add_argument("action", nargs="?", default="run", choices=ACTIONS, help="run a cluster, or act on one")
    p.add_argument("args", nargs="*", help="the broker id (and for move: TOPIC PARTITION ID)")
    p.add_argument("--brokers", type=int, default=3, help="how many brokers")
    p.add_argument("--port", type=int, default=0, metavar="PORT",
                   help="the controller's port; broker N listens on PORT+N (0: free ports)")
    p.add_argument("--log-dirs", metavar="DIR", help="keep each node's logs under DIR/broker-N (durable)")
    p.add_argument("--racks", metavar="A,B,...", default="",
                   help="the brokers' broker.rack in turn (broker 1 the first); with "
                        "--override replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector "
                        "consumers read from a replica in their client.rack")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a property for every broker (Kafka's names), repeatable")
    p.add_argument("--state", metavar="DIR", help="the running cluster's state directory (for actions)")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.action != "run":
        if not args.state:
            raise UsageError("an action on a running cluster needs --state DIR (printed when it started)")
        print(send(Path(args.state), " ".join([args.action, *args.args])))
        return 0
    from kipper.cluster import EmbeddedCluster

    if args.brokers < 1:
        raise UsageError("--brokers must be at least 1")
    racks = [r.strip() for r in args.racks.split(",") if r.strip()]
    cluster = EmbeddedCluster(args.brokers, key_values(args.override, "--override"), log_dirs=args.log_dirs, racks=racks,
                              first_port=args.port or None)
    state = Path(tempfile.mkdtemp(prefix="kipper-cluster-"))
    cluster.start()
    try:
        (state / "cluster.json").write_text(json.dumps(_status(cluster), indent=1))
        print(f"kipper cluster: {args.brokers} brokers at {cluster.bootstrap_servers}")
        print(f"controller on 127.0.0.1:{cluster.controller.port}; state {state} "
              f"(kipper cluster kill 2 --state {state}); type 'help' for commands")
        sys.stdout.flush()
        stop = threading.Event()
        threading.Thread(target=_serve_socket, args=(cluster, state, stop), daemon=True).start()
        _read_commands(cluster, stop)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
        (state / SOCKET).unlink(missing_ok=True)
    return 0


def _read_commands(cluster, stop: threading.Event) -> None:
    """Commands on stdin until ``quit`` (there or from the socket); a closed stdin (a
    background job) leaves the socket alone."""
    while not stop.is_set():
        ready, _, _ = select.select([sys.stdin], [], [], 0.5)
        if not ready:
            continue
        line = sys.stdin.readline()
        if not line:
            stop.wait()
            return
        answer = act(cluster, line, stop)
        if answer:
            print(answer, flush=True)


def _status(cluster) -> dict:
    return {"bootstrap_servers": cluster.bootstrap_servers, "controller": cluster.controller.port,
            "brokers": {str(i): {"port": n.port, "running": n.running} for i, n in cluster.brokers.items()}}


def act(cluster, line: str, stop: threading.Event) -> str:
    """One command's answer (a line or a few)."""
    words = line.split()
    if not words:
        return ""
    what, rest = words[0], words[1:]
    try:
        if what == "help":
            return __doc__.split("\n\n")[1]
        if what == "status":
            return json.dumps(_status(cluster), indent=1)
        if what == "quit":
            stop.set()
            return "stopping"
        if what == "add":
            return f"broker {cluster.add_broker()} added"
        if what == "elect":
            from kipper.client.blocking import connect_any
            from kipper.protocol.messages.elect_leaders import ELECT_LEADERS

            with connect_any(cluster.bootstrap_servers) as conn:
                answer = conn.request(ELECT_LEADERS.key, {"election_type": 0, "topic_partitions": None,
                                                          "timeout_ms": 30000})
            moved = sum(r.error_code == 0 for t in answer.replica_election_results for r in t.partition_result)
            return f"{moved} partition(s) moved to their preferred leader"
        if what == "move" and len(rest) == 3:
            cluster.move_leader(rest[0], int(rest[1]), int(rest[2]))
            return f"{rest[2]} leads {rest[0]}-{rest[1]}"
        if what in ("kill", "stop", "start", "restart", "remove") and len(rest) == 1:
            node_id = int(rest[0])
            if node_id not in cluster.brokers:
                return f"no broker {node_id}"
            {"kill": cluster.kill, "stop": cluster.stop_broker, "start": cluster.start_broker,
             "restart": cluster.restart, "remove": cluster.remove_broker}[what](node_id)
            return f"broker {node_id}: {what} done"
    except (ValueError, RuntimeError, TimeoutError, OSError) as exc:
        return f"{what} failed: {exc}"
    return f"unknown command: {line.strip()} (type 'help')"


def _serve_socket(cluster, state: Path, stop: threading.Event) -> None:
    """Commands from other shells (``kipper cluster ACTION --state DIR``)."""
    path = str(state / SOCKET)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    while not stop.is_set():
        conn, _ = server.accept()
        with conn:
            line = conn.makefile().readline()
            try:
                conn.sendall((act(cluster, line, stop) + "\n").encode())
            except OSError:
                pass


def send(state: Path, line: str) -> str:
    path = state / SOCKET
    if not path.exists():
        raise ToolError(f"no running cluster has its state in {state}")
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(path))
        conn.sendall(line.encode() + b"\n")
        return conn.makefile().read().strip()
