"""``kipper <subcommand>``: argument parsing and dispatch only.

Errors the user can fix (bad config, unreachable broker, a Kafka error code)
print one readable line and exit non-zero; they never end in a traceback.
``kipper broker`` parses its own arguments without importing the tools or the
client: a broker's start is timed (docs/PERFORMANCE.md), the tools are not.
"""

from __future__ import annotations

import argparse
import os
import sys


def _broker_parser(sub) -> None:
    p = sub.add_parser("broker", help="run a broker",
                       description="Run a kipper broker. Settings use Kafka's property names.")
    p.add_argument("--config", metavar="FILE.properties", help="broker properties file")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="set a property, repeatable; wins over the file")
    p.set_defaults(func=_run_broker)


def _run_broker(args) -> int:
    from kipper.broker import config as cfg
    from kipper.broker import logs
    from kipper.broker.server import run
    from kipper.broker.storage.files import StorageError

    try:
        config = cfg.load(args.config, cfg.parse_overrides(args.override), os.environ)
    except cfg.ConfigError as exc:
        print(f"kipper broker: configuration error: {exc}", file=sys.stderr)
        return 2
    logs.configure(config["log.level"], config["log.format"])
    try:
        run(config)
    except StorageError as exc:
        print(f"kipper broker: cannot start: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"kipper broker: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    from kipper.cli import console, perf, topics
    from kipper.cli import groups, share_consume
    from kipper.cli import acls, configs, users
    from kipper.cli import stats

    parser = argparse.ArgumentParser(prog="kipper", description="A Kafka-compatible broker and producer in Python.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _broker_parser(sub)
    topics.add_parser(sub)
    perf.add_parser(sub)
    console.add_parsers(sub)
    share_consume.add_parser(sub)
    groups.add_parser(sub)
    users.add_parser(sub)
    configs.add_parser(sub)
    acls.add_parser(sub)
    stats.add_parser(sub)
    return parser


def _broker_only_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kipper", description="A Kafka-compatible broker and producer in Python.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _broker_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _broker_only_parser() if argv[:1] == ["broker"] else build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        return _report(args.command, exc)


def _report(command: str, exc: Exception) -> int:
    """One readable line for an error the user can fix; anything else is a bug."""
    from kipper.client.config import ConfigError
    from kipper.protocol.errors import KafkaError

    if isinstance(exc, ConfigError):
        print(f"kipper {command}: configuration error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, (KafkaError, ConnectionError, OSError, ValueError)):
        print(f"kipper {command}: {exc}", file=sys.stderr)
        return 1
    raise exc
