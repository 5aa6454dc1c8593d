"""The authorizer wired into one broker: the ACLs on disk, the decisions handlers ask for.

``Acls(config, config_dir)`` is built by the composition root. With no
``authorizer.class.name`` every request is allowed (Kafka without an
authorizer) and the ACL APIs answer SECURITY_DISABLED. Otherwise the ACLs live
in ``acls.json`` in the config directory, written atomically on every change
(they survive a restart and a SIGKILL) and reloaded when another process edits
the file; a change takes effect at once on every open connection, because each
session's cache of decisions is keyed by the ACLs' version. Refusals are
counted per API for the metrics dumps. In a cluster the ACLs are the metadata log's: no file,
the controller's changes go through ``writer`` and every node ``adopt``s what the log says.
"""

from __future__ import annotations

import json
from pathlib import Path

import structlog

from kipper.broker.acl.authorizer import Authorizer
from kipper.broker.acl.model import AclBinding, AclFilter
from kipper.broker.config import AUTHORIZER_CLASS_NAMES as CLASS_NAMES
from kipper.broker.storage.files import write_atomically

log = structlog.get_logger(__name__)

FILE_NAME = "acls.json"


class AuthorizerConfigError(ValueError):
    pass


class Acls:
    def __init__(self, config, config_dir: str | None):
        name = config["authorizer.class.name"]
        if name and name not in CLASS_NAMES:
            raise AuthorizerConfigError(f"authorizer.class.name: '{name}' is not one of "
                                        f"{', '.join(CLASS_NAMES)}")
        super_users = [s.strip() for s in config["super.users"].split(";") if s.strip()]
        self.authorizer = (Authorizer(super_users=super_users,
                                      allow_everyone_if_no_acl_found=config["allow.everyone.if.no.acl.found"])
                           if name else None)
        self.path = Path(config_dir) / FILE_NAME if config_dir and name else None
        self._mtime = None
        self.denied: dict[str, int] = {}  # API name -> refusals
        # a cluster's controller: changes become metadata records (``writer.acls(old, new)``)
        # instead of acls.json, and come back through ``adopt``
        self.writer = None
        self.reload()

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    # --- decisions -------------------------------------------------------------------------------

    def authorize(self, session, operation: int, resource_type: int, name: str, api: str | None = None) -> bool:
        a = self.authorizer
        if a is None:
            return True
        decisions = self._decisions(session, a)
        key = (operation, resource_type, name)
        decision = decisions.get(key)
        if decision is None:
            decision = decisions[key] = a.authorize(session.principal, session.peer.rsplit(":", 1)[0],
                                                    operation, resource_type, name)
        if not decision and api is not None:
            self.denied[api] = self.denied.get(api, 0) + 1
        return decision

    def authorize_any(self, session, operation: int, resource_type: int, api: str | None = None) -> bool:
        a = self.authorizer
        if a is None:
            return True
        decisions = self._decisions(session, a)
        key = (operation, resource_type, None)  # None: any resource of the type (no name is None)
        ok = decisions.get(key)
        if ok is None:
            ok = decisions[key] = a.authorize_any(session.principal, session.peer.rsplit(":", 1)[0],
                                                  operation, resource_type)
        if not ok and api is not None:
            self.denied[api] = self.denied.get(api, 0) + 1
        return ok

    @staticmethod
    def _decisions(session, authorizer) -> dict:
        """The session's cached decisions, emptied whenever the ACLs change (their version)."""
        if session.acl_version != authorizer.version:
            session.acl_decisions = {}
            session.acl_version = authorizer.version
        return session.acl_decisions

    def bindings(self) -> list[AclBinding]:
        """Every ACL (DescribeAcls filters them)."""
        return self.authorizer.acls() if self.authorizer is not None else []

    def authorized_operations(self, session, resource_type: int, name: str) -> int:
        from kipper.broker.acl.model import SUPPORTED

        if self.authorizer is None:
            return sum(1 << op for op in SUPPORTED.get(resource_type, ()))
        return self.authorizer.authorized_operations(session.principal, session.peer.rsplit(":", 1)[0],
                                                     resource_type, name)

    # --- changes ---------------------------------------------------------------------------------

    def create(self, acls: list[AclBinding]) -> None:
        if self.writer is not None:
            old = self.authorizer.acls()
            self.writer.acls(old, set(old) | set(acls))
            return
        self.authorizer.add(acls)
        self._save()

    def delete(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        """Each filter's matches before any is removed; all of them removed."""
        if self.writer is not None:
            matched = self.authorizer.matches(filters)
            old = self.authorizer.acls()
            self.writer.acls(old, set(old).difference(*matched))
            return matched
        matched = self.authorizer.remove(filters)
        if any(matched):
            self._save()
        return matched

    def adopt(self, acls) -> None:
        """A cluster's node: the ACLs are the metadata log's (broker/cluster/security_records.py)."""
        if self.authorizer is not None:
            self.authorizer.replace(acls)

    def _save(self) -> None:
        if self.path is None:
            return
        data = json.dumps({"version": 1, "acls": [list(a) for a in self.authorizer.acls()]}, indent=1)
        write_atomically(self.path, data.encode())
        self._mtime = self.path.stat().st_mtime_ns

    def reload(self) -> None:
        """Read acls.json again if someone else changed it."""
        if self.path is None or not self.path.exists():
            return
        mtime = self.path.stat().st_mtime_ns
        if mtime == self._mtime:
            return
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            acls = [AclBinding(*row) for row in doc["acls"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.error("acls_unreadable", path=str(self.path), error=str(exc))
            return
        self.authorizer.replace(acls)
        self._mtime = mtime
        log.info("acls_loaded", path=str(self.path), acls=len(acls))

    def snapshot(self) -> dict:
        return {"enabled": self.enabled,
                "acls": len(self.authorizer.acls()) if self.authorizer else 0,
                "denied": dict(self.denied)}
