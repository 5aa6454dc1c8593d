"""What a test asks of its broker, the same in both modes: a thread broker runs these on
its loop through a function call, a process broker reads them as JSON lines from its
control socket. ``reset`` also clears the faults; ``report`` gives the requests seen;
``call`` runs a test's function on the engines (pickled by reference: a module-level
function, imported by the broker process under the test's own ``sys.path``)."""

from __future__ import annotations

import asyncio
import base64
import json
import pickle
import traceback

from kipper.broker.faults.plan import Fault, FaultPlan


def metrics_url(server) -> str | None:
    """``http://host:port`` of the broker's /metrics, /healthz and /readyz, if it serves them."""
    http = server.metrics_http
    if http is None:
        return None
    host = http.host if http.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
    return f"http://{host}:{http.port}"


def pack(value) -> str:
    return base64.b64encode(pickle.dumps(value)).decode()


def unpack(text: str):
    return pickle.loads(base64.b64decode(text))


class Control:
    def __init__(self, server, plan: FaultPlan):
        self.server = server
        self.plan = plan

    def handle(self, command: dict) -> dict:
        """One command's reply: ``{"ok": True, ...}`` or ``{"ok": False, "error": text}``."""
        try:
            op = command.get("op")
            if op == "reset":
                self.server.reset()
                self.plan.clear()
            elif op == "fault":
                self.plan.add(Fault.from_dict(command["fault"]))
            elif op == "clear_faults":
                self.plan.clear()
            elif op == "report":
                return {"ok": True, **self.plan.report()}
            elif op == "call":
                fn, args = unpack(command["call"])
                return {"ok": True, "result": pack(fn(self.server.engines, *args))}
            elif op not in ("ping", "stop"):
                raise ValueError(f"unknown control command {op!r}")
        except Exception as exc:  # the test's mistake (an unknown API, a bad code): told, not fatal
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                    "traceback": "".join(traceback.format_exception(exc))}
        return {"ok": True}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Commands from the control socket until ``stop``, its end, or the broker stopping."""
        stopped = asyncio.ensure_future(self.server.wait_stopped())
        try:
            while True:
                line = asyncio.ensure_future(reader.readline())
                await asyncio.wait([line, stopped], return_when=asyncio.FIRST_COMPLETED)
                if not line.done():
                    line.cancel()
                    return
                text = line.result()
                if not text:
                    return
                try:
                    command = json.loads(text)
                except ValueError:
                    command = {"op": None}
                writer.write(json.dumps(self.handle(command)).encode() + b"\n")
                await writer.drain()
                if command.get("op") == "stop":
                    return
        finally:
            stopped.cancel()
