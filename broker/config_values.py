"""Value types of broker settings: parsers with their allowed ranges, and listeners.

Each parser turns the text of a property into a value or raises ConfigError
with a readable reason; ``parse.range`` / ``parse.choices`` feed the README's
configuration reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Listener:
    name: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def parse_listeners(text: str, key: str = "listeners") -> tuple[Listener, ...]:
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if "://" not in item:
            raise ConfigError(f"{key}: '{item}' is not of the form NAME://host:port")
        name, rest = item.split("://", 1)
        try:
            parts = urlsplit("//" + rest)
            port = parts.port
        except ValueError as exc:
            raise ConfigError(f"{key}: '{item}': {exc}") from None
        if port is None:
            raise ConfigError(f"{key}: '{item}' has no port")
        if not name or not name.replace("_", "").isalnum() or name.upper() != name:
            raise ConfigError(f"{key}: listener name '{name}' must be upper case letters, digits or _")
        out.append(Listener(name, parts.hostname or "", port))
    names = [listener.name for listener in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"{key}: each listener name may appear once")
    return tuple(out)


def java_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_long_hash(value: int) -> int:
    """Java's Long.hashCode: the two halves of the 64-bit value xor-ed, as a 32-bit int."""
    v = value & 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & 0xFFFFFFFF


def java_capacity(entries: int, concurrent: bool = False) -> int:
    """The table size of a java.util.HashMap (or HashSet) that held ``entries`` at most (16,
    doubled past three quarters full); a ConcurrentHashMap doubles on reaching three quarters."""
    capacity = 16
    while entries > capacity * 3 // 4 - concurrent:
        capacity *= 2
    return capacity


def java_sized_capacity(initial: int, entries: int) -> int:
    """The table size of a ``new HashMap<>(initial)`` that was given ``entries`` keys: the
    initial capacity rounded up to a power of two, doubled past three quarters full."""
    capacity = 1
    while capacity < initial:
        capacity *= 2
    while entries > int(capacity * 0.75):
        capacity *= 2
    return capacity


def java_map_text(pairs: list[tuple[str, str | None]], initial: int) -> str:
    """Java's HashMap<String, String>.toString ("{user=u, client-id=null}") of ``pairs`` put in
    this order (a key again: its last value, in its first place) into ``new HashMap<>(initial)``."""
    values = dict(pairs)
    order = java_hash_order(values, java_sized_capacity(initial, len(values)))
    return "{" + ", ".join(f"{k}={'null' if values[k] is None else values[k]}" for k in order) + "}"


def ranked(rank: tuple[str, ...]) -> dict[str, int]:
    """Each name's place in ``rank`` (an order Kafka checks configs in), for ``in_order``."""
    return {name: i for i, name in enumerate(rank)}


def in_order(names, rank: dict[str, int]) -> list[str]:
    """``names`` in the order ``rank`` gives them, those it does not name after, as given:
    the order Kafka's ConfigDef parses values in, its definitions'."""
    last = len(rank)
    return sorted(names, key=lambda name: rank.get(name, last))


def java_hash_order(keys, capacity: int | None = None, hash=java_string_hash, concurrent: bool = False) -> list:
    """Keys in the order a java.util.HashMap (or a ConcurrentHashMap) iterates them: by bucket,
    then as inserted; ``capacity`` by default the table size that holds them all, ``hash`` the
    keys' hashCode (String's by default). Kafka builds many answers and messages from such maps."""
    keys = list(dict.fromkeys(keys))
    capacity = capacity or java_capacity(len(keys), concurrent)

    def bucket(key) -> int:
        h = hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)
    return [k for _, k in sorted(((bucket(k), i), k) for i, k in enumerate(keys))]


def image_order(names) -> list[str]:
    """Names in the order Kafka's metadata image iterates its topics by name (a PCollections
    HashPMap: an IntTreePMap by String.hashCode, so ascending signed hash codes)."""
    return sorted(names, key=java_string_hash)


def java_set_text(items: list[str]) -> str:
    """Java's HashSet<String>.toString of ``items`` added in this order ("[b, a]"): Kafka
    prints sets of config names so, in its hash table's order."""
    return "[" + ", ".join(java_hash_order(items)) + "]"


# --- value parsers ------------------------------------------------------------------

# Java's number grammars, which Kafka's ConfigDef parses with after a trim: Long.parseLong takes
# a sign and digits only (Python's int() also takes '1_000'); Double.parseDouble takes NaN,
# Infinity, a decimal with an exponent and a f/F/d/D suffix, or a hex float (Python's float()
# also takes 'inf', 'nan' in any case and '1_0', and no suffix)
_JAVA_LONG = re.compile(r"[+-]?\d+")
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_JAVA_HEX_DOUBLE = re.compile(r"([+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")


def java_long(text) -> int:
    """``text`` read as Java's Long.parseLong reads it (after ConfigDef's trim); ValueError if
    Java would refuse it. The caller checks the type's range."""
    value = str(text).strip()
    if not _JAVA_LONG.fullmatch(value):
        raise ValueError(f"not a Java integer: {text!r}")
    return int(value)


def java_float(text) -> float:
    """``text`` read as Java's Double.parseDouble reads it; ValueError if Java would refuse it."""
    value = str(text).strip()
    if _JAVA_DOUBLE.fullmatch(value):
        return float(value.rstrip("fFdD"))
    hexadecimal = _JAVA_HEX_DOUBLE.fullmatch(value)
    if hexadecimal:
        return float.fromhex(hexadecimal.group(1))
    raise ValueError(f"not a Java double: {text!r}")


def java_double(value: float) -> str:
    """A double as Java's Double.toString prints it (1.0, 0.5, 1.0E-4, 1.7976931348623157E308):
    Kafka's tools and messages show config values that way."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(value)  # the shortest digits that read back, as Java's
        return text if "." in text else text + ".0"
    exponent = int(f"{value:e}".split("e")[1])
    digits = repr(abs(value)).split("e")[0].replace(".", "").strip("0")
    return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{exponent}"



def int_in(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = java_long(text)
        except ValueError:
            raise ConfigError(f"'{text}' is not an integer") from None
        if lo is not None and value < lo:
            raise ConfigError(f"{value} is below the minimum {lo}")
        if hi is not None and value > hi:
            raise ConfigError(f"{value} is above the maximum {hi}")
        return value
    parse.range = (lo, hi)
    return parse


def float_in(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False):
    def parse(text: str) -> float:
        try:
            value = java_float(text)
        except ValueError:
            raise ConfigError(f"'{text}' is not a number") from None
        if lo is not None and (value < lo or (open_lo and value == lo)):
            raise ConfigError(f"{value} must be {'above' if open_lo else 'at least'} {lo}")
        if hi is not None and value > hi:
            raise ConfigError(f"{value} is above the maximum {hi}")
        return value
    parse.range = (lo, hi)
    return parse


def boolean(text: str) -> bool:
    value = str(text).strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise ConfigError(f"'{text}' is not true or false")


def choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = str(text).strip()
        if value not in choices:
            raise ConfigError(f"'{text}' is not one of {', '.join(choices)}")
        return value
    parse.choices = choices
    return parse


def string(value: str) -> str:
    return str(value).strip()


BROKER_CODECS = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # compression.type


def cleanup_policy(text: str) -> str:
    """log.cleanup.policy: a comma-separated list of delete and compact (may be empty)."""
    items = [s.strip() for s in str(text).split(",") if s.strip()]
    bad = [i for i in items if i not in ("delete", "compact")]
    if bad:
        raise ConfigError(f"'{bad[0]}' is not delete or compact")
    return ",".join(items)


cleanup_policy.choices = ("delete", "compact", "compact,delete")


def http_listener(value: str) -> tuple[str, int] | None:
    """``http://host:port`` -> (host, port); empty -> None (no HTTP listener)."""
    text = str(value).strip()
    if not text:
        return None
    scheme, sep, rest = text.partition("://")
    host, colon, port = rest.rpartition(":")
    if scheme.lower() != "http" or not sep or not colon or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"'{text}' is not http://host:port")
    return host.strip("[]"), int(port)


def registry_listeners(value: str) -> tuple[tuple[str, str, int], ...]:
    """``http://host:port[,https://host:port]`` -> ((scheme, host, port), ...); empty -> ()."""
    out = []
    for item in (s.strip() for s in str(value).split(",")):
        if not item:
            continue
        scheme, sep, rest = item.partition("://")
        host, colon, port = rest.rpartition(":")
        if scheme.lower() not in ("http", "https") or not sep or not colon or not port.isdigit() \
                or int(port) > 65535:
            raise ConfigError(f"'{item}' is not http://host:port or https://host:port")
        out.append((scheme.lower(), host.strip("[]"), int(port)))
    return tuple(out)


def protocol_map(text: str) -> dict[str, str]:
    out = {}
    for item in (s.strip() for s in str(text).split(",")):
        if not item:
            continue
        if ":" not in item:
            raise ConfigError(f"'{item}' is not NAME:PROTOCOL")
        name, proto = (s.strip() for s in item.split(":", 1))
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(f"'{proto}' is not one of {', '.join(SECURITY_PROTOCOLS)}")
        out[name] = proto
    return out


SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def mechanisms(text: str) -> tuple[str, ...]:
    items = tuple(s.strip() for s in str(text).split(",") if s.strip())
    bad = [m for m in items if m not in SASL_MECHANISMS]
    if bad or not items:
        raise ConfigError(f"'{text}' must list one or more of {', '.join(SASL_MECHANISMS)}")
    return items


# KIP-848 server-side assignors; Kafka configures them by class name
CONSUMER_ASSIGNORS = {
    "uniform": "uniform", "range": "range",
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def assignors(text: str) -> tuple[str, ...]:
    items = [s.strip() for s in str(text).split(",") if s.strip()]
    bad = [a for a in items if a not in CONSUMER_ASSIGNORS]
    if bad or not items:
        raise ConfigError(f"'{text}' must list one or more of uniform, range")
    return tuple(dict.fromkeys(CONSUMER_ASSIGNORS[a] for a in items))


assignors.choices = ("uniform", "range")


# --- share.auto.offset.reset (KIP-932): earliest, latest or by_duration:<ISO-8601 duration> -----

_DURATION = re.compile(r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?"
                       r"(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?", re.IGNORECASE)
BY_DURATION = "by_duration:"


def java_duration_ms(text: str) -> int | None:
    """Java's Duration.parse(text).toMillis(), or None where Java throws (not the format, no
    section, a T without a time section, a number past a long)."""
    m = _DURATION.fullmatch(text)
    if m is None or m.group(3) == "T" or not any(m.group(i) is not None for i in (2, 4, 5, 6)):
        return None
    nanos = 0
    for group, unit in ((2, 86_400), (4, 3_600), (5, 60), (6, 1)):
        if m.group(group) is None:
            continue
        part = int(m.group(group)) * unit
        if not -2**63 <= int(m.group(group)) < 2**63 or not -2**63 <= part < 2**63:
            return None
        nanos += part * 1_000_000_000
    if m.group(7):
        fraction = int(m.group(7).ljust(9, "0"))
        nanos += -fraction if m.group(6).startswith("-") else fraction
    if m.group(1) == "-":
        nanos = -nanos
    if not -2**63 <= nanos // 1_000_000_000 < 2**63:
        return None
    return nanos // 1_000_000 if nanos >= 0 else -((-nanos) // 1_000_000)


def share_reset_problem(value: str) -> str | None:
    """Kafka's ShareGroupAutoOffsetResetStrategy check of share.auto.offset.reset (case as
    written: 'Earliest' is refused): its refusal's words, or None."""
    if value in ("earliest", "latest"):
        return None
    if value.startswith(BY_DURATION):
        ms = java_duration_ms(value[len(BY_DURATION):])
        if ms is not None and ms >= 0:
            return None
    return (f"Invalid value `{value}` for configuration share.auto.offset.reset. The value must be either "
            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")


def share_reset(text: str) -> str:
    """A broker key's share.auto.offset.reset (group.share.auto.offset.reset): the value, or
    ConfigError with Kafka's words."""
    value = str(text).strip()
    problem = share_reset_problem(value)
    if problem:
        raise ConfigError(problem)
    return value


share_reset.choices = ("latest", "earliest", "by_duration:<ISO-8601 duration>")
