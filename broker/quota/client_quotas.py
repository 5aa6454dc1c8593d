"""Client quota values (AlterClientQuotas / DescribeClientQuotas), kept in
``config.dir/quotas.json`` so they survive a restart.

Only the user entity is supported, named or the default user (entity name
null), and only the ``producer_ids_rate`` key, the one kipper enforces: an
entity or key it would silently ignore is refused instead. ``alter`` checks
every entry first and writes nothing when ``validate_only`` is set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import structlog

from kipper.broker.quota.manager import QUOTA_KEY
from kipper.broker.security.config_store import StoreFile
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

FILE_NAME = "quotas.json"
USER = "user"
SUPPORTED_KEYS = (QUOTA_KEY,)
DEFAULT = None  # the default user: entity name null

# DescribeClientQuotas match types
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Quotas = dict  # user name or None -> {key: value}


@dataclass
class Op:
    key: str
    value: float
    remove: bool


def check_entity(entity: list) -> tuple[ErrorCode, str | None, object]:
    """(error, message, user name or DEFAULT) for one entity of a request."""
    types = [e["entity_type"] for e in entity]
    if len(set(types)) != len(types):
        return ErrorCode.INVALID_REQUEST, "an entity type appears twice", None
    if types != [USER]:
        return (ErrorCode.INVALID_REQUEST,
                f"unsupported entity {types}: kipper supports quotas for the user entity only", None)
    name = entity[0]["entity_name"]
    if name is not None and not name:
        return ErrorCode.INVALID_REQUEST, "empty user name", None
    return ErrorCode.NONE, None, name


def check_op(op: Op) -> tuple[ErrorCode, str | None]:
    if op.key not in SUPPORTED_KEYS:
        return (ErrorCode.INVALID_REQUEST,
                f"unknown quota key '{op.key}': kipper supports {', '.join(SUPPORTED_KEYS)}")
    if not op.remove and (math.isnan(op.value) or op.value <= 0 or math.isinf(op.value)):
        return ErrorCode.INVALID_REQUEST, f"{op.key} must be a positive number, got {op.value}"
    return ErrorCode.NONE, None


class ClientQuotaStore:
    def __init__(self, directory: str | None = None, on_change=None):
        self.file = StoreFile(directory, FILE_NAME) if directory else None
        self.on_change = on_change or (lambda quotas: None)
        self.quotas: Quotas = self._load() if self.file else {}
        self.on_change(self.quotas)

    def rates(self) -> tuple[dict[str, float], float | None]:
        return rates(self.quotas)

    def apply(self, changes: list[tuple[object, list[Op]]]) -> None:
        """Set or remove values; ``changes`` were checked already."""
        def edit(quotas: Quotas) -> None:
            for user, ops in changes:
                values = quotas.setdefault(user, {})
                for op in ops:
                    if op.remove:
                        values.pop(op.key, None)
                    else:
                        values[op.key] = float(op.value)
                if not values:
                    quotas.pop(user, None)

        if self.file is None:
            edit(self.quotas)
        else:
            with self.file.locked():
                quotas = self._load()
                edit(quotas)
                self.file.write(_to_json(quotas))
                self.quotas = quotas
        self.on_change(self.quotas)

    def describe(self, components: list, strict: bool) -> list[tuple[object, dict]]:
        out = []
        for user, values in self.quotas.items():
            if _matches(user, components, strict):
                out.append((user, dict(values)))
        return sorted(out, key=lambda e: (e[0] is not None, e[0] or ""))

    def maybe_reload(self) -> bool:
        if self.file is None or not self.file.changed():
            return False
        try:
            self.quotas = self._load()
        except (OSError, ValueError, TypeError) as exc:
            log.error("quota_store_unreadable", path=str(self.file.path), error=str(exc))
            return False
        log.info("quota_store_reloaded", entities=len(self.quotas))
        self.on_change(self.quotas)
        return True

    def _load(self) -> Quotas:
        data = self.file.read()
        quotas: Quotas = {}
        for name, values in data.get("users", {}).items():
            quotas[name] = {k: float(v) for k, v in values.items()}
        if data.get("default_user"):
            quotas[DEFAULT] = {k: float(v) for k, v in data["default_user"].items()}
        return quotas


def rates(quotas: Quotas) -> tuple[dict[str, float], float | None]:
    """(producer_ids_rate per named user, the default user's or None)."""
    per_user = {u: v[QUOTA_KEY] for u, v in quotas.items() if u is not None and QUOTA_KEY in v}
    return per_user, quotas.get(DEFAULT, {}).get(QUOTA_KEY)


def _matches(user, components: list, strict: bool) -> bool:
    """The entity (user,) against DescribeClientQuotas filter components."""
    for c in components:
        if c["entity_type"] != USER:
            return False
        mt = c["match_type"]
        if mt == MATCH_EXACT and user != c["match"]:
            return False
        if mt == MATCH_DEFAULT and user is not None:
            return False
        if mt == MATCH_SPECIFIED and user is None:
            return False
    return True


def _to_json(quotas: Quotas) -> dict:
    out = {"version": 1, "users": {u: v for u, v in quotas.items() if u is not None and v}}
    if quotas.get(DEFAULT):
        out["default_user"] = quotas[DEFAULT]
    return out
