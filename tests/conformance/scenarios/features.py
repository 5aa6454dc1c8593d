"""Issue 38: feature flags (ApiVersions' features, UpdateFeatures), transaction version 2
(KIP-890 part 2) and client telemetry (KIP-714) against Kafka 4.4.

Both brokers serve every scenario of the session at once, so nothing here changes a
finalized level for real: updates that would succeed are sent ``validate_only`` (or are
no-ops at the current level), and the refused ones change nothing anyway."""

from __future__ import annotations

from kipper.protocol.messages import APIS
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario

UPDATE_FEATURES = APIS[57]
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def update_features(run, updates, *, version=None, validate_only=True, label="update features"):
    v = k.top(UPDATE_FEATURES) if version is None else version
    return run.call(UPDATE_FEATURES, v, {"timeout_ms": 60000, "validate_only": validate_only, "feature_updates": [
        {"feature": name, "max_version_level": level, "upgrade_type": kind, "allow_downgrade": kind != UPGRADE}
        for name, level, kind in updates]}, label=label)


def api_versions(run, v, label="api versions"):
    return run.call(k.API_VERSIONS, v, {"client_software_name": "conformance", "client_software_version": "1.0"},
                    label=label)


def probe_update_features(run, v):
    """The versions probe: a downgrade validated only, and one refused."""
    update_features(run, [("transaction.version", 1, SAFE_DOWNGRADE)], version=v, label="validate a downgrade")
    update_features(run, [("transaction.version", 3, UPGRADE)], version=v, label="a level not supported")


@scenario("features/api-versions-at-each-version")
def _(run):
    for v in range(k.API_VERSIONS.min_version, k.API_VERSIONS.max_version + 1):
        api_versions(run, v, label=f"v{v}")


@scenario("features/update-validate-only")
def _(run):
    update_features(run, [("transaction.version", 1, SAFE_DOWNGRADE)], label="a safe downgrade")
    update_features(run, [("share.version", 0, UNSAFE_DOWNGRADE)], label="an unsafe downgrade to 0")
    update_features(run, [("group.version", 0, SAFE_DOWNGRADE), ("streams.version", 0, SAFE_DOWNGRADE)],
                    label="two downgrades")
    update_features(run, [("eligible.leader.replicas.version", 0, SAFE_DOWNGRADE)], label="ELR off")
    update_features(run, [], label="nothing to update")
    update_features(run, [("transaction.version", 2, UPGRADE)], validate_only=False, label="the level it has")
    update_features(run, [("kraft.version", 1, UPGRADE)], validate_only=False, label="kraft.version it has")
    api_versions(run, 4, label="nothing changed")


@scenario("features/update-refused")
def _(run):
    update_features(run, [("transaction.version", 1, UPGRADE)], label="a downgrade typed as an upgrade")
    update_features(run, [("transaction.version", 3, UPGRADE)], label="above the supported range")
    update_features(run, [("group.version", -1, SAFE_DOWNGRADE)], label="a negative level")
    update_features(run, [("share.version", 2, 7)], label="an unknown upgrade type")
    update_features(run, [("share.version", 3, SAFE_DOWNGRADE)], label="a downgrade to a newer level")
    update_features(run, [("no.such.version", 1, UPGRADE)], label="an unknown feature")
    update_features(run, [("no.such.version", 0, SAFE_DOWNGRADE)], label="an unknown feature to 0")
    update_features(run, [("kraft.version", 0, SAFE_DOWNGRADE)], label="kraft.version down")
    update_features(run, [("metadata.version", 30, SAFE_DOWNGRADE)], label="metadata.version down (safe)")
    update_features(run, [("metadata.version", 30, UNSAFE_DOWNGRADE)], label="metadata.version down (unsafe)")
    update_features(run, [("metadata.version", 34, UPGRADE)], label="metadata.version above latest production")
    update_features(run, [("metadata.version", 6, SAFE_DOWNGRADE)], label="metadata.version below the minimum")
    update_features(run, [("group.version", 0, SAFE_DOWNGRADE), ("streams.version", 5, UPGRADE)],
                    label="one refused refuses the request")
    for v in (0, 1):
        update_features(run, [("transaction.version", 1, UPGRADE)], version=v, label=f"refused at v{v}")
    api_versions(run, 4, label="nothing changed")


@scenario("features/update-needs-alter-on-the-cluster")
def _(run):
    run.conn("alice", user="alice")
    run.call(UPDATE_FEATURES, k.top(UPDATE_FEATURES), {"timeout_ms": 60000, "validate_only": True, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": SAFE_DOWNGRADE}]},
        conn="alice", label="alice, without ALTER on the cluster")


# the version probes of the APIs this module covers (scenarios/versions.py runs them)
PROBES = {57: probe_update_features}
