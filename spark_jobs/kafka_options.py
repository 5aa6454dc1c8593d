"""How the jobs take Kafka client settings: ``--command-config FILE`` (a Java
properties file, as Kafka's tools take it: security.protocol, sasl.mechanism,
sasl.jaas.config, ssl.*) and ``--kafka-option kafka.KEY=VALUE`` (Spark's Kafka
connector options, as a PySpark job passes them to ``.option``). The connector gets
every setting with the ``kafka.`` prefix; kipper's own clients (the driver's admin
connection) get them without it, with the user and password read out of
sasl.jaas.config (client/connect.py)."""

from __future__ import annotations

import argparse
import re

from kipper.spark_jobs.common import JobError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--command-config", metavar="FILE.properties",
                   help="Kafka client properties (security.protocol, sasl.mechanism, sasl.jaas.config, ...)")
    p.add_argument("--kafka-option", action="append", default=[], metavar="kafka.KEY=VALUE",
                   help="an option for Spark's Kafka connector (repeatable), e.g. "
                        "kafka.security.protocol=SASL_PLAINTEXT")


def client_properties(args) -> dict[str, str]:
    """Kafka client properties without the prefix: the file's, then --kafka-option's."""
    from kipper.protocol.properties import PropertiesError, read_properties

    try:
        props = dict(read_properties(args.command_config)) if args.command_config else {}
    except (OSError, ValueError, PropertiesError) as exc:
        raise JobError(f"--command-config: {exc}", 2) from None
    for item in args.kafka_option:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("kafka.") or len(key) == len("kafka."):
            raise JobError(f"--kafka-option {item!r}: expected kafka.KEY=VALUE", 2)
        props[key[len("kafka."):]] = value
    return props


def connector_options(args) -> dict[str, str]:
    """The connector's options: every client property as ``kafka.<key>``."""
    return {f"kafka.{k}": v for k, v in client_properties(args).items()}


def admin_settings(args) -> dict[str, str]:
    """For client/connect.py: the same properties, with sasl.username and sasl.password
    taken from sasl.jaas.config when they are not given."""
    props = client_properties(args)
    for key in ("username", "password"):
        m = re.search(rf'{key}\s*=\s*"((?:[^"\\]|\\.)*)"', props.get("sasl.jaas.config", ""))
        if m:
            props.setdefault(f"sasl.{key}", m.group(1).replace('\\"', '"'))
    return props


def is_plaintext(props: dict[str, str]) -> bool:
    return props.get("security.protocol", "PLAINTEXT").upper() == "PLAINTEXT"
