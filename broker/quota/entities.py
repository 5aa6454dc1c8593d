"""Client-quota entities and their keys, checked as Kafka's controller checks them
(ClientQuotaControlManager), and DescribeClientQuotas filters matched as Kafka's
ClientQuotasImage matches them.

An entity is a tuple of (entity type, name) pairs sorted by type; a name of None is
the type's default (``(("client-id", None), ("user", "alice"))`` is alice's default
client). Kafka's user, client-id and (user, client-id) entities take the byte rates,
request_percentage and controller_mutation_rate; kipper's own producer_ids_rate (seed
002) the user entity alone; the ip entity connection_creation_rate (kept and described,
not enforced: kipper does not limit connection rates, docs/QUOTAS.md).
"""

from __future__ import annotations

import ipaddress
import math
import socket

from kipper.protocol.errors import ErrorCode

USER, CLIENT_ID, IP = "user", "client-id", "ip"
PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE = "producer_byte_rate", "consumer_byte_rate"
REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE = "request_percentage", "controller_mutation_rate"
PRODUCER_IDS_RATE = "producer_ids_rate"  # seed 002 (KIP-936), user entity only
CONNECTION_CREATION_RATE = "connection_creation_rate"  # ip entity; an INT in Kafka's QuotaConfig
LONG_KEYS = (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE)  # ConfigDef LONG in Kafka's QuotaConfig
CLIENT_KEYS = LONG_KEYS + (REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE)

# DescribeClientQuotas match types
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = tuple  # ((type, name or None), ...) sorted by type


def entity_of(pairs) -> Entity:
    return tuple(sorted(pairs, key=lambda p: p[0]))


def user_entity(user) -> Entity:
    return ((USER, user),)


def check_entity(entity: list) -> tuple[ErrorCode, str | None, Entity | None]:
    """(error, message, entity) for one entity of an AlterClientQuotas entry."""
    if not entity:
        return ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity", None
    types = [e["entity_type"] for e in entity]
    for e in entity:
        etype, name = e["entity_type"], e["entity_name"]
        if etype not in (USER, CLIENT_ID, IP):
            return ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {etype}", None
        if name is not None and not name:
            return ErrorCode.INVALID_REQUEST, f"Empty {etype} not supported", None
    if len(set(types)) != len(types):
        return ErrorCode.INVALID_REQUEST, "an entity type appears twice", None
    if IP in types:
        if len(types) > 1:
            return (ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                    "not be combined with User or ClientId", None)
        name = entity[0]["entity_name"]
        if name is not None and not _is_ip_or_host(name):
            return ErrorCode.INVALID_REQUEST, f"{name} is not a valid IP or resolvable host.", None
    return ErrorCode.NONE, None, entity_of((e["entity_type"], e["entity_name"]) for e in entity)


def _is_ip_or_host(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(name, None)
        return True
    except (OSError, UnicodeError):
        return False


def keys_for(entity: Entity) -> tuple:
    if entity[0][0] == IP:
        return (CONNECTION_CREATION_RATE,)
    return CLIENT_KEYS + (PRODUCER_IDS_RATE,) if len(entity) == 1 and entity[0][0] == USER else CLIENT_KEYS


def check_value(entity: Entity, key: str, value: float) -> tuple[ErrorCode, str | None]:
    """Kafka's checks of a value set (a removal is never checked)."""
    if key not in keys_for(entity):
        return ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}"
    if math.isnan(value) or math.isinf(value):
        return ErrorCode.INVALID_REQUEST, f"Quota {key} must be a finite number"
    if value <= 0:
        return ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0"
    if key in LONG_KEYS and abs(value % 1.0) > 1e-6:
        return ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value."
    if key in LONG_KEYS and value > 2**63 - 1:
        return ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for a LONG."
    if key == CONNECTION_CREATION_RATE:
        if value > 2**31 - 1:
            return ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for an INT."
        if abs(value % 1.0) > 1e-6:
            return ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value."
    return ErrorCode.NONE, None


def parse_filter(components: list) -> tuple[ErrorCode, str | None, dict, set]:
    """(error, message, exact {type: name or None}, specified {type}) of a describe's
    filter, with Kafka's refusals."""
    exact, specified = {}, set()
    for c in components:
        etype, mt, match = c["entity_type"], c["match_type"], c["match"]
        if not etype:
            return ErrorCode.INVALID_REQUEST, "Invalid empty entity type.", {}, set()
        if etype in exact or etype in specified:
            return (ErrorCode.INVALID_REQUEST,
                    f"Entity type {etype} cannot appear more than once in the filter.", {}, set())
        if etype not in (USER, CLIENT_ID, IP):
            return ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {etype}", {}, set()
        if mt == MATCH_EXACT:
            if match is None:
                return (ErrorCode.INVALID_REQUEST,
                        "Request specified MATCH_TYPE_EXACT, but set match string to null.", {}, set())
            exact[etype] = match
        elif mt in (MATCH_DEFAULT, MATCH_SPECIFIED):
            if match is not None:
                kind = "MATCH_TYPE_DEFAULT" if mt == MATCH_DEFAULT else "MATCH_TYPE_SPECIFIED"
                return (ErrorCode.INVALID_REQUEST,
                        f"Request specified {kind}, but also specified a match string.", {}, set())
            if mt == MATCH_DEFAULT:
                exact[etype] = None
            else:
                specified.add(etype)
        else:
            return ErrorCode.INVALID_REQUEST, f"Unknown match type {mt}", {}, set()
    if IP in exact or IP in specified:
        if {USER, CLIENT_ID} & (set(exact) | specified):
            return (ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                    "component should not be used with user or clientId filter component.", {}, set())
    return ErrorCode.NONE, None, exact, specified


def matches(entity: Entity, exact: dict, specified: set, strict: bool) -> bool:
    """Kafka's ClientQuotasImage: every exact component names the entity's value for its
    type (None: the default), every specified type is in the entity (default or not);
    strict: the entity has no other type. No components: all entities, or none if strict."""
    names = dict(entity)
    if not exact and not specified:
        return not strict
    for etype, name in exact.items():
        if etype not in names or names[etype] != name:
            return False
    if any(etype not in names for etype in specified):
        return False
    return not strict or len(names) == len(exact) + len(specified)
