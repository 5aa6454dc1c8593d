"""Client quotas (KIP-546 AlterClientQuotas / DescribeClientQuotas): the byte-rate and
request-percentage keys on user, client-id and (user, client-id) entities and their
defaults, Kafka's value checks, and the strict / match filters of a describe.

Scenarios run four at a time against brokers they share: a quota that could apply to
another scenario's connections (a default entity) is set only far above any traffic."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario

HUGE = 1e15  # bytes/s: never throttles anyone


def _entity(user=..., client=...):
    out = []
    if user is not ...:
        out.append({"entity_type": "user", "entity_name": user})
    if client is not ...:
        out.append({"entity_type": "client-id", "entity_name": client})
    return out


EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def alter(run, entries, *, validate=False, label="alter client quotas", version=None):
    """Alter, then wait (unrecorded) until a describe shows the change: Kafka answers
    once its controller committed it, and its broker's describe catches up a moment later."""
    resp = run.call(k.ALTER_CLIENT_QUOTAS, k.top(k.ALTER_CLIENT_QUOTAS) if version is None else version, {
        "entries": [{"entity": entity, "ops": [
            {"key": key, "value": 0.0 if value is None else value, "remove": value is None} for key, value in ops]}
            for entity, ops in entries], "validate_only": validate}, label=label)
    if validate or not isinstance(resp, dict):
        return resp
    model = run.__dict__.setdefault("quota_model", {})
    for (entity, ops), result in zip(entries, resp.get("entries") or []):
        if result["error_code"] != 0 or not entity:
            continue
        key = tuple(sorted((e["entity_type"], e["entity_name"]) for e in entity))
        values = model.setdefault(key, {})
        for name, value in ops:
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        _settle(run, key, dict(values))
    return resp


def _settle(run, key, expected: dict) -> None:
    components = [(t, EXACT, n) if n is not None else (t, DEFAULT, None) for t, n in key]

    def shown(resp):
        entries = resp.get("entries") or [] if isinstance(resp, dict) else []
        got = {v["key"]: v["value"] for e in entries for v in e["values"]}
        return got == expected
    run.poll(lambda: describe(run, components, True, record=False), shown, timeout=10, interval=0.05)


def describe(run, components, strict, *, label="describe client quotas", record=True, version=None):
    return run.call(k.DESCRIBE_CLIENT_QUOTAS, k.top(k.DESCRIBE_CLIENT_QUOTAS) if version is None else version, {
        "components": [{"entity_type": t, "match_type": m, "match": name} for t, m, name in components],
        "strict": strict}, label=label, record=record)


def describe_at(run, v):
    """The version probe of DescribeClientQuotas (versions.py)."""
    u = run.name("user")
    alter(run, [(_entity(user=u), [("producer_byte_rate", 1024.0)])])
    describe(run, [("user", EXACT, u)], False, version=v)


def alter_at(run, v):
    """The version probe of AlterClientQuotas (versions.py)."""
    u = run.name("user")
    alter(run, [(_entity(user=u), [("consumer_byte_rate", 2048.0)])], version=v)
    describe(run, [("user", EXACT, u)], True)


@scenario("quotas/byte-rates-and-filters")
def _(run):
    u, c = run.name("user"), run.name("client")
    alter(run, [(_entity(user=u), [("producer_byte_rate", 1024.0), ("consumer_byte_rate", 2048.0),
                                   ("request_percentage", 50.5)]),
                (_entity(user=u, client=c), [("producer_byte_rate", 4096.0)]),
                (_entity(client=c), [("consumer_byte_rate", 8192.0)]),
                (_entity(user=u, client=None), [("request_percentage", 10.0)])], label="set four entities")
    describe(run, [("user", EXACT, u)], True, label="user, strict")
    describe(run, [("user", EXACT, u)], False, label="user, not strict")
    describe(run, [("user", EXACT, u), ("client-id", SPECIFIED, None)], False, label="user and any client")
    describe(run, [("user", EXACT, u), ("client-id", DEFAULT, None)], True, label="user and default client")
    describe(run, [("client-id", EXACT, c)], True, label="client, strict")
    describe(run, [("client-id", EXACT, c)], False, label="client, not strict")
    describe(run, [("user", EXACT, u), ("client-id", EXACT, c)], True, label="user and client")
    alter(run, [(_entity(user=u), [("producer_byte_rate", 3000.0), ("consumer_byte_rate", None)])],
          label="change one, remove one")
    alter(run, [(_entity(user=u), [("request_percentage", None), ("producer_byte_rate", None)]),
                (_entity(user=u, client=None), [("request_percentage", None)])], label="remove the last keys")
    describe(run, [("user", EXACT, u)], False, label="after the removals")
    alter(run, [(_entity(user=u), [("producer_byte_rate", 5.0)])], validate=True, label="validate only")
    describe(run, [("user", EXACT, u)], True, label="nothing stored by validate only")


@scenario("quotas/default-entities")
def _(run):
    u = run.name("user")
    alter(run, [(_entity(user=None, client=None), [("producer_byte_rate", HUGE)]),
                (_entity(user=u, client=None), [("consumer_byte_rate", HUGE)])], label="defaults")
    describe(run, [("user", DEFAULT, None), ("client-id", DEFAULT, None)], True, label="default user and client")
    describe(run, [("user", EXACT, u), ("client-id", DEFAULT, None)], False, label="user, default client")
    alter(run, [(_entity(user=None, client=None), [("producer_byte_rate", None)]),
                (_entity(user=u, client=None), [("consumer_byte_rate", None)])], label="remove the defaults")
    describe(run, [("user", DEFAULT, None), ("client-id", DEFAULT, None)], True, label="defaults gone")


@scenario("quotas/value-errors")
def _(run):
    u = run.name("user")
    for key, value, label in [("producer_byte_rate", 1.5, "a fractional byte rate"),
                              ("producer_byte_rate", 0.0, "a zero byte rate"),
                              ("consumer_byte_rate", -10.0, "a negative byte rate"),
                              ("request_percentage", 0.0, "a zero percentage"),
                              ("request_percentage", -1.0, "a negative percentage"),
                              ("request_percentage", 250.0, "a percentage over 100"),
                              ("controller_mutation_rate", 5.0, "controller_mutation_rate"),
                              ("connection_creation_rate", 5.0, "an ip key on a user")]:
        alter(run, [(_entity(user=u), [(key, value)])], label=label)
        describe(run, [("user", EXACT, u)], True, label=f"after {label}")
    alter(run, [(_entity(user=u), [("producer_byte_rate", 10.0), ("producer_byte_rate", 20.0)])],
          label="the same key twice")
    alter(run, [(_entity(user=u), [("no_such_quota", None)])], label="remove an unknown key")
    alter(run, [(_entity(user=u), [("producer_byte_rate", None)])], label="remove a key never set")
    alter(run, [(_entity(client=run.name("c")), [("producer_byte_rate", 1.5)])], label="fractional, client entity")
    describe(run, [("user", EXACT, u)], True, label="nothing stored")


@scenario("quotas/ip-entity")
def _(run):
    ip = [{"entity_type": "ip", "entity_name": "127.0.0.29"}]
    alter(run, [(ip, [("connection_creation_rate", 100.0)])], label="an ip's connection rate")
    describe(run, [("ip", EXACT, "127.0.0.29")], True, label="the ip")
    alter(run, [(ip, [("connection_creation_rate", 2.5)])], label="a fractional connection rate")
    alter(run, [(ip, [("producer_byte_rate", 100.0)])], label="a byte rate on an ip")
    alter(run, [(ip, [("connection_creation_rate", None)])], label="remove it")
    describe(run, [("ip", EXACT, "127.0.0.29")], True, label="removed")


@scenario("quotas/entity-errors")
def _(run):
    alter(run, [([], [("producer_byte_rate", 10.0)])], label="an empty entity")
    alter(run, [(_entity(user=""), [("producer_byte_rate", 10.0)])], label="an empty user name")
    alter(run, [(_entity(client=""), [("producer_byte_rate", 10.0)])], label="an empty client id")
    alter(run, [([{"entity_type": "user", "entity_name": run.name("u")},
                  {"entity_type": "ip", "entity_name": "127.0.0.1"}], [("producer_byte_rate", 10.0)])],
          label="user with ip")
    describe(run, [("planet", EXACT, "x")], False, label="unknown entity type")
    describe(run, [("user", EXACT, "a"), ("user", EXACT, "b")], False, label="a type twice")
    describe(run, [("user", EXACT, None)], False, label="exact without a match")
    describe(run, [("user", DEFAULT, "a")], False, label="default with a match")
    describe(run, [("user", SPECIFIED, "a")], False, label="specified with a match")
    describe(run, [("user", 7, None)], False, label="unknown match type")
    describe(run, [("user", EXACT, "a"), ("ip", SPECIFIED, None)], False, label="user with ip")
    describe(run, [("", EXACT, "a")], False, label="an empty entity type")
