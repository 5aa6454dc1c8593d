"""Every (api, version, direction) schema round-trips random bodies byte for byte.

Bodies are generated from the same ``protocol.schema.Field`` declarations the
schemas are built from, walked the way ``build_struct`` walks them: fields
outside the version are left out, nulls only where the version allows them,
tagged fields (and unknown tags, which must be kept) only in flexible versions.
The compiled ``Schema`` and the interpreted ``KStruct`` must agree on both the
bytes and the parsed values.
"""

from __future__ import annotations

import io

import pytest
from construct import Container
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kipper.protocol.messages import APIS
from kipper.protocol.primitives import ZERO_UUID
from kipper.protocol.schema import INF, Field

_INTS = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint16": (0, (1 << 16) - 1),
    "uint32": (0, (1 << 32) - 1),
}
_SCALARS = {
    **{name: st.integers(lo, hi) for name, (lo, hi) in _INTS.items()},
    "float64": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "uuid": st.one_of(st.just(ZERO_UUID), st.uuids()),
    "string": st.text(max_size=12),
    "bytes": st.binary(max_size=24),
    "records": st.binary(max_size=24),
}
_MAX_ITEMS = 3


def _maybe_null(strategy, nullable: bool):
    return st.one_of(st.none(), strategy) if nullable else strategy


def _field_strategy(f: Field, version: int, flexible: bool):
    nullable = version in f.nullable
    if f.flexible is not None:
        flexible = version in f.flexible
    t = f.type
    if t in _SCALARS:
        return _maybe_null(_SCALARS[t], nullable)
    if t.startswith("[]"):
        inner = t[2:]
        if inner and not f.fields:
            elem = _SCALARS[inner]
        else:
            elem = struct_strategy(f.fields, version, flexible)
        return _maybe_null(st.lists(elem, max_size=_MAX_ITEMS), nullable)
    assert t == "{}", f"unexpected field type {t!r} for {f.name}"
    return _maybe_null(struct_strategy(f.fields, version, flexible), nullable)


def struct_strategy(fields, version: int, flexible: bool):
    """Dicts holding every field present at ``version``, plus unknown tags when flexible."""
    members = {}
    known_tags = set()
    for f in fields:
        if version not in f.versions:
            continue
        if flexible and f.tag is not None and version in f.tagged:
            known_tags.add(f.tag)
        members[f.name] = _field_strategy(f, version, flexible)
    base = st.fixed_dictionaries(members)
    if not flexible:
        return base
    unknown = st.dictionaries(
        st.integers(0, 40).filter(lambda t: t not in known_tags), st.binary(max_size=6), max_size=2)

    def add_unknown(pair):
        body, tags = pair
        if tags:
            body["_unknown_tags"] = tags
        return body

    return st.tuples(base, unknown).map(add_unknown)


def plain(value):
    """Containers as dicts, keeping the ``_``-prefixed keys Container equality skips."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "_io"}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _cases():
    for key, api in sorted(APIS.items()):
        lo, hi = api.valid_range.lo, api.valid_range.hi
        assert hi < INF, f"{api.name} has an open-ended valid range {api.valid!r}"
        for version in range(lo, hi + 1):
            for direction in ("request", "response"):
                yield pytest.param(api, version, direction, id=f"{api.name}-v{version}-{direction}")


def _schema(api, version, direction):
    return api.request_schema(version) if direction == "request" else api.response_schema(version)


def test_every_api_has_a_nonempty_valid_range():
    for api in APIS.values():
        assert api.valid_range.lo <= api.valid_range.hi, api.name
        assert api.valid_range.lo <= api.min_version <= api.max_version <= api.valid_range.hi, api.name


@pytest.mark.parametrize(("api", "version", "direction"), list(_cases()))
def test_schema_round_trips_random_bodies_and_compiled_matches_interpreted(api, version, direction):
    schema = _schema(api, version, direction)
    fields = api.request if direction == "request" else api.response
    strategy = struct_strategy(fields, version, api.is_flexible(version))

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(body=strategy)
    def check(body):
        wire = schema.build(body)
        assert schema.struct.build(body) == wire, "interpreted build differs from compiled"

        stream = io.BytesIO(wire)
        parsed = schema.parse_stream(stream)
        assert stream.tell() == len(wire), "compiled parse left bytes unread"
        interpreted = schema.struct.parse(wire)
        assert plain(interpreted) == plain(parsed), "interpreted parse differs from compiled"
        assert plain(parsed) == body

        assert schema.build(parsed) == wire
        assert schema.struct.build(interpreted) == wire

    check()
