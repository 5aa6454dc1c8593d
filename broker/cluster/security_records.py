"""ACLs, SCRAM credentials and client quotas as a cluster's metadata log holds them.

Kafka's controller writes them as records (AccessControlEntryRecord and its removal by id,
UserScramCredentialRecord and its removal, ClientQuotaRecord) and every node replays them into
its authorizer, credential store and quota managers. ``SecurityImage`` is that part of the
image; ``LogWriter`` is what the controller's stores call instead of saving a file: the
handlers check a change against the store as on one node, the store computes the new state,
and the writer commits the difference as records; ``follow`` hands the image's state to a
node's stores, on the controller after each commit and on a broker after each batch it applies.
``seed`` writes a new cluster's first users, ACLs and quotas from the controller's config.dir
(what `kipper users` and a one-node broker keep there), as Kafka's `kafka-storage format
--add-scram` writes bootstrap records.
"""

from __future__ import annotations

import uuid

from kipper.broker.acl.model import AclBinding
from kipper.broker.security.scram import ScramCredential
from kipper.broker.quota.entities import entity_of
from kipper.protocol.sasl import MECHANISM_CODES, MECHANISM_NAMES

ACL, SCRAM, QUOTA = "acl", "scram", "quota"  # the kinds of the image's changes
SECURITY_KINDS = (ACL, SCRAM, QUOTA)


class SecurityImage:
    def __init__(self):
        self.acls: dict[uuid.UUID, AclBinding] = {}
        self.acl_ids: dict[AclBinding, uuid.UUID] = {}
        self.credentials: dict[str, dict[str, ScramCredential]] = {}  # user -> mechanism -> credential
        self.quotas: dict[tuple, dict[str, float]] = {}  # entity -> key -> value

    # --- replay (ClusterImage hands these records here) --------------------------------------

    def acl(self, r) -> str:
        binding = AclBinding(r.resource_type, r.resource_name, r.pattern_type, r.principal, r.host,
                             r.operation, r.permission_type)
        self.acls[r.id] = binding
        self.acl_ids[binding] = r.id
        return ACL

    def remove_acl(self, r) -> str | None:
        binding = self.acls.pop(r.id, None)
        if binding is None:
            return None
        self.acl_ids.pop(binding, None)
        return ACL

    def credential(self, r) -> str | None:
        mechanism = MECHANISM_NAMES.get(r.mechanism)
        if mechanism is None:
            return None
        self.credentials.setdefault(r.name, {})[mechanism] = ScramCredential(
            bytes(r.salt), bytes(r.stored_key), bytes(r.server_key), r.iterations)
        return SCRAM

    def remove_credential(self, r) -> str | None:
        mechanisms = self.credentials.get(r.name, {})
        if mechanisms.pop(MECHANISM_NAMES.get(r.mechanism), None) is None:
            return None
        if not mechanisms:
            del self.credentials[r.name]
        return SCRAM

    def quota(self, r) -> str:
        entity = entity_of((e.entity_type, e.entity_name) for e in r.entity)
        values = self.quotas.setdefault(entity, {})
        if r.remove:
            values.pop(r.key, None)
        else:
            values[r.key] = r.value
        if not values:
            del self.quotas[entity]
        return QUOTA


class LogWriter:
    """The controller's stores save through this: ``commit(records)`` appends and replays."""

    def __init__(self, image: SecurityImage, commit):
        self.image = image
        self.commit = commit

    def acls(self, old, new) -> None:
        gone = [("RemoveAccessControlEntryRecord", {"id": self.image.acl_ids[a]})
                for a in sorted(set(old) - set(new)) if a in self.image.acl_ids]
        added = [("AccessControlEntryRecord", {
            "id": uuid.uuid4(), "resource_type": a.resource_type, "resource_name": a.name,
            "pattern_type": a.pattern_type, "principal": a.principal, "host": a.host,
            "operation": a.operation, "permission_type": a.permission})
            for a in sorted(set(new) - set(old))]
        self.commit(gone + added)

    def credentials(self, old: dict, new: dict) -> None:
        records = []
        for user in sorted(set(old) | set(new)):
            before, after = old.get(user, {}), new.get(user, {})
            for mechanism in sorted(set(before) | set(after)):
                cred = after.get(mechanism)
                if cred is None:
                    records.append(("RemoveUserScramCredentialRecord",
                                    {"name": user, "mechanism": MECHANISM_CODES[mechanism]}))
                elif cred != before.get(mechanism):
                    records.append(("UserScramCredentialRecord", {
                        "name": user, "mechanism": MECHANISM_CODES[mechanism], "salt": cred.salt,
                        "stored_key": cred.stored_key, "server_key": cred.server_key,
                        "iterations": cred.iterations}))
        self.commit(records)

    def quotas(self, old: dict, new: dict) -> None:
        records = []
        for entity in sorted(set(old) | set(new), key=_entity_order):
            before, after = old.get(entity, {}), new.get(entity, {})
            data = [{"entity_type": t, "entity_name": n} for t, n in entity]
            for key in sorted(set(before) | set(after)):
                if key not in after:
                    records.append(("ClientQuotaRecord", {"entity": data, "key": key, "value": 0.0,
                                                          "remove": True}))
                elif after[key] != before.get(key):
                    records.append(("ClientQuotaRecord", {"entity": data, "key": key,
                                                          "value": float(after[key]), "remove": False}))
        self.commit(records)


def _entity_order(entity) -> list:
    return [(t, n is not None, n or "") for t, n in entity]


def follow(image: SecurityImage, acls, security, quotas, kinds=SECURITY_KINDS) -> None:
    """A node's stores take the image's ACLs, credentials and quotas (the ``kinds`` that changed)."""
    if ACL in kinds:
        acls.adopt(image.acls.values())
    if SCRAM in kinds:
        security.credentials.adopt({u: dict(m) for u, m in image.credentials.items()})
    if QUOTA in kinds:
        quotas.store.adopt({e: dict(v) for e, v in image.quotas.items()})


def seed(writer: LogWriter, config, config_dir: str) -> None:
    """The controller's config.dir files (users.json, acls.json, quotas.json) as a new cluster's
    first records; read once, when the metadata log is created, and never written."""
    from kipper.broker.acl.service import Acls
    from kipper.broker.quota.client_quotas import ClientQuotaStore
    from kipper.broker.security.credentials import CredentialStore

    writer.credentials({}, CredentialStore(config_dir).users)
    writer.acls([], Acls(config, config_dir).bindings())
    writer.quotas({}, ClientQuotaStore(config_dir, on_change=lambda quotas: None).quotas)
