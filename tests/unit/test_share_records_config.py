"""SHARE_CHECKPOINT/SHARE_DELTA values and the share-group configuration keys."""

from __future__ import annotations

import pytest

from kipper.broker.config import KEYS, ConfigError, load
from kipper.broker.share.settings import ShareSettings
from kipper.protocol import records
from kipper.protocol import share_records as sr


def test_delta_value_round_trips_with_the_seed_field_names():
    value = {"group_id": "G1", "checkpoint_epoch": 65535, "back_offset": 130,
             "states": [{"base_offset": 100, "last_offset": 109, "state": 2, "delivery_count": 1}]}
    kind, decoded = sr.decode_batch(sr.delta_batch(value))
    assert kind == records.SHARE_DELTA == 6
    assert sr.to_seed_json(kind, decoded) == {
        "GroupId": "G1", "CheckpointEpoch": 65535, "BackOffset": 130,
        "States": [{"BaseOffset": 100, "LastOffset": 109, "State": 2, "DeliveryCount": 1}]}


def test_checkpoint_is_a_control_batch_of_type_5_with_a_versioned_value():
    value = {"group_id": "G", "checkpoint_epoch": 1, "start_offset": 5, "end_offset": 9, "states": []}
    batch = records.decode_batch(sr.checkpoint_batch(value))
    assert batch.header.is_control and not batch.header.is_transactional
    (rec,) = batch.records
    assert records.control_type(rec.key) == records.SHARE_CHECKPOINT == 5
    assert rec.value[:2] == b"\x00\x00"  # value version 0
    assert sr.decode_value(5, rec.value).end_offset == 9


def test_other_control_batches_are_not_share_records():
    marker = records.build_control_batch(records.COMMIT, records.end_txn_marker(0))
    assert sr.decode_batch(marker) is None
    with pytest.raises(sr.UnknownShareRecord):
        sr.decode_value(6, b"\x00\x07rest")


# --- configuration ----------------------------------------------------------------------------

SEED_RANGES = [  # (key, default, min, max) from the seed's table
    ("group.share.delivery.count.limit", 5, 2, 10),
    ("group.share.record.lock.duration.ms", 30000, 1000, 60000),
    ("group.share.record.lock.duration.max.ms", 60000, 1000, 3600000),
    ("group.share.max.groups", 10, 1, 100),
    ("group.share.max.size", 200, 10, 1000),
]


@pytest.mark.parametrize("key,default,lo,hi", SEED_RANGES)
def test_share_keys_have_the_seed_default_and_range(key, default, lo, hi):
    assert load()[key] == default
    fixed = {"group.share.record.lock.duration.max.ms": "3600000"} if key.endswith("duration.ms") else {}
    if key == "group.share.record.lock.duration.max.ms":
        fixed = {"group.share.record.lock.duration.ms": "1000"}
    assert load(overrides={key: str(lo), **fixed})[key] == lo
    assert load(overrides={key: str(hi), **fixed})[key] == hi
    with pytest.raises(ConfigError, match=rf"^{key}: {lo - 1} is below the minimum {lo}$"):
        load(overrides={key: str(lo - 1)})
    with pytest.raises(ConfigError, match=rf"^{key}: {hi + 1} is above the maximum {hi}$"):
        load(overrides={key: str(hi + 1)})


def test_record_lock_cap_has_kafkas_name_default_and_bounds():
    # Kafka 4.2+ (ShareGroupConfig): 2000 in 100..10000, within the group-config bounds
    # min (100, in 100..2000) and max (4000, in 2000..10000); the seed's name still works
    config = load()
    assert (config["group.share.partition.max.record.locks"],
            config["group.share.min.partition.max.record.locks"],
            config["group.share.max.partition.max.record.locks"]) == (2000, 100, 4000)
    assert load(overrides={"group.share.record.lock.partition.limit": "150"})[
        "group.share.partition.max.record.locks"] == 150
    top = {"group.share.partition.max.record.locks": "10000",
           "group.share.max.partition.max.record.locks": "10000"}
    assert load(overrides=top)["group.share.partition.max.record.locks"] == 10000
    for key, value, problem in (
            ("group.share.partition.max.record.locks", "99", "is below the minimum 100"),
            ("group.share.partition.max.record.locks", "10001", "is above the maximum 10000"),
            ("group.share.min.partition.max.record.locks", "2001", "is above the maximum 2000"),
            ("group.share.max.partition.max.record.locks", "1999", "is below the minimum 2000")):
        with pytest.raises(ConfigError, match=rf"^{key}: {value} {problem}$"):
            load(overrides={key: value})
    with pytest.raises(ConfigError, match="group.share.partition.max.record.locks: 5000 is outside"):
        load(overrides={"group.share.partition.max.record.locks": "5000"})
    with pytest.raises(ConfigError, match="group.share.partition.max.record.locks: 150 is outside"):
        load(overrides={"group.share.partition.max.record.locks": "150",
                        "group.share.min.partition.max.record.locks": "200"})


def test_share_groups_are_enabled_by_default_and_keys_are_in_one_section():
    config = load()
    assert config["group.share.enable"] is True
    assert config["group.share.session.timeout.ms"] == 45000
    assert config["group.share.heartbeat.interval.ms"] == 5000
    names = [k for k in KEYS if k.startswith("group.share.")]
    assert all(KEYS[k].section == "share" for k in names)


@pytest.mark.parametrize("overrides,message", [
    ({"group.share.session.timeout.ms": "30000"}, "outside"),
    ({"group.share.heartbeat.interval.ms": "20000"}, "outside"),
    ({"group.share.record.lock.duration.ms": "50000",
      "group.share.record.lock.duration.max.ms": "40000"}, "above"),
    ({"group.share.min.session.timeout.ms": "1000", "group.share.session.timeout.ms": "5000",
      "group.share.min.heartbeat.interval.ms": "10", "group.share.heartbeat.interval.ms": "5000"},
     "below group.share.session.timeout.ms"),
    ({"group.share.auto.offset.reset": "middle"}, "must be either .earliest., .latest."),
    ({"group.share.auto.offset.reset.groups": "g"}, "not GROUP:earliest"),
])
def test_inconsistent_share_settings_are_startup_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load(overrides=overrides)


def test_settings_come_from_the_config():
    config = load(overrides={"group.share.auto.offset.reset.groups": "a:earliest",
                             "group.share.delivery.count.limit": "3"})
    s = ShareSettings.from_config(config)
    assert s.auto_offset_reset_groups == {"a": "earliest"} and s.delivery_count_limit == 3
