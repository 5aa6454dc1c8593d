"""Who may do what: HTTP Basic authentication against the broker's users, and the broker's
ACLs for authorization.

Authentication: with ``schema.registry.authentication.method=BASIC`` (the default when the
broker has a SASL listener) every request carries a user of the broker's credential store
(the SCRAM users ``kipper users`` and AlterUserScramCredentials manage) and its password,
checked as SASL PLAIN checks it. A password is verified once (PBKDF2 is slow on purpose)
and then remembered by its HMAC until the credentials change.

Authorization, when the broker has an authorizer (``authorizer.class.name``): a subject is
guarded by the ACLs of the topic it names (``orders-value`` and ``orders-key`` by the topic
``orders``; any other subject by the topic of its own name), as Confluent's topic-ACL mode
does: reading a subject needs DESCRIBE (which READ and WRITE imply), registering and soft
deletes WRITE, permanent deletes DELETE, a subject's config or mode ALTER_CONFIGS; the global
config and mode need ALTER_CONFIGS on the cluster to change. Schemas by id, the schema types
and the global config and mode may be read by any authenticated user; the subject list shows
the subjects the user may describe. super.users may do everything.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from kipper.broker.acl import model as acl
from kipper.broker.context import Session

READ, WRITE, DELETE, CONFIGURE = "read", "write", "delete", "configure"
OPERATIONS = {READ: acl.DESCRIBE, WRITE: acl.WRITE, DELETE: acl.DELETE, CONFIGURE: acl.ALTER_CONFIGS}


def topic_of(subject: str) -> str:
    """The topic a subject belongs to under the TopicNameStrategy."""
    for suffix in ("-value", "-key"):
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject[: -len(suffix)]
    return subject


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header or not header[:6].lower() == "basic ":
        return None
    try:
        user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return (user, password) if sep else None


class Authenticator:
    """Basic auth against a CredentialStore; safe to call from the HTTP threads."""

    def __init__(self, credentials):
        self.credentials = credentials
        self._secret = secrets.token_bytes(32)
        self._verified: dict[tuple[str, bytes], object] = {}  # (user, hmac) -> users dict it held for

    def verify(self, user: str, password: str) -> bool:
        users = self.credentials.users
        key = (user, hmac.new(self._secret, password.encode(), hashlib.sha256).digest())
        if self._verified.get(key) is users:
            return True
        if self.credentials.verify_password(user, password):
            if len(self._verified) > 10_000:
                self._verified.clear()
            self._verified[key] = users
            return True
        return False


class Authorizer:
    """The ACL check of one route, on the event loop (the ACLs live there)."""

    def __init__(self, acls):
        self.acls = acls
        self._sessions: dict[tuple[str, str], Session] = {}

    @property
    def enabled(self) -> bool:
        return self.acls.enabled

    def session(self, principal: str, peer: str) -> Session:
        key = (principal, peer.rsplit(":", 1)[0])
        session = self._sessions.get(key)
        if session is None:
            if len(self._sessions) > 10_000:
                self._sessions.clear()
            session = self._sessions[key] = Session(listener="SCHEMA_REGISTRY", peer=peer, principal=principal)
        return session

    def subject(self, session: Session, action: str, subject: str) -> bool:
        return self.acls.authorize(session, OPERATIONS[action], acl.TOPIC, topic_of(subject), "SchemaRegistry")

    def cluster(self, session: Session, action: str) -> bool:
        return self.acls.authorize(session, OPERATIONS[action], acl.CLUSTER, acl.CLUSTER_NAME, "SchemaRegistry")
