"""ApiVersions: the supported (api, version) ranges, generated from the registry, and
the feature flags (v3+): supported ranges and finalized levels (broker/features.py)."""

from __future__ import annotations


def handle_api_versions(req, ctx):
    features = ctx.engines.features
    if ctx.api_version >= 3:  # KIP-511: what client-metrics subscriptions match on (KIP-714)
        ctx.session.client_software = (req.client_software_name, req.client_software_version)
    return {
        "error_code": 0,
        "api_keys": ctx.engines.advertised_apis(),
        "throttle_time_ms": 0,
        # below v4 Kafka leaves out the features whose range starts at 0 (KAFKA-17492)
        "supported_features": features.supported(omit_min_zero=ctx.api_version < 4),
        "finalized_features_epoch": features.epoch,
        "finalized_features": features.finalized(),
    }
