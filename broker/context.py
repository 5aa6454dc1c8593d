"""What a handler sees of a request: the engines, the connection's session, the header.

``Session`` is per-connection state that outlives one request (listener, peer,
authentication). ``RequestContext`` is the per-request view handed to every
handler, with ``ctx.engines`` giving the engines (broker/composition.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kipper.broker.security.authenticator import SaslAuthenticator


@dataclass(eq=False)
class Session:
    """Per-connection state that outlives one request."""

    listener: str
    peer: str
    security_protocol: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    authenticated: bool = True
    # on a SASL listener, the login in progress or done (broker/security/service.py)
    sasl: SaslAuthenticator | None = None
    # the authorizer's decisions for this session, made at ACL version ``acl_version``
    # (broker/acl/service.py: a change of the ACLs empties them)
    acl_decisions: dict = field(default_factory=dict)
    acl_version: int = -1
    admitted_producer_ids: set = field(default_factory=set)  # producer-id quota fast path
    kept_heads: object = None  # recent Produce requests' heads (protocol/produce_codec.RepeatedHeads)
    # the connection sends file ranges with sendfile (plain TCP): Fetch then reads durable
    # segments as FileRegions (broker/storage/file_region.py), never their bytes
    zero_copy: bool = False
    # ClientSoftwareName and ClientSoftwareVersion of its ApiVersions v3+ (KIP-511), which
    # client-metrics subscriptions match on (KIP-714)
    client_software: tuple[str, str] | None = None


@dataclass(slots=True)
class RequestContext:
    engines: Any  # kipper.broker.composition's Engines
    session: Session
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None

    @property
    def now(self) -> int:
        return self.engines.clock()

    def needs_permission(self, operation: str) -> str:
        """Kafka's words for a cluster operation refused (AuthHelper.authorizeClusterOperation:
        "Request <the request> needs ALTER permission."), the request described as Kafka's
        Request prints itself, with this connection's own values."""
        s = self.session
        return (f"Request Request(processor=0, connectionId={s.peer}, session=Session({s.principal}), "
                f"listenerName=ListenerName({s.listener}), securityProtocol={s.security_protocol}, buffer=null, "
                f"envelope=Optional.empty) needs {operation} permission.")

    def authorize(self, operation: int, resource_type: int, name: str, *, counted: bool = True) -> bool:
        """May this session do ``operation`` on the resource (broker/acl/)? Always true
        without an authorizer; a refusal is counted for the request's API (``counted``: not
        where Kafka only asks, logIfDenied=false, before asking what decides)."""
        acls = self.engines.acls
        if acls.authorizer is None:
            return True
        api = _api_name(self.api_key) if counted else None
        return acls.authorize(self.session, operation, resource_type, name, api)

    def authorize_any(self, operation: int, resource_type: int) -> bool:
        """May it do ``operation`` on some resource of the type (Kafka's
        authorizeByResourceType: WRITE on any topic grants idempotence, KIP-679)?"""
        acls = self.engines.acls
        if acls.authorizer is None:
            return True
        return acls.authorize_any(self.session, operation, resource_type, _api_name(self.api_key))


    def authorized_operations(self, resource_type: int, name: str) -> int:
        """KIP-430's bit field of what this session may do on the resource: every
        operation Kafka supports on the type when there is no authorizer."""
        return self.engines.acls.authorized_operations(self.session, resource_type, name)


def _api_name(api_key: int) -> str:
    from kipper.protocol.messages import APIS

    api = APIS.get(api_key)
    return api.name if api is not None else str(api_key)
