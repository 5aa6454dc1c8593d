"""Envelope (API key 58): a client's request that a broker forwards to the controller, with
the client's principal and address, so that the controller authorizes the client, not the
broker (KIP-590). The principal is Kafka's DefaultPrincipalData, prefixed by its version."""

import struct

from kipper.protocol.schema import Api, F, Schema, build_struct

ENVELOPE = Api(
    key=58, name='Envelope', valid='0', flexible='0+',
    request=(
        F('request_data', 'bytes'),
        F('request_principal', 'bytes', nullable='0+'),
        F('client_host_address', 'bytes'),
    ),
    response=(
        F('response_data', 'bytes', nullable='0+'),
        F('error_code', 'int16'),
    ),
)

# DefaultKafkaPrincipalBuilder's serialized principal: version 0 of DefaultPrincipalData
_PRINCIPAL = Schema(build_struct((F('type', 'string'), F('name', 'string'), F('token_authenticated', 'bool')),
                                 0, True))


def encode_principal(principal: str) -> bytes:
    """``User:alice`` as Kafka's serialized principal."""
    kind, _, name = principal.partition(":")
    return struct.pack(">h", 0) + _PRINCIPAL.build({"type": kind, "name": name, "token_authenticated": False})


def decode_principal(data: bytes) -> str:
    """Kafka's serialized principal as ``Type:name``; ValueError when it is not one."""
    if len(data) < 2 or struct.unpack_from(">h", data)[0] != 0:
        raise ValueError("not a version 0 DefaultPrincipalData")
    try:
        p = _PRINCIPAL.parse(bytes(data), 2)
    except Exception as exc:  # construct's errors: the bytes are not a principal
        raise ValueError(f"not a principal: {exc}") from None
    return f"{p.type}:{p.name}"
