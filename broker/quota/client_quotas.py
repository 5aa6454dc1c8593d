"""Client quota values (AlterClientQuotas / DescribeClientQuotas), kept in
``config.dir/quotas.json`` so they survive a restart.

Values are kept per entity (broker/quota/entities.py): user, client-id and
(user, client-id), named or default. ``apply`` takes changes that were checked
already; the handler writes nothing when ``validate_only`` is set. The file's
version 1 (user entities only, before the byte rates) is still read. In a cluster the quotas
are the metadata log's (no file): the controller's changes go through ``writer``.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from kipper.broker.quota.entities import PRODUCER_IDS_RATE, USER, Entity, entity_of, matches
from kipper.broker.security.config_store import StoreFile

log = structlog.get_logger(__name__)

FILE_NAME = "quotas.json"
DEFAULT = None  # a default entity's name

Quotas = dict  # Entity -> {key: value}


@dataclass
class Op:
    key: str
    value: float
    remove: bool


class ClientQuotaStore:
    def __init__(self, directory: str | None = None, on_change=None):
        self.file = StoreFile(directory, FILE_NAME) if directory else None
        self.on_change = on_change or (lambda quotas: None)
        # a cluster's controller: changes become metadata records (``writer.quotas(old, new)``)
        # and come back through ``adopt``, as on every node of the cluster
        self.writer = None
        self.quotas: Quotas = self._load() if self.file else {}
        self.on_change(self.quotas)

    def apply(self, changes: list[tuple[Entity, list[Op]]]) -> None:
        """Set or remove values; ``changes`` were checked already."""
        def edit(quotas: Quotas) -> None:
            for entity, ops in changes:
                values = quotas.setdefault(entity, {})
                for op in ops:
                    if op.remove:
                        values.pop(op.key, None)
                    else:
                        values[op.key] = float(op.value)
                if not values:
                    quotas.pop(entity, None)

        if self.writer is not None:
            quotas = {entity: dict(values) for entity, values in self.quotas.items()}
            edit(quotas)
            self.writer.quotas(self.quotas, quotas)
            return
        if self.file is None:
            edit(self.quotas)
        else:
            with self.file.locked():
                quotas = self._load()
                edit(quotas)
                self.file.write(_to_json(quotas))
                self.quotas = quotas
        self.on_change(self.quotas)

    def adopt(self, quotas: Quotas) -> None:
        """A cluster's node: the quotas are the metadata log's (broker/cluster/security_records.py)."""
        self.quotas = quotas
        self.on_change(quotas)

    def describe(self, exact: dict, specified: set, strict: bool) -> list[tuple[Entity, dict]]:
        out = [(entity, dict(values)) for entity, values in self.quotas.items()
               if matches(entity, exact, specified, strict)]
        return sorted(out, key=lambda e: [(t, n is not None, n or "") for t, n in e[0]])

    def maybe_reload(self) -> bool:
        if self.file is None or not self.file.changed():
            return False
        try:
            self.quotas = self._load()
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.error("quota_store_unreadable", path=str(self.file.path), error=str(exc))
            return False
        log.info("quota_store_reloaded", entities=len(self.quotas))
        self.on_change(self.quotas)
        return True

    def _load(self) -> Quotas:
        data = self.file.read()
        quotas: Quotas = {}
        for name, values in data.get("users", {}).items():  # version 1
            quotas[((USER, name),)] = {k: float(v) for k, v in values.items()}
        if data.get("default_user"):
            quotas[((USER, DEFAULT),)] = {k: float(v) for k, v in data["default_user"].items()}
        for item in data.get("entities", []):  # version 2
            quotas[entity_of(item["entity"].items())] = {k: float(v) for k, v in item["values"].items()}
        return quotas


def producer_id_rates(quotas: Quotas) -> tuple[dict[str, float], float | None]:
    """(producer_ids_rate per named user, the default user's or None)."""
    per_user, default = {}, None
    for entity, values in quotas.items():
        if len(entity) == 1 and entity[0][0] == USER and PRODUCER_IDS_RATE in values:
            if entity[0][1] is None:
                default = values[PRODUCER_IDS_RATE]
            else:
                per_user[entity[0][1]] = values[PRODUCER_IDS_RATE]
    return per_user, default


def _to_json(quotas: Quotas) -> dict:
    return {"version": 2, "entities": [{"entity": dict(entity), "values": values}
                                       for entity, values in quotas.items() if values]}
