"""SCRAM credentials per user, in memory with ``config.dir/users.json`` behind.

A user has one ``ScramCredential`` per SCRAM mechanism (salt, stored key,
server key, iterations; never the password). PLAIN is checked against the
strongest credential the user has. Changes go through ``change()``, which
re-reads the file under the store lock, applies the edit and writes it back,
so the broker and ``kipper users`` can edit the same directory. In a cluster the
credentials are the metadata log's (no file): the controller's changes go through ``writer``.
"""

from __future__ import annotations

import secrets
from typing import Callable

import structlog

from kipper.broker.security.config_store import StoreFile
from kipper.broker.security.scram import ScramCredential
from kipper.protocol.sasl import DEFAULT_ITERATIONS, MECHANISM_CODES

log = structlog.get_logger(__name__)

FILE_NAME = "users.json"
# PLAIN checks the strongest credential a user has
PLAIN_PREFERENCE = ("SCRAM-SHA-512", "SCRAM-SHA-256")

Users = dict[str, dict[str, ScramCredential]]


def valid_username(name: str) -> bool:
    return bool(name) and len(name) <= 255 and not any(c in name for c in "\x00\n\r")


class CredentialStore:
    def __init__(self, directory: str | None = None):
        self.file = StoreFile(directory, FILE_NAME) if directory else None
        self.users: Users = {}
        self.secret = secrets.token_bytes(32)  # keys made-up salts of unknown users
        self._dummy: ScramCredential | None = None  # made at the first unknown user (a PBKDF2: 3 ms)
        # a cluster's controller: changes become metadata records (``writer.credentials(old,
        # new)``), and come back through ``adopt`` as on every node of the cluster
        self.writer = None
        if self.file is not None:
            self.users = self._load()

    # --- reading -------------------------------------------------------------------

    def lookup(self, user: str, mechanism: str) -> ScramCredential | None:
        return self.users.get(user, {}).get(mechanism)

    def verify_password(self, user: str, password: str) -> bool:
        creds = self.users.get(user, {})
        for mechanism in PLAIN_PREFERENCE:
            if mechanism in creds:
                return creds[mechanism].verify_password(mechanism, password)
        if self._dummy is None:
            self._dummy = ScramCredential.from_password("SCRAM-SHA-512", secrets.token_hex(16))
        self._dummy.verify_password("SCRAM-SHA-512", password)  # same work for unknown users
        return False

    def describe(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations."""
        return {u: {m: c.iterations for m, c in creds.items()} for u, creds in sorted(self.users.items())}

    # --- changing ------------------------------------------------------------------

    def change(self, edit: Callable[[Users], object]):
        """Apply ``edit(users)`` (it mutates the dict and returns a result)
        to the latest stored state and persist it."""
        if self.writer is not None:
            users = {u: dict(creds) for u, creds in self.users.items()}
            result = edit(users)
            self.writer.credentials(self.users, users)
            return result
        if self.file is None:
            return edit(self.users)
        with self.file.locked():
            users = self._load()
            result = edit(users)
            self.file.write(_to_json(users))
            self.users = users
        return result

    def add_user(self, user: str, password: str, mechanisms=tuple(MECHANISM_CODES),
                 iterations: int = DEFAULT_ITERATIONS) -> None:
        creds = {m: ScramCredential.from_password(m, password, iterations) for m in mechanisms}
        self.change(lambda users: users.setdefault(user, {}).update(creds))

    def delete_user(self, user: str) -> bool:
        return self.change(lambda users: users.pop(user, None) is not None)

    def adopt(self, users: Users) -> None:
        """A cluster's node: the credentials are the metadata log's (broker/cluster/security_records.py)."""
        self.users = users

    def maybe_reload(self) -> bool:
        if self.file is None or not self.file.changed():
            return False
        try:
            self.users = self._load()
        except (OSError, ValueError, KeyError) as exc:
            log.error("credential_store_unreadable", path=str(self.file.path), error=str(exc))
            return False
        log.info("credential_store_reloaded", users=len(self.users))
        return True

    def _load(self) -> Users:
        data = self.file.read()
        users: Users = {}
        for name, creds in data.get("users", {}).items():
            users[name] = {m: ScramCredential.from_json(c) for m, c in creds.items()
                           if m in MECHANISM_CODES}
        return users


def _to_json(users: Users) -> dict:
    return {"version": 1, "users": {u: {m: c.to_json() for m, c in creds.items()}
                                    for u, creds in users.items() if creds}}
