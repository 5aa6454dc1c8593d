"""Broker config keys of issue #6 (security and producer-id quotas): values
are validated once, at load, with a message naming the key."""

from __future__ import annotations

import pytest

from kipper.broker.config import ConfigError, load
from kipper.broker.quota.manager import QuotaSettings


def test_defaults_are_kip_936s():
    s = QuotaSettings.from_config(load())
    assert (s.samples, s.window_s, s.expected_items, s.false_positive_rate) == (11, 3600, 10000, 0.001)
    assert load()["producer.id.quota.cache.cleanup.scheduler.interval.ms"] == 10000


@pytest.mark.parametrize("key,value,message", [
    ("producer.id.quota.bloom.filter.false.positive.rate", "0", "must be above 0.0"),
    ("producer.id.quota.bloom.filter.false.positive.rate", "0.6", "above the maximum 0.5"),
    ("producer.id.quota.window.num", "0", "below the minimum 1"),
    ("sasl.enabled.mechanisms", "PLAIN,GSSAPI", "must list one or more of"),
    ("sasl.enabled.mechanisms", "", "must list one or more of"),
    ("ssl.keystore.type", "JKS", "is not one of PEM"),
    ("ssl.client.auth", "always", "is not one of none"),
    ("super.users", "admin", "is not of the form User:<name>"),
])
def test_bad_values_are_refused_with_the_key_named(key, value, message):
    with pytest.raises(ConfigError, match=rf"^{key}: .*{message}"):
        load(overrides={key: value})


def test_tls_listener_needs_a_keystore():
    with pytest.raises(ConfigError, match="ssl.keystore.location is required"):
        load(overrides={"listeners": "SSL://127.0.0.1:0"})


def test_keystore_must_be_a_file(tmp_path):
    with pytest.raises(ConfigError, match="ssl.keystore.location: .* is not a readable file"):
        load(overrides={"listeners": "SSL://127.0.0.1:0", "ssl.keystore.location": str(tmp_path / "nope.pem")})


def test_client_auth_needs_a_truststore(tmp_path):
    with pytest.raises(ConfigError, match="ssl.client.auth needs ssl.truststore.location"):
        load(overrides={"ssl.client.auth": "required"})


def test_config_dir_may_not_be_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ConfigError, match="config.dir: .* is not a directory"):
        load(overrides={"config.dir": str(f)})


def test_mechanisms_and_super_users_parse():
    c = load(overrides={"sasl.enabled.mechanisms": " SCRAM-SHA-512 , PLAIN", "super.users": "User:a; User:b"})
    assert c["sasl.enabled.mechanisms"] == ("SCRAM-SHA-512", "PLAIN")
