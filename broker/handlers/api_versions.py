"""ApiVersions: the supported (api, version) ranges, generated from the registry."""

from __future__ import annotations


def handle_api_versions(req, ctx):
    return {
        "error_code": 0,
        "api_keys": ctx.engines.advertised_apis(),
        "throttle_time_ms": 0,
        "finalized_features_epoch": -1,
    }
