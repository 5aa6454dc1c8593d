"""Envelope on the controller (KIP-590): a client's request a broker forwarded, answered as
the client's own.

The broker that sends it must be allowed CLUSTER_ACTION on the cluster (Kafka's check of the
forwarding broker's principal); the request inside is then handled by the controller's own
handler with the client's principal and address, so that the controller's authorizer decides
for the client, and its answer goes back inside the EnvelopeResponse. Only the APIs brokers
envelope are taken (Kafka's forwardable APIs that kipper forwards this way); anything else is
INVALID_REQUEST, a principal that cannot be read PRINCIPAL_DESERIALIZATION_FAILURE.
"""

from __future__ import annotations

import ipaddress
import struct

from kipper.broker.acl.model import CLUSTER, CLUSTER_ACTION, CLUSTER_NAME
from kipper.broker.context import RequestContext, Session
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import encode_response, read_client_id
from kipper.protocol.messages import APIS
from kipper.protocol.messages.envelope import decode_principal

# what brokers forward inside an Envelope (broker/handlers/forward.py): CreateTopics, DeleteTopics,
# CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders, the reassignments,
# CreateAcls, DeleteAcls, AlterClientQuotas, AlterUserScramCredentials
ENVELOPED_APIS = frozenset({19, 20, 37, 33, 44, 43, 45, 46, 30, 31, 49, 51})


def _refused(code: ErrorCode) -> dict:
    return {"response_data": None, "error_code": int(code)}


def enveloped(handlers: dict):
    """The Envelope handler over the controller's handler table."""
    def handle_envelope(req, ctx):
        if not ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME):
            return _refused(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        try:
            principal = decode_principal(req.request_principal or b"")
            host = str(ipaddress.ip_address(bytes(req.client_host_address)))
        except ValueError:
            return _refused(ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE)
        frame = bytes(req.request_data)
        try:
            api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
            api = APIS[api_key]
            if api_key not in ENVELOPED_APIS or not api.supports(version):
                return _refused(ErrorCode.INVALID_REQUEST)
            client_id, pos = read_client_id(frame, api.is_flexible(version))
            body = api.parse_request(frame, pos, version)
        except Exception:  # noqa: BLE001  (construct/struct errors: the inner request is malformed)
            return _refused(ErrorCode.INVALID_REQUEST)
        session = Session(ctx.session.listener, f"{host}:0", security_protocol=ctx.session.security_protocol,
                          principal=principal)
        answer = handlers[api_key](body, RequestContext(ctx.engines, session, api_key, version, correlation_id,
                                                        client_id))
        if hasattr(answer, "__await__"):
            return _wrap_later(api, version, correlation_id, answer)
        return _wrapped(api, version, correlation_id, answer)
    return handle_envelope


def _wrapped(api, version: int, correlation_id: int, answer) -> dict:
    frame = encode_response(api, version, correlation_id, answer)
    return {"response_data": bytes(frame[4:]), "error_code": 0}  # (without its size)


async def _wrap_later(api, version: int, correlation_id: int, answer):
    return _wrapped(api, version, correlation_id, await answer)
