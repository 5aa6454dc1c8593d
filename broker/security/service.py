"""Authentication wired into one broker: credential store, new sessions, counters.

``Security(config, config_dir)`` loads the credential store from config.dir. The shell calls
``prepare_session`` for every new connection: on SASL listeners the session
starts unauthenticated with its own SaslAuthenticator; on SSL listeners a
verified client certificate names the principal; otherwise it is
User:ANONYMOUS. ``may_manage`` says who may alter and describe quotas and
credentials (super.users, or everyone when that list is empty).
"""

from __future__ import annotations

import structlog

from kipper.broker.security.authenticator import SaslAuthenticator
from kipper.broker.security.credentials import CredentialStore
from kipper.broker.security.tls import principal_from_cert

log = structlog.get_logger(__name__)

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
PRE_AUTH_APIS = frozenset({17, 18, 36})  # SaslHandshake, ApiVersions, SaslAuthenticate


class Security:
    def __init__(self, config, config_dir: str | None = None):
        """``config_dir``: where users.json lives (config.dir, or the first log dir; None in
        memory, as on a cluster's node, whose credentials are the metadata log's)."""
        self.config = config
        self.credentials = CredentialStore(config_dir)
        self.mechanisms = config["sasl.enabled.mechanisms"]
        self.super_users = frozenset(s.strip() for s in config["super.users"].split(";") if s.strip())
        self.counters = {"authenticated": 0, "failed": 0}

    def prepare_session(self, session, transport) -> None:
        if session.security_protocol in SASL_PROTOCOLS:
            session.authenticated = False
            session.sasl = SaslAuthenticator(self.mechanisms, self.credentials)
        elif session.security_protocol == "SSL" and transport is not None:
            ssl_object = transport.get_extra_info("ssl_object")
            cert = ssl_object.getpeercert() if ssl_object is not None else None
            session.principal = principal_from_cert(cert) or session.principal

    def describe_credentials(self) -> dict[str, dict[str, int]]:
        """user -> {SCRAM mechanism: iterations} (DescribeUserScramCredentials)."""
        return self.credentials.describe()

    def change_credentials(self, edit) -> None:
        """Apply ``edit(users)`` to the stored credentials and save them (users.json)."""
        self.credentials.change(edit)

    def login_succeeded(self) -> None:
        self.counters["authenticated"] += 1

    def login_failed(self) -> None:
        self.counters["failed"] += 1

    def may_manage(self, principal: str) -> bool:
        return not self.super_users or principal in self.super_users

    def reload(self) -> None:
        self.credentials.maybe_reload()

    def snapshot(self) -> dict:
        return {"authentications": dict(self.counters), "scram_users": len(self.credentials.users),
                "mechanisms": list(self.mechanisms)}
