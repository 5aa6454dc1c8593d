"""``kipper configs``: like kafka-configs.sh, for topics, brokers and groups
(kipper/cli/resource_configs.py) and for client quotas and SCRAM credentials.

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

    kipper configs --bootstrap-server H:P --alter --add-config 'producer_byte_rate=1048576' \
        --entity-type clients --entity-name app1     # a client id (--entity-default: every client id)
    kipper configs --bootstrap-server H:P --alter --add-config 'consumer_byte_rate=2097152' \
        --user alice --client app1                    # (user, client id); --user-defaults, --client-defaults
    kipper configs --bootstrap-server H:P --describe --user alice --client-defaults

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

QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate",
              "producer_ids_rate", "connection_creation_rate")


# --- the tool -------------------------------------------------------------------------------

def add_parser(sub) -> None:
    p = sub.add_parser("configs", help="alter or describe configs of topics, brokers, groups and users",
                       description=__doc__, formatter_class=HelpFormatter)
    add_bootstrap(p, command_config=True)
    action = p.add_mutually_exclusive_group(required=True)
    action.add_argument("--alter", action="store_true", help="change configs")
    action.add_argument("--describe", action="store_true", help="show configs")
    p.add_argument("--entity-type", choices=("topics", "brokers", "groups", "users", "clients", "ips"),
                   help="what the configs belong to (or --user / --client)")
    p.add_argument("--entity-name", help="topic, broker id, group, user name or client id (users, clients: "
                                         "without it, the default)")
    p.add_argument("--entity-default", action="store_true",
                   help="brokers: the cluster-wide dynamic default; users, clients: the default one")
    p.add_argument("--user", help="quotas of this user (with --client: of the user's client)")
    p.add_argument("--client", help="quotas of this client id")
    p.add_argument("--user-defaults", action="store_true", help="quotas of the default user")
    p.add_argument("--client-defaults", action="store_true", help="quotas of the default client id")
    p.add_argument("--all", action="store_true",
                   help="describe topics, brokers, groups: every config, not only the dynamic ones")
    p.add_argument("--add-config", default="", metavar="K=V,...",
                   help="configs to set; users, clients: producer_byte_rate, consumer_byte_rate, "
                        "request_percentage, controller_mutation_rate (users also producer_ids_rate and "
                        "SCRAM-SHA-256=[iterations=N,password=P])")
    p.add_argument("--delete-config", default="", metavar="K,...",
                   help="configs to remove; users, clients: quota keys; users: SCRAM-SHA-256, SCRAM-SHA-512")
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


def quota_entity(args) -> dict | None:
    """The client-quota entity the arguments name ({"user": u, "client-id": c}, a None name
    being the default), or None for topics, brokers and groups."""
    shorthand = args.user is not None or args.client is not None or args.user_defaults or args.client_defaults
    if shorthand:
        if args.entity_type is not None:
            raise UsageError("use either --entity-type or --user / --client")
        entity = {}
        if args.user is not None or args.user_defaults:
            entity["user"] = None if args.user_defaults else args.user
        if args.client is not None or args.client_defaults:
            entity["client-id"] = None if args.client_defaults else args.client
        return entity
    if args.entity_type is None:
        raise UsageError("--entity-type (or --user / --client) is required")
    if args.entity_type in ("users", "clients", "ips"):
        name = None if args.entity_default else args.entity_name
        return {{"users": "user", "clients": "client-id", "ips": "ip"}[args.entity_type]: name}
    return None


def run(args: argparse.Namespace) -> int:
    entity = quota_entity(args)
    with connect(args.bootstrap_server, args.command_config) as conn:
        if entity is None:
            return (resource_configs.describe if args.describe else resource_configs.alter)(conn, args)
        if args.describe:
            return _describe(conn, entity, args)
        return _alter(conn, entity, args)


def _who(entity: dict) -> str:
    parts = []
    for etype, label in (("user", "user-principal"), ("client-id", "client-id"), ("ip", "ip")):
        if etype in entity:
            name = entity[etype]
            parts.append(f"{label} '{name}'" if name is not None else f"the default {label}")
    return ", ".join(parts)


def _alter(conn, entity: dict, args) -> int:
    quotas, scram = parse_add_config(args.add_config)
    deletes = split_config(args.delete_config)
    unknown = [d for d in deletes if d not in QUOTA_KEYS and d not in MECHANISM_CODES]
    if unknown:
        raise UsageError(f"unknown config(s) to delete: {', '.join(unknown)}")
    if not (quotas or scram or deletes):
        raise UsageError("--alter needs --add-config or --delete-config")
    ops = [*quotas.items(), *((k, None) for k in deletes if k in QUOTA_KEYS)]
    who = _who(entity)
    user = entity.get("user")
    if ops:
        body = admin.alter_client_quotas(conn, [ClientQuotaAlteration(entity, ops)])
        entry = body.entries[0]
        if entry.error_code:
            raise KafkaError(entry.error_code, entry.error_message or "")
    scram_deletes = [d for d in deletes if d in MECHANISM_CODES]
    if scram or scram_deletes:
        if user is None or list(entity) != ["user"]:
            raise ValueError("SCRAM credentials need a user (--entity-type users --entity-name N)")
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


def _describe(conn, entity: dict, args) -> int:
    """Kafka's describe: the entities of exactly these types (strict); a type given without
    a name matches every entity of the type, its default too."""
    components = []
    for etype, name in entity.items():
        named = name is not None or (etype == "user" and args.user_defaults) or (
            etype == "client-id" and args.client_defaults) or args.entity_default
        components.append(ClientQuotaFilterComponent.of_entity(etype, name) if name is not None else
                          ClientQuotaFilterComponent.of_default_entity(etype) if named else
                          ClientQuotaFilterComponent.of_entity_type(etype))
    user = entity.get("user")
    scram_users = [user] if list(entity) == ["user"] and user is not None else (
        None if list(entity) == ["user"] and not args.entity_default and not args.user_defaults else [])
    body = admin.describe_client_quotas(conn, components, strict=True)
    for item in body.entries or []:
        values = ", ".join(f"{v.key}={v.value}" for v in item["values"])
        print(f"Quota configs for {_who({e.entity_type: e.entity_name for e in item.entity})} are {values}")
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
