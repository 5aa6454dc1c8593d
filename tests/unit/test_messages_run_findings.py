"""What the generator's first ``--messages`` run (the texts compared word for word, seed 10601,
docs/FUZZ_FINDINGS.md) met and was fixed at once: Kafka's words for a BROKER resource named
by no integer when described, for a SaslAuthenticate on a listener without SASL, and for a
SCRAM user without credentials; then what it handed on: AlterClientQuotas' duplicate
entities, CreateAcls' order of checks, a group's unknown config names, DescribeConfigs of an
unknown resource type, ConsumerGroupHeartbeat's order of checks
and what the next run met: Share- and ConsumerGroupDescribe of another kind of group, a SCRAM
user described twice (tests/conformance/scenarios/messages_run.py replays each against Kafka)."""

from __future__ import annotations

from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

CREATE_ACLS, DESCRIBE_CONFIGS, ALTER_CONFIGS, SASL_AUTHENTICATE = 30, 32, 33, 36
DESCRIBE_USER_SCRAM_CREDENTIALS, ALTER_CLIENT_QUOTAS, CONSUMER_GROUP_HEARTBEAT = 50, 49, 68
OFFSET_COMMIT, JOIN_GROUP, CREATE_TOPICS, SHARE_GROUP_DESCRIBE, CONSUMER_GROUP_DESCRIBE = 8, 11, 19, 77, 69
LIST_GROUPS, INIT_PRODUCER_ID, TXN_OFFSET_COMMIT, ALTER_SHARE_GROUP_OFFSETS = 16, 22, 28, 91
BROKER, GROUP = 4, 32


def test_a_broker_resource_named_by_no_integer_is_a_broker_id_when_described_a_node_id_when_altered():
    broker = InProcessBroker()
    described = broker.call(DESCRIBE_CONFIGS, 2, {"resources": [
        {"resource_type": BROKER, "resource_name": "x", "configuration_keys": None}], "include_synonyms": False})
    assert described["results"][0]["error_message"] == "Broker id must be an integer, but it is: x"
    altered = broker.call(ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": BROKER, "resource_name": "x", "configs": []}], "validate_only": True})
    assert altered["responses"][0]["error_message"] == "Node id must be an integer, but it is: x"


def test_sasl_authenticate_on_a_listener_without_sasl_has_kafka_s_words():
    broker = InProcessBroker()
    [answer], _ = broker.dispatcher.dispatch(
        [encode_request(APIS[SASL_AUTHENTICATE], 2, 1, "test", {"auth_bytes": b"x"})[4:]], 0, broker.session)
    assert answer.close  # (and the connection closes after it, as Kafka's does)
    assert b"SaslAuthenticate request received after successful authentication" in bytes(answer.body)


def test_a_scram_user_without_credentials_is_attempt_with_a_capital():
    broker = InProcessBroker()
    answer = broker.call(DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "u"}]})
    assert answer["results"][0]["error_message"] == "Attempt to describe a user credential that does not exist: u"


def _quotas(broker, *entities, ops=1):
    op = {"key": "producer_byte_rate", "value": 1024.0, "remove": False}
    return broker.call(ALTER_CLIENT_QUOTAS, 1, {"validate_only": True, "entries": [
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity], "ops": [op] * ops}
        for entity in entities]})["entries"]


def test_a_duplicate_quota_entity_is_named_as_java_prints_it_and_checked_first():
    broker = InProcessBroker()
    [twice] = _quotas(broker, [("user", "a"), ("client-id", "c")], [("client-id", "c"), ("user", "a")])
    assert twice["error_message"] == "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, user=a})"
    assert [e["entity_type"] for e in twice["entity"]] == ["client-id", "user"]  # the map's order, as Kafka answers
    [empty] = _quotas(broker, [], [])
    assert empty["error_message"] == "Ignoring duplicate entity ClientQuotaEntity(entries={})"
    [keys] = _quotas(broker, [("user", None), ("zz", "q")], ops=2)  # a key twice: before the entity's own checks
    assert keys["error_message"] == "Ignoring duplicate entity ClientQuotaEntity(entries={zz=q, user=null})"


def test_create_acls_refuses_an_empty_name_before_an_unknown_type():
    broker = InProcessBroker(**{"authorizer.class.name": "standard", "allow.everyone.if.no.acl.found": "true"})
    [result] = broker.call(CREATE_ACLS, 3, {"creations": [{
        "principal": "User:u", "resource_type": 99, "resource_name": "", "resource_pattern_type": 3,
        "operation": 99, "permission_type": 9, "host": "*"}]})["results"]
    assert result["error_message"] == "Invalid empty resource name"


def test_a_group_s_first_unknown_config_name_is_the_first_in_java_hash_order():
    broker = InProcessBroker()
    names = ["segment.index.bytes", "remote.storage.enable", "zzz", "aaa", "consumer.session.timeout.ms"]
    [answer] = broker.call(ALTER_CONFIGS, 2, {"validate_only": True, "resources": [
        {"resource_type": GROUP, "resource_name": "g", "configs": [{"name": n, "value": "1"} for n in names]}]})["responses"]
    assert answer["error_message"] == "Unknown group config name: aaa"


def test_describe_configs_of_an_unknown_resource_type_has_invalid_request_s_own_text():
    broker = InProcessBroker()
    results = broker.call(DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 99, "resource_name": "x", "configuration_keys": None},
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})["results"]
    assert {r["error_message"] for r in results} == {
        "This most likely occurs because of a request being malformed by the client library or the message was sent "
        "to an incompatible broker. See the broker logs for more details."}


def test_a_consumer_heartbeat_checks_its_member_id_before_its_group_and_rack():
    broker = InProcessBroker()

    def beat(version, **fields):
        body = {"group_id": "g", "member_id": "m", "member_epoch": 0, "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
                "topic_partitions": [], "subscribed_topic_regex": None}
        return broker.call(CONSUMER_GROUP_HEARTBEAT, version, {**body, **fields})["error_message"]
    assert beat(1, member_id="", group_id="", rack_id="") == "MemberId can't be empty."
    assert beat(0, member_id="", group_id="") == "GroupId can't be empty."  # v0 at epoch 0: no member id yet
    assert beat(0, member_id="", rack_id="", member_epoch=3) == "MemberId can't be empty."
    assert beat(1, subscribed_topic_names=None) == (
        "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")


def test_share_group_describe_of_another_kind_of_group_says_it_is_not_a_share_group():
    broker = _with_topic_t()
    broker.call(OFFSET_COMMIT, 2, {"group_id": "simple", "generation_id_or_member_epoch": -1, "member_id": "",
                                    "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                                        {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]})
    broker.call(CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": "modern", "member_id": "m", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": [], "subscribed_topic_regex": None})
    groups = broker.call(SHARE_GROUP_DESCRIBE, 1, {"include_authorized_operations": False,
                                                   "group_ids": ["simple", "modern", "none"]})["groups"]
    assert [(g["error_code"], g["error_message"]) for g in groups] == [
        (69, "Group simple is not a share group."), (69, "Group modern is not a share group."),
        (69, "Group none not found.")]


def test_consumer_group_describe_of_an_empty_classic_group_says_it_is_not_a_consumer_group():
    broker = InProcessBroker()
    refused = broker.call(JOIN_GROUP, 9, {  # (an empty protocol type: refused, the group stays, empty)
        "group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
        "group_instance_id": None, "protocol_type": "", "reason": None, "protocols": [{"name": "range", "metadata": b""}]})
    assert refused["error_code"] == 23
    [group] = broker.call(CONSUMER_GROUP_DESCRIBE, 0, {"include_authorized_operations": False, "group_ids": ["g"]})["groups"]
    assert (group["error_code"], group["error_message"]) == (69, "Group g is not a consumer group.")


def test_a_scram_user_described_twice_has_kafka_s_words():
    broker = InProcessBroker()
    results = broker.call(DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "u"}, {"name": "u"}]})["results"]
    assert [(r["error_code"], r["error_message"]) for r in results] == [
        (92, "Cannot describe SCRAM credentials for the same user twice in a single request: u")]


def test_a_list_config_s_refusal_shows_what_kafka_s_validator_shows():
    from kipper.broker.log.topic_configs import TOPIC_CONFIGS, ConfigValueError

    def refusal(name, text):
        try:
            TOPIC_CONFIGS[name].parse(text)
        except ConfigValueError as exc:
            return str(exc)
    assert refusal("cleanup.policy", " compact ,foo ,bar") == (
        "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete")
    assert refusal("leader.replication.throttled.replicas", " 1 , 2 ") == (
        "Invalid value [1, 2] for configuration leader.replication.throttled.replicas: "
        "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
        "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def test_a_txn_offset_commit_makes_its_group_at_once_and_a_refused_one_a_group_only_writes_see():
    broker = _with_topic_t()
    init = broker.call(INIT_PRODUCER_ID, 5, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                              "producer_id": -1, "producer_epoch": -1})

    def commit(group, metadata):
        return broker.call(TXN_OFFSET_COMMIT, 5, {
            "transactional_id": "x", "group_id": group, "producer_id": init["producer_id"], "producer_epoch": 0,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None, "topics": [
                {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                              "committed_leader_epoch": -1, "committed_metadata": metadata}]}]})
    assert commit("staged", "")["topics"][0]["partitions"][0]["error_code"] == 0
    assert commit("refused", "m" * 5000)["topics"][0]["partitions"][0]["error_code"] == 12  # too large
    listed = broker.call(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})["groups"]
    assert [(g["group_id"], g["group_state"]) for g in listed] == [("staged", "Empty")]
    altered = broker.call(ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": "refused", "topics": []})
    assert (altered["error_code"], altered["error_message"]) == (69, "Group refused is not a share group.")


def _with_topic_t() -> InProcessBroker:
    """A broker with share groups on and a topic ``t`` of one partition."""
    broker = InProcessBroker(**{"group.share.enable": "true"})
    broker.call(CREATE_TOPICS, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 1000,
                                    "validate_only": False})
    return broker


def test_a_log_append_time_refusal_names_a_compressed_batch_kept_as_is_a_partial_record():
    from kipper.protocol import batch as b, compression, records

    broker = InProcessBroker()
    broker.state.topics.create("kept", 1)
    broker.state.topics.create("recompressed", 1, configs={"compression.type": "gzip"})

    def refusal(topic: str, codec: int) -> str:
        data = bytearray(records.build_batch([(b"k0", b"v0", -1)], compression_type=codec))
        data[21:23] = (int.from_bytes(data[21:23], "big") | b.TIMESTAMP_TYPE).to_bytes(2, "big")
        b.write_crc(data)
        row = broker.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": bytes(data)}]}]}).responses[0].partition_responses[0]
        return row.record_errors[0].batch_index_error_message.split(" ")[5].split("(")[0]
    assert refusal("kept", compression.LZ4) == "PartialDefaultRecord"  # read without keys and values
    assert refusal("kept", compression.NONE) == "DefaultRecord"
    assert refusal("recompressed", compression.LZ4) == "DefaultRecord"  # recompressed: read whole
    assert refusal("recompressed", compression.GZIP) == "PartialDefaultRecord"
