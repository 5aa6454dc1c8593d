"""Feature flags (broker/features.py) as a one-node Kafka 4.4 has them: the levels
ApiVersions carries, UpdateFeatures' checks and answers, and their persistence."""

from __future__ import annotations

import pytest

from kipper.broker import config as cfg
from kipper.broker.features import CLUSTER_CEILINGS, Features, parse_levels
from kipper.broker.storage.metadata import MetadataStore
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

API_VERSIONS, UPDATE_FEATURES = 18, 57
UPGRADE, SAFE, UNSAFE = 1, 2, 3
KAFKA_44 = {"group.version": 1, "kraft.version": 1, "share.version": 2, "metadata.version": 33,
            "streams.version": 1, "transaction.version": 2, "eligible.leader.replicas.version": 1}


def _finalized(resp) -> dict:
    return {f.name: (f.min_version_level, f.max_version_level) for f in resp.finalized_features}


def _update(b, updates, version=2, validate_only=False):
    body = {"timeout_ms": 60000, "validate_only": validate_only, "feature_updates": [
        {"feature": n, "max_version_level": lvl, "upgrade_type": t, "allow_downgrade": False}
        for n, lvl, t in updates]}
    return b.call(UPDATE_FEATURES, version, body)


def test_api_versions_v4_carries_kafka_44s_supported_and_finalized_features():
    resp = InProcessBroker().call(API_VERSIONS, 4, {"client_software_name": "t", "client_software_version": "1"})
    supported = {f.name: (f.min_version, f.max_version) for f in resp.supported_features}
    assert supported == {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 33),
                         "share.version": (0, 2), "streams.version": (0, 1), "transaction.version": (0, 2),
                         "eligible.leader.replicas.version": (0, 1)}
    assert _finalized(resp) == {name: (level, level) for name, level in KAFKA_44.items()}
    assert resp.finalized_features_epoch >= 1


def test_api_versions_below_v4_leaves_out_features_whose_range_starts_at_zero():
    resp = InProcessBroker().call(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert [(f.name, f.min_version, f.max_version) for f in resp.supported_features] == [
        ("metadata.version", 7, 33)]
    assert _finalized(resp)["transaction.version"] == (2, 2)


def test_initial_feature_levels_finalize_other_levels_and_level_zero_is_not_listed():
    b = InProcessBroker(**{"initial.feature.levels": "transaction.version=0,group.version=0"})
    finalized = _finalized(b.call(API_VERSIONS, 4, {"client_software_name": "t", "client_software_version": "1"}))
    assert "transaction.version" not in finalized and "group.version" not in finalized
    assert b.state.features.finalized_level("transaction.version") == 0
    assert b.state.features.finalized_level("streams.version") == 1


@pytest.mark.parametrize("text", ["share.version=3", "nope.version=1", "metadata.version=5", "group.version"])
def test_initial_feature_levels_refuse_what_is_not_supported(text):
    with pytest.raises(cfg.ConfigError, match="initial.feature.levels"):
        cfg.load(overrides={"initial.feature.levels": text})


def test_downgrade_then_upgrade_changes_the_finalized_level_and_the_epoch():
    b = InProcessBroker()
    epoch = b.state.features.epoch
    r = _update(b, [("transaction.version", 1, SAFE)])
    assert (r.error_code, r.error_message) == (0, None) and r.get("results") is None
    assert b.state.features.finalized_level("transaction.version") == 1
    assert b.state.features.epoch == epoch + 1
    r = _update(b, [("transaction.version", 2, UPGRADE)], version=1)
    assert [(x.feature, x.error_code) for x in r.results] == [("transaction.version", 0)]
    assert b.state.features.finalized_level("transaction.version") == 2


def test_validate_only_changes_nothing():
    b = InProcessBroker()
    assert _update(b, [("share.version", 0, SAFE)], validate_only=True).error_code == 0
    assert b.state.features.finalized_level("share.version") == 2


@pytest.mark.parametrize("update, reason", [
    (("transaction.version", 1, UPGRADE), "Can't downgrade the version of this feature without setting "
                                          "the upgrade type to either safe or unsafe downgrade."),
    (("transaction.version", 3, UPGRADE), "Local controller 1 only supports versions 0-2"),
    (("group.version", -1, SAFE), "A feature version cannot be less than 0."),
    (("share.version", 2, 7), "The controller does not support the given upgrade type."),
    (("nope.version", 1, UPGRADE), "Local controller 1 does not support this feature."),
    (("kraft.version", 0, SAFE), "Can't downgrade the version of this feature."),
    (("nope.version", 0, SAFE), "Feature nope.version not found."),
])
def test_refused_updates_answer_invalid_update_version_and_change_nothing(update, reason):
    b = InProcessBroker()
    before = b.state.features.snapshot()
    r = _update(b, [update])
    assert r.error_code == E.INVALID_UPDATE_VERSION
    assert r.error_message == ("The update failed for all features since the following feature had an error: "
                               f"Invalid update version {update[1]} for feature {update[0]}. {reason}")
    assert b.state.features.snapshot() == before


@pytest.mark.parametrize("upgrade_type, reason", [
    (SAFE, "Refusing to perform the requested downgrade because it might delete metadata information."),
    (UNSAFE, "Unsafe metadata downgrade is not supported in this version."),
])
def test_a_metadata_version_downgrade_that_would_lose_metadata_is_refused(upgrade_type, reason):
    r = _update(InProcessBroker(), [("metadata.version", 30, upgrade_type)])
    assert (r.error_code, r.error_message) == (E.INVALID_UPDATE_VERSION, (
        "The update failed for all features since the following feature had an error: "
        f"Unsupported metadata.version downgrade from 33 to 30. {reason}"))


def test_a_metadata_version_downgrade_across_levels_that_changed_nothing_is_allowed():
    f = Features({"metadata.version": 29})
    assert f.update([("metadata.version", 24, SAFE)], False) == (E.NONE, None)
    assert f.finalized_level("metadata.version") == 24


def test_v0_and_v1_answer_one_result_per_feature_and_v0_ignores_allow_downgrade():
    b = InProcessBroker()
    body = {"timeout_ms": 1, "feature_updates": [{"feature": "transaction.version", "max_version_level": 1,
                                                  "allow_downgrade": True}]}
    r = b.call(UPDATE_FEATURES, 0, body)  # Kafka's controller reads UpgradeType, which v0 has not
    assert r.error_code == E.INVALID_UPDATE_VERSION and r.results == []
    r = _update(b, [("transaction.version", 1, SAFE)], version=1)
    assert [(x.feature, x.error_code, x.error_message) for x in r.results] == [("transaction.version", 0, "NONE")]


def test_a_refused_update_refuses_the_others_in_the_request():
    b = InProcessBroker()
    r = _update(b, [("group.version", 0, SAFE), ("streams.version", 5, UPGRADE)])
    assert r.error_code == E.INVALID_UPDATE_VERSION
    assert b.state.features.finalized_level("group.version") == 1


def test_a_dependency_is_checked_against_the_levels_proposed():
    f = Features({"metadata.version": 22, "eligible.leader.replicas.version": 0})
    error, message = f.update([("eligible.leader.replicas.version", 1, UPGRADE)], False)
    assert error == E.INVALID_UPDATE_VERSION and message.endswith(
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23")
    assert f.update([("metadata.version", 23, UPGRADE), ("eligible.leader.replicas.version", 1, UPGRADE)],
                    False) == (E.NONE, None)


def test_update_features_needs_alter_on_the_cluster():
    b = InProcessBroker(**{"authorizer.class.name": "standard", "allow.everyone.if.no.acl.found": "false"})
    r = _update(b, [("transaction.version", 1, SAFE)])
    assert r.error_code == E.CLUSTER_AUTHORIZATION_FAILED and not r.get("results")
    assert b.state.features.finalized_level("transaction.version") == 2


def test_finalized_levels_are_kept_in_the_metadata_store(tmp_path):
    store = MetadataStore(tmp_path)
    Features(parse_levels("share.version=1"), store).update([("streams.version", 0, SAFE)], False)
    again = Features({}, MetadataStore(tmp_path).load())
    assert again.finalized_level("share.version") == 1 and again.finalized_level("streams.version") == 0
    assert again.epoch == 2


def test_a_cluster_node_finalizes_transaction_version_2_and_may_choose_1():
    """docs/CLUSTER.md: a partition's leader adds its partition to a transaction another broker
    coordinates, so a cluster finalizes Kafka 4.4's default; initial.feature.levels and
    UpdateFeatures still choose 1."""
    node = Features(ceilings=CLUSTER_CEILINGS)
    assert node.finalized_level("transaction.version") == 2
    assert {"name": "transaction.version", "min_version": 0, "max_version": 2} in node.supported()
    assert Features(parse_levels("transaction.version=1"), ceilings=CLUSTER_CEILINGS).finalized_level(
        "transaction.version") == 1
    assert node.update([("transaction.version", 1, SAFE)], False)[0] == E.NONE
    assert node.finalized_level("transaction.version") == 1
    assert node.update([("transaction.version", 2, UPGRADE)], False)[0] == E.NONE
    assert node.finalized_level("transaction.version") == 2


def _consumer_heartbeat(b):
    return b.call(68, 0, {"group_id": "g", "member_id": "m" * 22, "member_epoch": 0, "instance_id": None,
                          "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
                          "server_assignor": None, "topic_partitions": []})


def _share_heartbeat(b):
    return b.call(76, 1, {"group_id": "s", "member_id": "m" * 22, "member_epoch": 0, "rack_id": None,
                          "subscribed_topic_names": ["t"]})


def test_group_version_zero_turns_kip848_groups_off_and_an_upgrade_on_again():
    b = InProcessBroker(**{"initial.feature.levels": "group.version=0"})
    b.state.topics.create("t", 1)
    assert _consumer_heartbeat(b).error_code == E.UNSUPPORTED_VERSION
    described = b.call(69, 0, {"group_ids": ["g"], "include_authorized_operations": False}).groups[0]
    assert (described.group_id, described.error_code) == ("g", E.UNSUPPORTED_VERSION)
    assert _update(b, [("group.version", 1, UPGRADE)]).error_code == 0
    assert _consumer_heartbeat(b).error_code == 0


def test_share_version_zero_turns_share_groups_off():
    b = InProcessBroker(**{"initial.feature.levels": "share.version=0"})
    b.state.topics.create("t", 1)
    assert _share_heartbeat(b).error_code == E.UNSUPPORTED_VERSION
    assert b.call(77, 1, {"group_ids": ["s"], "include_authorized_operations": False}).groups[0].error_code \
        == E.UNSUPPORTED_VERSION
    fetch = b.call(78, 1, {"group_id": "s", "member_id": "m" * 22, "share_session_epoch": 0, "max_wait_ms": 0,
                           "min_bytes": 1, "max_bytes": 1024, "max_records": 10, "batch_size": 10,
                           "topics": [], "forgotten_topics_data": []})
    assert fetch.error_code == E.UNSUPPORTED_VERSION
    offsets = b.call(91, 0, {"group_id": "s", "topics": []})
    assert (offsets.error_code, offsets.error_message) == (E.UNSUPPORTED_VERSION, "The version of API is not supported.")
    assert _update(b, [("share.version", 1, UPGRADE)]).error_code == 0
    assert _share_heartbeat(b).error_code == 0
