"""The broker's command: ``kipper broker`` and ``python -m kipper.broker``.

Two options (a properties file, repeatable overrides); the config is loaded from
them and the ``KIPPER_*`` environment, logging is set up, and the server runs
until SIGTERM or SIGINT. The command (kipper/cli/) adds these options to its own
``broker`` subcommand; this module imports nothing of kipper/, and nothing of the
broker until it runs (a broker's start is timed: docs/PERFORMANCE.md).
Errors the user can fix print one line and exit 2 (configuration) or 1 (cannot start).
"""

from __future__ import annotations

import argparse
import os
import sys

DESCRIPTION = ("Run a kipper broker. Settings use Kafka's property names; logs go to stderr. "
               "Stop it with Ctrl-C or SIGTERM.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE.properties", help="broker properties file")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="set a property, repeatable; wins over the file and KIPPER_* variables")


def run(args) -> int:
    from kipper.broker import config as cfg
    from kipper.broker import logging_setup
    from kipper.broker.server import run as serve
    from kipper.broker.storage.files import StorageError

    try:
        config = cfg.load(args.config, cfg.parse_overrides(args.override), os.environ)
    except cfg.ConfigError as exc:
        print(f"kipper broker: configuration error: {exc}", file=sys.stderr)
        return 2
    logging_setup.configure(config["log.level"], config["log.format"])
    try:
        serve(config)
    except StorageError as exc:
        print(f"kipper broker: cannot start: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"kipper broker: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a setting only the engines can check (authorizer.class.name)
        print(f"kipper broker: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kipper.broker", description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
