"""What every ``kipper`` tool shares: help that shows each option's default,
errors that name what they are about, and Kafka's tools' exit codes (a usage
error 2, a runtime error 1; the message goes to stderr, never a traceback)."""

from __future__ import annotations

import argparse

from kipper.cli.help import HelpFormatter, add_command  # noqa: F401  (public here too)
from kipper.client import connect as client_connect


class UsageError(Exception):
    """The command line asks for something impossible: exit 2."""


class ToolError(Exception):
    """The broker said no, or could not be reached: exit 1. The message names the
    topic, group or resource it is about."""


def add_bootstrap(p: argparse.ArgumentParser, *, command_config: bool = False) -> None:
    """--bootstrap-server, and for the admin tools (which talk through ``connect``)
    --command-config, as Kafka's admin scripts take it."""
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                   help="the broker(s) to connect to")
    if command_config:
        p.add_argument("--command-config", metavar="FILE",
                       help="client settings for this tool (security.protocol, sasl.*, ssl.*), Kafka style")


def key_values(items, option: str) -> dict[str, str]:
    """KEY=VALUE items (repeated options, or comma-separated in one)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} '{item}' is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def connect(bootstrap: str, command_config: str | None = None, *, timeout: float = 30.0):
    """A connection to the first reachable bootstrap server, with the TLS and SASL the
    command config asks for; a ToolError naming the servers when none answers (at once on
    a closed port)."""
    try:
        settings = client_connect.client_settings(command_config)
    except OSError as exc:
        raise UsageError(f"--command-config: {exc.strerror}: {command_config}") from None
    try:
        return client_connect.connect(bootstrap, settings, timeout=timeout)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except ConnectionError as exc:
        raise ToolError(str(exc)) from None


def check_reachable(bootstrap: str) -> None:
    """Fail fast, with the real cause, before a producer would wait max.block.ms."""
    connect(bootstrap, timeout=5.0).close()


def split_config(text: str) -> list[str]:
    """Split on commas outside [...], as kafka-configs.sh does."""
    out, depth, cur = [], 0, ""
    for c in text:
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (c == "[") - (c == "]")
        cur += c
    out.append(cur)
    return [s.strip() for s in out if s.strip()]
