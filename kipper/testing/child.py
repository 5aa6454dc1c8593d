"""A process broker's own side: the broker a test asked for, in this process (forked by the
zygote, or spawned), answering on the control socket it was handed.

The first line it writes is the outcome of the start (``bootstrap_servers``, ``metrics_url``,
``schema_registry_url``, ``pid``, or ``error``); then it serves commands (kipper/testing/control.py) until ``stop``,
the socket's end (the test process went away) or a SIGTERM, and exits. Its log goes to the
file the request names.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import traceback


def serve(conn: socket.socket, request: dict) -> int:
    from kipper.broker import logging_setup
    from kipper.broker.config import load
    from kipper.broker.faults.plan import FaultPlan
    from kipper.broker.server import BrokerServer, loop_factory, tune_collector
    from kipper.testing.control import Control, metrics_url

    _log_to(request.get("log"))
    if request.get("path"):  # what call() unpickles is imported as the test imported it
        sys.path[:] = request["path"]
    conn.setblocking(True)
    try:
        config = load(None, request["overrides"], environ={})
        logging_setup.configure(config["log.level"], config["log.format"])
        loop = loop_factory()
        asyncio.set_event_loop(loop)
        plan = FaultPlan()
        server = BrokerServer(config, faults=plan)
        loop.run_until_complete(server.start())
    except BaseException as exc:  # the test sees why, with the broker's own words
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        conn.sendall(json.dumps({"ok": False, "error": detail}).encode() + b"\n")
        return 1
    loop.add_signal_handler(signal.SIGTERM, server.request_stop)
    host, port = server.engines.advertised[server.bound[0][0].name]
    ready = {"ok": True, "bootstrap_servers": f"{host}:{port}", "pid": os.getpid(),
             "metrics_url": metrics_url(server), "schema_registry_url": server.schema_registry_url}
    conn.sendall(json.dumps(ready).encode() + b"\n")

    tune_collector()  # the process is this broker's alone, as `kipper broker`'s

    kept = []  # the control socket's writer: the socket must outlive the broker's stop

    async def control() -> None:
        reader, writer = await asyncio.open_connection(sock=conn)
        kept.append(writer)
        await Control(server, plan).serve(reader, writer)
    try:
        loop.run_until_complete(control())
    finally:
        loop.run_until_complete(server.stop())
    # the socket closes with the process: its end tells the test that the ports are free
    return 0


def read_request(conn: socket.socket) -> dict:
    """The first line on a fresh control socket: what broker the test asks for."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the control socket closed before the request")
        data += chunk
    return json.loads(data)


def _log_to(path: str | None) -> None:
    """stdout and stderr into the test's log file for this broker (or nowhere)."""
    fd = os.open(path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
