"""UpdateFeatures (kafka-features upgrade|downgrade): ALTER on the cluster, then the
feature engine's checks (broker/features.py), answered as Kafka's controller answers:
one top-level error that names the first refused feature, and from v2 no per-feature
results. ApiVersions carries the levels (handlers/api_versions.py)."""

from __future__ import annotations

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME
from kipper.protocol.errors import ErrorCode

UPGRADE = 1
RESULTS_UNTIL = 1  # v2 answers without per-feature results


def handle_update_features(req, ctx):
    out = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": []}
    if not ctx.authorize(ALTER, CLUSTER, CLUSTER_NAME):
        return {**out, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "error_message": ctx.needs_permission("ALTER")}
    # Kafka's controller reads UpgradeType as sent; v0's AllowDowngrade never reaches it
    updates = [(u.feature, u.max_version_level, u.get("upgrade_type", UPGRADE)) for u in req.feature_updates]
    error, message = ctx.engines.features.update(updates, req.get("validate_only", False))
    if error != ErrorCode.NONE:
        return {**out, "error_code": int(error), "error_message":
                f"The update failed for all features since the following feature had an error: {message}"}
    if ctx.api_version <= RESULTS_UNTIL:
        out["results"] = [{"feature": u.feature, "error_code": 0, "error_message": "NONE"}
                          for u in req.feature_updates]
    return out
