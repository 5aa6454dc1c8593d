"""``kipper <subcommand>``: argument parsing and dispatch only.

Errors the user can fix print one readable line on stderr, naming the topic or
group they are about, and never end in a traceback. Exit codes are Kafka's
tools': 0 done, 1 a runtime error (the broker said no or cannot be reached),
2 a usage error (bad options, bad configuration), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys

from kipper.cli.common import HelpFormatter, ToolError, UsageError, add_command
from kipper.client.config import ConfigError
from kipper.protocol.errors import KafkaError


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("kipper")
    except metadata.PackageNotFoundError:
        return "unknown"


def _broker_parser(sub) -> None:
    p = add_command(sub, "broker", "run a broker",
                    "Run a kipper broker. Settings use Kafka's property names; logs go to stderr. "
                    "Stop it with Ctrl-C or SIGTERM.")
    p.add_argument("--config", metavar="FILE.properties", help="broker properties file")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="set a property, repeatable; wins over the file and KIPPER_* variables")
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

    parser = argparse.ArgumentParser(prog="kipper", formatter_class=HelpFormatter,
                                     description="A Kafka-compatible broker and producer in Python.")
    parser.add_argument("--version", action="version", version=f"kipper {version()}")
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except ConfigError as exc:
        print(f"kipper {args.command}: configuration error: {exc}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"kipper {args.command}: {exc} (see kipper {args.command} --help)", file=sys.stderr)
        return 2
    except ToolError as exc:
        print(f"kipper {args.command}: {exc}", file=sys.stderr)
        return 1
    except KafkaError as exc:
        print(f"kipper {args.command}: {exc}", file=sys.stderr)
        return 1
    except (ConnectionError, OSError, ValueError) as exc:
        print(f"kipper {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
