"""``kipper configs``: like kafka-configs.sh, for topics, brokers and groups
(kipper/cli/resource_configs.py) and for user quotas and SCRAM credentials.

    kipper configs --bootstrap-server H:P --alter --add-config retention.ms=60000 \\
        --entity-type topics --entity-name t
    kipper configs --bootstrap-server H:P --describe --all --entity-type brokers --entity-name 1
    kipper configs --bootstrap-server H:P --alter --add-config log.retention.ms=3600000 \\
        --entity-type brokers --entity-default      # the cluster-wide dynamic default
    kipper configs --bootstrap-server H:P --alter --add-config consumer.session.timeout.ms=50000 \\
        --entity-type groups --entity-name g

    kipper configs --bootstrap-server H:P --alter --add-config 'producer_ids_rate=50' \\
        --entity-type users --entity-name user1          # one user
    kipper configs --bootstrap-server H:P --alter --add-config 'producer_ids_rate=200' \\
        --entity-type users                              # the default user (or --entity-default)
    kipper configs --bootstrap-server H:P --alter --delete-config producer_ids_rate ...
    kipper configs --bootstrap-server H:P --alter \\
        --add-config 'SCRAM-SHA-256=[iterations=8192,password=secret]' --entity-type users --entity-name alice
    kipper configs --bootstrap-server H:P --describe --entity-type users [--entity-name N]

``--command-config FILE`` holds the tool's own client settings, Kafka style:
security.protocol, sasl.mechanism, sasl.jaas.config (or sasl.username and
sasl.password), ssl.truststore.location (or ssl.ca.location, PEM) and
ssl.endpoint.identification.algorithm (see kipper.client.connect).
"""

from __future__ import annotations

import argparse

from kipper.cli import resource_configs
from kipper.cli.common import (  # noqa: F401 (public here too)
    HelpFormatter, UsageError, add_bootstrap, connect, split_config,
)
from kipper.client import admin
from kipper.client.admin import (
    ClientQuotaAlteration, ClientQuotaFilterComponent, ScramCredentialDeletion, ScramCredentialUpsertion,
)
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.sasl import MECHANISM_CODES, MECHANISM_NAMES

QUOTA_KEYS = ("producer_ids_rate",)


# --- the tool -------------------------------------------------------------------------------

def add_parser(sub) -> None:
    p = sub.add_parser("configs", help="alter or describe configs of topics, brokers, groups and users",
                       description=__doc__, formatter_class=HelpFormatter)
    add_bootstrap(p, command_config=True)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--alter", action="store_true", help="change configs")
    action.add_argument("--describe", action="store_true", help="show configs")
    p.add_argument("--entity-type", required=True, choices=("topics", "brokers", "groups", "users"),
                   help="what the configs belong to")
    p.add_argument("--entity-name", help="topic, broker id, group or user name (users: without it, "
                                         "the default user)")
    p.add_argument("--entity-default", action="store_true",
                   help="brokers: the cluster-wide dynamic default; users: the default user")
    p.add_argument("--all", action="store_true",
                   help="describe topics, brokers, groups: every config, not only the dynamic ones")
    p.add_argument("--add-config", default="", metavar="K=V,...",
                   help="configs to set; users: producer_ids_rate=N and/or "
                        "SCRAM-SHA-256=[iterations=N,password=P]")
    p.add_argument("--delete-config", default="", metavar="K,...",
                   help="configs to remove; users: producer_ids_rate and/or SCRAM-SHA-256, SCRAM-SHA-512")
    p.set_defaults(func=run)


def parse_add_config(text: str) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    quotas, scram = {}, {}
    for item in split_config(text):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise UsageError(f"--add-config '{item}' is not KEY=VALUE")
        if key in MECHANISM_CODES:
            inner = value.strip()
            if not (inner.startswith("[") and inner.endswith("]")):
                raise ValueError(f"{key} needs [iterations=N,password=P] or [password=P]")
            fields = dict(f.split("=", 1) for f in inner[1:-1].split(",") if "=" in f)
            if "password" not in fields:
                raise ValueError(f"{key} needs a password")
            scram[key] = fields
        elif key in QUOTA_KEYS:
            try:
                quotas[key] = float(value)
            except ValueError:
                raise ValueError(f"{key}: '{value}' is not a number") from None
        else:
            raise UsageError(f"unknown config '{key}' for users: use {', '.join(QUOTA_KEYS)} or SCRAM-SHA-*")
    return quotas, scram


def run(args: argparse.Namespace) -> int:
    user = None if args.entity_default else args.entity_name
    with connect(args.bootstrap_server, args.command_config) as conn:
        if args.entity_type != "users":
            return (resource_configs.describe if args.describe else resource_configs.alter)(conn, args)
        if args.describe:
            return _describe(conn, args)
        return _alter(conn, user, args)


def _alter(conn, user, args) -> int:
    quotas, scram = parse_add_config(args.add_config)
    deletes = split_config(args.delete_config)
    unknown = [d for d in deletes if d not in QUOTA_KEYS and d not in MECHANISM_CODES]
    if unknown:
        raise UsageError(f"unknown config(s) to delete: {', '.join(unknown)}")
    if not (quotas or scram or deletes):
        raise UsageError("--alter needs --add-config or --delete-config")
    ops = [*quotas.items(), *((k, None) for k in deletes if k in QUOTA_KEYS)]
    who = f"user-principal '{user}'" if user is not None else "the default user-principal"
    if ops:
        body = admin.alter_client_quotas(conn, [ClientQuotaAlteration({"user": user}, ops)])
        entry = body.entries[0]
        if entry.error_code:
            raise KafkaError(entry.error_code, entry.error_message or "")
    scram_deletes = [d for d in deletes if d in MECHANISM_CODES]
    if scram or scram_deletes:
        if user is None:
            raise ValueError("SCRAM credentials need --entity-name")
        # one request per change: Kafka (and kipper) refuse a user named twice in one request
        changes = [{"upsertions": [ScramCredentialUpsertion.from_password(
                        user, mech, fields["password"], int(fields.get("iterations", 4096)))]}
                   for mech, fields in scram.items()]
        changes += [{"deletions": [ScramCredentialDeletion(user, MECHANISM_CODES[m])]} for m in scram_deletes]
        for change in changes:
            body = admin.alter_user_scram_credentials(conn, **change)
            for r in body.results:
                if r.error_code:
                    raise KafkaError(r.error_code, r.error_message or "")
    print(f"Completed updating config for {who}.")
    return 0


def _describe(conn, args) -> int:
    if args.entity_default:
        components, scram_users = [ClientQuotaFilterComponent.of_default_entity("user")], []
    elif args.entity_name:
        components = [ClientQuotaFilterComponent.of_entity("user", args.entity_name)]
        scram_users = [args.entity_name]
    else:
        components, scram_users = [], None
    body = admin.describe_client_quotas(conn, components)
    for entry in body.entries or []:
        name = entry.entity[0].entity_name
        who = f"user-principal '{name}'" if name is not None else "the default user-principal"
        values = ", ".join(f"{v.key}={v.value}" for v in entry["values"])
        print(f"Quota configs for {who} are {values}")
    if scram_users == []:
        return 0
    body = admin.describe_user_scram_credentials(conn, scram_users)
    for r in body.results:
        if r.error_code == ErrorCode.RESOURCE_NOT_FOUND:
            continue
        if r.error_code:
            raise KafkaError(r.error_code, r.error_message or "")
        infos = ", ".join(f"{MECHANISM_NAMES[c.mechanism]}=iterations={c.iterations}" for c in r.credential_infos)
        print(f"SCRAM credential configs for user-principal '{r.user}' are {infos}")
    return 0
