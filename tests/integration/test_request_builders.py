"""The typed request builders (kipper.client.admin, consumer_requests,
producer_requests) against the real broker: each at the negotiated version,
and the ones whose body changes shape with the version at a pinned older one."""

from __future__ import annotations

import pytest

from kipper.client import admin
from kipper.client.admin import (
    AlterConfigOp, AlterConfigOpType, ClientQuotaAlteration, ClientQuotaFilterComponent, ConfigResource,
    ConfigResourceType, ConfigSource, NewTopic, ScramCredentialDeletion, ScramCredentialUpsertion,
)
from kipper.client.blocking import connect_any
from kipper.client.connect import connect
from kipper.client.consumer_requests import (
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, fetch, find_coordinator, list_offsets, offset_commit, offset_fetch,
    share_group_heartbeat,
)
from kipper.client.producer_requests import init_producer_id, produce
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.sasl import MECHANISM_CODES
from tests.support.certs import start_secure_broker


@pytest.fixture
def conn(broker):
    with connect_any(broker.bootstrap) as c:
        yield c


def _values(resp, topic, partition):
    for t in resp.responses:
        for p in t.partitions:
            if t.topic == topic and p.partition_index == partition:
                assert p.error_code == 0, p
                return [r.value for b in records.decode_all(p.records or b"") for r in b.records]
    raise AssertionError(f"no {topic}-{partition} in the response")


# --- topics and configs -------------------------------------------------------------------------

def test_create_topics_sends_partitions_and_configs_and_reports_each_topic(conn, unique):
    a, b = f"cta-{unique}", f"ctb-{unique}"
    resp = admin.create_topics(conn, [NewTopic(a, 3, 1, {"retention.ms": "5000"}), NewTopic(b)])
    assert [(t.name, t.error_code) for t in resp.topics] == [(a, 0), (b, 0)]
    again = admin.create_topics(conn, [NewTopic(a, 3, 1)])
    assert again.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS

    meta = admin.metadata(conn, [a, b])
    assert {t.name: len(t.partitions) for t in meta.topics} == {a: 3, b: 1}  # b: num.partitions
    configs = admin.describe_configs(conn, [ConfigResource(ConfigResourceType.TOPIC, a)],
                                     configuration_keys=["retention.ms"]).results[0].configs
    assert [(c.name, c.value, c.config_source) for c in configs] == [
        ("retention.ms", "5000", ConfigSource.DYNAMIC_TOPIC_CONFIG)]


def test_create_topics_validate_only_creates_nothing(conn, unique):
    topic = f"ctv-{unique}"
    assert admin.create_topics(conn, [NewTopic(topic, 1)], validate_only=True).topics[0].error_code == 0
    assert admin.metadata(conn, [topic]).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_without_topics_lists_all_and_with_an_empty_list_none(conn, unique):
    topic = f"md-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 1)])
    assert topic in {t.name for t in admin.metadata(conn).topics}
    assert admin.metadata(conn, []).topics == []
    topic_id = admin.metadata(conn, [topic]).topics[0].topic_id
    by_id = admin.metadata(conn, topic_ids=[topic_id]).topics
    assert [(t.name, t.topic_id) for t in by_id] == [(topic, topic_id)]


def test_metadata_may_auto_create_a_topic(conn, unique):
    topic = f"auto-{unique}"
    first = admin.metadata(conn, [topic], allow_auto_topic_creation=True).topics[0]
    assert first.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # Kafka's: shown by the next request
    assert admin.metadata(conn, [topic]).topics[0].error_code == 0


def test_incremental_alter_configs_sets_and_deletes_a_topic_config(conn, unique):
    topic = f"iac-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 1)])
    resource = ConfigResource(ConfigResourceType.TOPIC, topic)

    def retention():
        [c] = admin.describe_configs(conn, [resource], configuration_keys=["retention.ms"]).results[0].configs
        return c.value

    resp = admin.incremental_alter_configs(conn, {resource: [AlterConfigOp("retention.ms", "7000")]})
    assert resp.responses[0].error_code == 0
    assert retention() == "7000"
    admin.incremental_alter_configs(conn, {resource: [AlterConfigOp("retention.ms", None, AlterConfigOpType.DELETE)]})
    assert retention() == "604800000"


@pytest.mark.parametrize("version", [None, 5])  # v6 names topics in structs, v5 in a list of names
def test_delete_topics_at_either_body_shape(conn, unique, version):
    topic = f"del-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 1)])
    resp = admin.delete_topics(conn, [topic], version=version)
    assert [(r.name, r.error_code) for r in resp.responses] == [(topic, 0)]
    assert admin.metadata(conn, [topic]).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


# --- produce, fetch, offsets --------------------------------------------------------------------

def test_produce_fetch_and_list_offsets_address_partitions_by_topic_and_index(conn, unique):
    topic = f"pf-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 2)])
    resp = produce(conn, {(topic, 0): records.build_batch([(None, b"a"), (None, b"b")]),
                          (topic, 1): records.build_batch([(None, b"c")])})
    assert sorted((p.index, p.error_code, p.base_offset) for t in resp.responses
                  for p in t.partition_responses) == [(0, 0, 0), (1, 0, 0)]
    assert produce(conn, {(topic, 1): records.build_batch([(None, b"d")])}, acks=0) is None

    got = fetch(conn, {(topic, 0): 0, (topic, 1): 0})
    assert _values(got, topic, 0) == [b"a", b"b"]
    ends = list_offsets(conn, {(topic, 0): LATEST_TIMESTAMP, (topic, 1): LATEST_TIMESTAMP})
    assert sorted((p.partition_index, p.offset) for p in ends.topics[0].partitions) == [(0, 2), (1, 2)]
    assert _values(fetch(conn, {(topic, 1): 1}), topic, 1) == [b"d"]  # the acks=0 batch


def test_delete_records_moves_the_log_start(conn, unique):
    topic = f"dr-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 1)])
    produce(conn, {(topic, 0): records.build_batch([(None, b"%d" % i) for i in range(5)])})
    resp = admin.delete_records(conn, {(topic, 0): 3})
    assert resp.topics[0].partitions[0].low_watermark == 3
    assert list_offsets(conn, {(topic, 0): EARLIEST_TIMESTAMP}).topics[0].partitions[0].offset == 3


def test_init_producer_id_gives_an_id_and_bumps_its_epoch(conn):
    first = init_producer_id(conn)
    assert first.error_code == 0 and first.producer_id >= 0
    bumped = init_producer_id(conn, producer_id=first.producer_id, producer_epoch=first.producer_epoch)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (
        0, first.producer_id, first.producer_epoch + 1)
    transactional = init_producer_id(conn, "tx-builder", transaction_timeout_ms=60000, version=3)
    assert transactional.error_code == 0 and transactional.producer_epoch == 0


# --- groups -------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [None, 3])  # v4 batches keys; v3 asks for one
def test_find_coordinator_returns_this_broker_and_raises_on_an_error(conn, broker, version):
    coordinator = find_coordinator(conn, "some-group", version=version)
    assert (coordinator.host, coordinator.port) == ("127.0.0.1", broker.port)
    assert find_coordinator(conn, "", version=version).port == broker.port  # "" is a group id (Kafka)
    with pytest.raises(KafkaError) as info:
        find_coordinator(conn, "some-group", key_type=7, version=version)
    assert info.value.code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("version", [None, 7])  # v8 answers in groups[0].topics, v7 in topics
def test_offset_commit_then_offset_fetch(conn, unique, version):
    topic, group = f"oc-{unique}", f"g-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 2)])
    committed = offset_commit(conn, group, {(topic, 0): 5, (topic, 1): 7})
    assert [p.error_code for p in committed.topics[0].partitions] == [0, 0]
    resp = offset_fetch(conn, group, {topic: [0, 1]}, version=version)
    topics = resp.topics if version == 7 else resp.groups[0].topics
    assert [(p.partition_index, p.committed_offset) for p in topics[0].partitions] == [(0, 5), (1, 7)]


def test_share_group_heartbeat_joins_and_leaves_and_describe_and_list_see_the_group(conn, unique):
    topic, group = f"sg-{unique}", f"sg-{unique}"
    admin.create_topics(conn, [NewTopic(topic, 1)])
    # KIP-1082: the member makes up its id; an empty one is INVALID_REQUEST, as in Kafka 4.x
    assert share_group_heartbeat(conn, group, "", 0, subscribed_topic_names=[topic]).error_code == \
        ErrorCode.INVALID_REQUEST
    joined = share_group_heartbeat(conn, group, f"member-{unique}", 0, subscribed_topic_names=[topic])
    assert joined.error_code == 0 and joined.member_epoch > 0 and joined.member_id == f"member-{unique}"

    described = admin.share_group_describe(conn, [group, f"none-{unique}"])
    assert [m.member_id for m in described.groups[0].members] == [joined.member_id]
    assert described.groups[1].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    listed = admin.list_groups(conn, types_filter=["share"])
    assert (group, "share") in {(g.group_id, g.group_type) for g in listed.groups}
    classic = admin.describe_groups(conn, [group]).groups[0]
    assert classic.error_code or classic.group_state == "Dead"  # not a classic group

    left = share_group_heartbeat(conn, group, joined.member_id, -1)
    assert left.error_code == 0 and left.member_epoch == -1
    assert admin.share_group_describe(conn, [group]).groups[0].members == []


# --- client quotas and SCRAM credentials --------------------------------------------------------

def test_client_quotas_alter_describe_and_remove(conn, unique):
    user = f"u-{unique}"
    resp = admin.alter_client_quotas(conn, [
        ClientQuotaAlteration({"user": user}, {"producer_ids_rate": 12.0}),
        ClientQuotaAlteration({"user": None}, {"producer_ids_rate": 99.0})])
    assert [e.error_code for e in resp.entries] == [0, 0]

    one = admin.describe_client_quotas(conn, [ClientQuotaFilterComponent.of_entity("user", user)])
    assert [(e.entity[0].entity_name, [(v.key, v.value) for v in e["values"]]) for e in one.entries] == [
        (user, [("producer_ids_rate", 12.0)])]
    default = admin.describe_client_quotas(conn, [ClientQuotaFilterComponent.of_default_entity("user")])
    assert [e.entity[0].entity_name for e in default.entries] == [None]

    admin.alter_client_quotas(conn, [ClientQuotaAlteration({"user": user}, {"producer_ids_rate": None})])
    assert admin.describe_client_quotas(conn, [ClientQuotaFilterComponent.of_entity("user", user)]).entries == []
    admin.describe_client_quotas(conn, [ClientQuotaFilterComponent.of_entity_type("client-id")])
    with pytest.raises(KafkaError) as info:  # Kafka's answer to an entity type it does not know
        admin.describe_client_quotas(conn, [ClientQuotaFilterComponent.of_entity_type("planet")])
    assert info.value.code == ErrorCode.UNSUPPORTED_VERSION


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    b = start_secure_broker(tmp_path_factory.mktemp("builders"), {"super.users": "User:admin"})
    yield b
    b.stop()


def test_scram_upsertion_from_a_password_logs_in_and_deletion_removes_it(secure):
    admin_settings = secure.settings("SASL_PLAINTEXT", user="admin")
    with connect(secure.bootstrap("SASL_PLAINTEXT"), admin_settings) as conn:
        resp = admin.alter_user_scram_credentials(conn, upsertions=[
            ScramCredentialUpsertion.from_password("dora", "SCRAM-SHA-512", "dora-secret", 8192)])
        assert [(r.user, r.error_code) for r in resp.results] == [("dora", 0)]
        [result] = admin.describe_user_scram_credentials(conn, ["dora"]).results
        assert [(c.mechanism, c.iterations) for c in result.credential_infos] == [
            (MECHANISM_CODES["SCRAM-SHA-512"], 8192)]

    dora = secure.settings("SASL_PLAINTEXT", "SCRAM-SHA-512", "dora", "dora-secret")
    with connect(secure.bootstrap("SASL_PLAINTEXT"), dora) as conn:
        assert admin.metadata(conn).brokers  # logged in with the salted password the builder sent

    with connect(secure.bootstrap("SASL_PLAINTEXT"), admin_settings) as conn:
        admin.alter_user_scram_credentials(conn, deletions=[
            ScramCredentialDeletion("dora", MECHANISM_CODES["SCRAM-SHA-512"])])
        [gone] = admin.describe_user_scram_credentials(conn, ["dora"]).results
        assert gone.error_code == ErrorCode.RESOURCE_NOT_FOUND


def test_describe_scram_credentials_raises_the_top_level_error(secure):
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="alice")) as conn:
        with pytest.raises(KafkaError) as info:
            admin.describe_user_scram_credentials(conn)
        assert info.value.code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED

