"""``kipper <subcommand>``: argument parsing and dispatch only.

Errors the user can fix print one readable line on stderr, naming the topic or
group they are about, and never end in a traceback. Exit codes are Kafka's
tools': 0 done, 1 a runtime error (the broker said no or cannot be reached),
2 a usage error (bad options, bad configuration), 130 interrupted.
``kipper broker`` parses its own arguments without importing the tools or the
client: a broker's start is timed (docs/PERFORMANCE.md), the tools are not.
"""

from __future__ import annotations

import argparse
import sys

from kipper.cli.help import HelpFormatter, add_command

DESCRIPTION = "A Kafka-compatible broker and producer in Python."


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("kipper")
    except metadata.PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for: finding the installed distribution
    took 2.6 ms of every ``kipper broker`` start."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"kipper {version()}")
        parser.exit()


def _broker_parser(sub) -> None:
    from kipper.broker import main as broker_main  # argparse only: nothing of the broker yet

    p = add_command(sub, "broker", "run a broker", broker_main.DESCRIPTION)
    broker_main.add_arguments(p)
    p.set_defaults(func=broker_main.run)


def _top_parser() -> tuple[argparse.ArgumentParser, object]:
    parser = argparse.ArgumentParser(prog="kipper", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _broker_parser(sub)
    return parser, sub


def build_parser() -> argparse.ArgumentParser:
    from kipper.cli import console, perf, topics
    from kipper.cli import groups, share_consume
    from kipper.cli import acls, configs, users
    from kipper.cli import schemas, stats
    from kipper.cli import cluster

    parser, sub = _top_parser()
    topics.add_parser(sub)
    perf.add_parser(sub)
    console.add_parsers(sub)
    share_consume.add_parser(sub)
    groups.add_parser(sub)
    users.add_parser(sub)
    configs.add_parser(sub)
    acls.add_parser(sub)
    stats.add_parser(sub)
    schemas.add_parser(sub)
    cluster.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _top_parser()[0] if argv[:1] == ["broker"] else build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        return _report(args.command, exc)


def _report(command: str, exc: Exception) -> int:
    """One readable line for an error the user can fix; anything else is a bug."""
    from kipper.cli.common import ToolError, UsageError
    from kipper.client.config import ConfigError
    from kipper.protocol.errors import KafkaError

    if isinstance(exc, ConfigError):
        print(f"kipper {command}: configuration error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, UsageError):
        print(f"kipper {command}: {exc} (see kipper {command} --help)", file=sys.stderr)
        return 2
    if isinstance(exc, (ToolError, KafkaError, ConnectionError, OSError, ValueError)):
        print(f"kipper {command}: {exc}", file=sys.stderr)
        return 1
    raise exc
