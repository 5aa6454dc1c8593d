"""ACL hosts in CIDR notation (Kafka 4.4): an ACL whose host holds a ``/`` applies to every
client address in that network, IPv4 (``10.0.0.0/8``) or IPv6 (``fd00::/8``, known by its
``:``).

Kafka checks such a host when the ACL is created and refuses it with INVALID_REQUEST
"Invalid CIDR notation '<host>': <why>", ``why`` in the words of the commons-net
SubnetUtils it uses; ``problem`` gives the same words. A client address that is not of the
network's family is never in it.
"""

from __future__ import annotations

import ipaddress
import re

_V4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})/(\d{1,2})", re.ASCII)
_V4_ADDRESS = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})", re.ASCII)
_JAVA_INT = re.compile(r"[+-]?\d+", re.ASCII)


class Invalid(ValueError):
    """Why a host is no CIDR network, in Kafka's words."""


def problem(host: str) -> str | None:
    """Why ``host`` (holding a ``/``) is no CIDR network, or None."""
    try:
        _network(host)
    except Invalid as exc:
        return str(exc)
    return None


def in_range(address: str, host: str) -> bool:
    """Whether the client ``address`` lies in the network ``host`` names (its first and
    last addresses included, as Kafka counts them)."""
    if "/" not in host:
        return False
    mapped = _mapped(address)
    try:
        network = _network(host)
        client = _v6(mapped) if network.version == 6 else _v4(mapped)
    except Invalid:
        return False
    return client in network


def _mapped(address: str) -> str:
    """A client address as Java's InetAddress holds it: an IPv4-mapped IPv6 address (a
    dual-stack listener's view of an IPv4 client) is the IPv4 address."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    mapped = getattr(parsed, "ipv4_mapped", None)
    return str(mapped) if mapped is not None else address


def _network(host: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if ":" in host:
        slash = host.find("/")
        if slash < 0:
            raise Invalid(f"Could not parse [{host}] - missing prefix length")
        text = host[slash + 1:]
        if not _JAVA_INT.fullmatch(text) or not -2**31 <= int(text) < 2**31:
            raise Invalid(f"Could not parse [{host}] - invalid prefix length")
        prefix = int(text)
        if not 0 <= prefix <= 128:
            raise Invalid(f"Could not parse [{host}] - prefix length must be between 0 and 128")
        return ipaddress.IPv6Network((_v6(host[:slash]), prefix), strict=False)
    match = _V4.fullmatch(host)
    if match is None:
        raise Invalid(f"Could not parse [{host}]")
    octets = [_range(int(match.group(i)), 0, 255) for i in range(1, 5)]
    prefix = _range(int(match.group(5)), 0, 32)
    return ipaddress.IPv4Network((".".join(map(str, octets)), prefix), strict=False)


def _range(value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise Invalid(f"Value [{value}] not in range [{low},{high}]")
    return value


def _v4(address: str) -> ipaddress.IPv4Address:
    match = _V4_ADDRESS.fullmatch(address)
    if match is None:
        raise Invalid(f"Could not parse [{address}]")
    return ipaddress.IPv4Address(".".join(str(_range(int(match.group(i)), 0, 255)) for i in range(1, 5)))


def _v6(address: str) -> ipaddress.IPv6Address:
    """An IPv6 literal as Java's InetAddress.getByName reads one (brackets allowed); an
    IPv4-mapped address reads as IPv4 there, so it is no IPv6 address."""
    text = address[1:-1] if address.startswith("[") and address.endswith("]") else address
    try:
        parsed = ipaddress.IPv6Address(text)
    except ValueError:
        raise Invalid(f"Could not parse [{address}]") from None
    if parsed.ipv4_mapped is not None:
        raise Invalid(f"Could not parse [{address}] - not an IPv6 address")
    return ipaddress.IPv6Address(int(parsed))  # (a scope never counts)
