"""The producer-id quota on the Produce path, through the real dispatcher of a
whole broker (open_engines, no sockets): throttled ids get THROTTLING_QUOTA_EXCEEDED and a
throttle time, admitted ones are never throttled, and the client-quota store
keeps values in config.dir."""

from __future__ import annotations

import pytest

from kipper.broker import config as cfg
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.context import Session
from kipper.broker.handlers.replies import Reply
from kipper.broker.quota.client_quotas import ClientQuotaStore, Op
from kipper.broker.quota.entities import check_entity, check_value
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS

PRODUCE, ALTER, DESCRIBE = APIS[0], APIS[49], APIS[48]


class Broker:
    """A whole broker and its dispatcher driven with real request frames and a settable clock."""

    def __init__(self, tmp_path, **overrides):
        values = {"producer.id.quota.window.num": "2", "producer.id.quota.window.size.seconds": "10",
                  "config.dir": str(tmp_path / "cfg"), **overrides}
        self.now = 0
        self.state = open_engines(cfg.load(overrides=values), clock=lambda: self.now)
        self.dispatcher = Dispatcher.of(self.state)
        self.state.topics.create("t", 1)
        self.cid = 0
        self.mute_ms = 0  # what the last reply asked of the connection

    def call(self, api, version, body, session):
        self.cid += 1
        frame = encode_request(api, version, self.cid, "test", body)[4:]
        [result], _ = self.dispatcher.dispatch([frame], 0, session)
        self.mute_ms = result.mute_ms if type(result) is Reply else 0
        if type(result) is Reply:
            result = result.body
        return decode_response(api, version, result[4:])[1]

    def produce(self, session, pid: int, seq: int = 0):
        batch = records.build_batch([(None, b"v", 0)], producer_id=pid, producer_epoch=0, base_sequence=seq)
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}
        resp = self.call(PRODUCE, 9, body, session)
        return resp.responses[0].partition_responses[0].error_code, resp.throttle_time_ms

    def set_quota(self, user, rate, session=None):
        body = {"entries": [{"entity": [{"entity_type": "user", "entity_name": user}],
                             "ops": [{"key": "producer_ids_rate", "value": rate, "remove": False}]}],
                "validate_only": False}
        return self.call(ALTER, 1, body, session or Session("PLAINTEXT", "admin")).entries[0]


def session(user: str) -> Session:
    return Session("SASL_PLAINTEXT", "peer", "SASL_PLAINTEXT", principal=f"User:{user}")


def test_new_ids_beyond_the_quota_are_throttled_and_not_admitted(tmp_path):
    b = Broker(tmp_path)
    assert b.set_quota("rogue", 1.0).error_code == 0      # burst 1 x 2 x 10 = 20
    rogue = session("rogue")
    codes = [b.produce(rogue, pid) for pid in range(1, 23)]
    assert codes[:20] == [(0, 0)] * 20
    assert codes[20] == (ErrorCode.THROTTLING_QUOTA_EXCEEDED, 1000)
    assert b.mute_ms == 1000
    psm = b.state.producer_states.get("t", 0)
    assert len(psm) == 20 and psm.table.find(21) < 0


def test_admitted_ids_keep_producing_while_new_ones_are_throttled(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 1.0)
    rogue = session("rogue")
    for pid in range(1, 21):
        b.produce(rogue, pid)
    assert b.produce(rogue, 99)[0] == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert all(b.produce(rogue, pid, seq=1) == (0, 0) for pid in range(1, 21))
    # a new connection of the same user: the ids have producer state, so still admitted
    again = session("rogue")
    assert all(b.produce(again, pid, seq=2) == (0, 0) for pid in range(1, 21))


def test_fast_path_keeps_admitted_ids_per_connection(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 1.0)
    rogue = session("rogue")
    b.produce(rogue, 7)
    assert rogue.admitted_producer_ids == {7}
    user = b.state.quotas.manager.users["rogue"]
    before = user.remembered
    b.produce(rogue, 7, seq=1)
    assert user.remembered == before  # answered from the connection's set, not the filters


def test_users_without_a_quota_are_never_throttled_and_not_tracked(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 1.0)
    good = session("good")
    assert all(b.produce(good, pid) == (0, 0) for pid in range(1, 60))
    assert "good" not in b.state.quotas.manager.users and not good.admitted_producer_ids


def test_default_user_quota_covers_anonymous_plaintext_clients(tmp_path):
    b = Broker(tmp_path)
    assert b.set_quota(None, 1.0).error_code == 0
    anon = Session("PLAINTEXT", "peer")
    assert anon.principal == "User:ANONYMOUS"
    codes = [b.produce(anon, pid)[0] for pid in range(1, 25)]
    assert codes.count(ErrorCode.THROTTLING_QUOTA_EXCEEDED) == 4
    assert "ANONYMOUS" in b.state.quotas.manager.users


def test_tokens_come_back_with_time(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 1.0)
    rogue = session("rogue")
    for pid in range(1, 21):
        b.produce(rogue, pid)
    assert b.produce(rogue, 50)[0] == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    b.now += 1000
    assert b.produce(rogue, 50) == (0, 0)


def test_quota_metrics_are_exported_through_the_provider(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 1.0)
    rogue = session("rogue")
    for pid in range(1, 23):
        b.produce(rogue, pid)
    snap = b.state.metrics.take_interval()["quotas"]["users"]["rogue"]
    assert snap["admitted"] == 20 and snap["throttled"] == 2
    assert snap["ProducerIds"]["throttle-time"] == 1000.0 and snap["ProducerIds"]["tokens"] == 0.0


def test_quotas_survive_a_restart_with_the_same_config_dir(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("rogue", 3.0)
    b.set_quota(None, 50.0)
    again = Broker(tmp_path)
    assert again.state.quotas.manager.quota_for("rogue") == 3.0
    assert again.state.quotas.manager.quota_for("someone") == 50.0


def test_non_super_user_may_not_alter_quotas(tmp_path):
    b = Broker(tmp_path, **{"super.users": "User:admin"})
    assert b.set_quota("rogue", 1000.0, session("rogue")).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert b.set_quota("rogue", 1000.0, session("admin")).error_code == 0


def test_describe_filters_by_exact_default_and_specified(tmp_path):
    b = Broker(tmp_path)
    b.set_quota("a", 1.0)
    b.set_quota("b", 2.0)
    b.set_quota(None, 3.0)

    def describe(components, strict=False):
        resp = b.call(DESCRIBE, 1, {"components": components, "strict": strict}, Session("P", "x"))
        assert resp.error_code == 0
        return sorted((e.entity[0].entity_name or "<default>", e["values"][0].value) for e in resp.entries)

    assert describe([]) == [("<default>", 3.0), ("a", 1.0), ("b", 2.0)]
    assert describe([{"entity_type": "user", "match_type": 0, "match": "b"}]) == [("b", 2.0)]
    assert describe([{"entity_type": "user", "match_type": 1, "match": None}]) == [("<default>", 3.0)]
    # Kafka's "specified" matches every entity of the type, its default too (ClientQuotasImage)
    assert describe([{"entity_type": "user", "match_type": 2, "match": None}]) == [
        ("<default>", 3.0), ("a", 1.0), ("b", 2.0)]


@pytest.mark.parametrize("entity,op,code", [
    ([{"entity_type": "client-id", "entity_name": "c"}], Op("producer_ids_rate", 1, False), ErrorCode.INVALID_REQUEST),
    ([{"entity_type": "user", "entity_name": "u"}], Op("producer_byte_rate", 1, False), ErrorCode.NONE),
    ([{"entity_type": "user", "entity_name": "u"}], Op("producer_ids_rate", 0, False), ErrorCode.INVALID_REQUEST),
    ([{"entity_type": "user", "entity_name": "u"}], Op("producer_ids_rate", -1, False), ErrorCode.INVALID_REQUEST),
    ([{"entity_type": "ip", "entity_name": "1.2.3.4"}], Op("producer_ids_rate", 1, False), ErrorCode.INVALID_REQUEST),
    ([{"entity_type": "ip", "entity_name": "1.2.3.4"}], Op("connection_creation_rate", 1, False), ErrorCode.NONE),
    ([{"entity_type": "ip", "entity_name": "1.2.3.4"}], Op("connection_creation_rate", 1.5, False),
     ErrorCode.INVALID_REQUEST),
    ([{"entity_type": "ip", "entity_name": "not an address!"}], Op("connection_creation_rate", 1, False),
     ErrorCode.INVALID_REQUEST),
])
def test_producer_ids_rate_only_on_the_user_entity(entity, op, code):
    got, _, parsed = check_entity(entity)
    if got == ErrorCode.NONE:
        got = check_value(parsed, op.key, op.value)[0]
    assert got == code


def test_validate_only_changes_nothing(tmp_path):
    b = Broker(tmp_path)
    body = {"entries": [{"entity": [{"entity_type": "user", "entity_name": "x"}],
                         "ops": [{"key": "producer_ids_rate", "value": 5.0, "remove": False}]}],
            "validate_only": True}
    assert b.call(ALTER, 0, body, Session("P", "x")).entries[0].error_code == 0
    assert b.state.quotas.manager.quota_for("x") is None
    assert not (tmp_path / "cfg" / "quotas.json").exists()


def test_removing_the_last_value_drops_the_entity_from_the_file(tmp_path):
    store = ClientQuotaStore(str(tmp_path))
    store.apply([((("user", "u"),), [Op("producer_ids_rate", 4.0, False)])])
    assert ClientQuotaStore(str(tmp_path)).quotas == {(("user", "u"),): {"producer_ids_rate": 4.0}}
    store.apply([((("user", "u"),), [Op("producer_ids_rate", 0.0, True)])])
    assert ClientQuotaStore(str(tmp_path)).quotas == {}
