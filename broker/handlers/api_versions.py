"""ApiVersions: the supported (api, version) ranges, generated from the registry, and
the feature flags (v3+): supported ranges and finalized levels (broker/features.py).

From v3 the client names its software; a name or version that Kafka's pattern refuses
(letters, digits, '-' and '.', starting and ending with a letter or digit:
ApiVersionsRequest.isValid) gets INVALID_REQUEST and no ranges, as from Kafka; the
connection stays open and the client may ask again.
"""

from __future__ import annotations

import re

from kipper.protocol.errors import ErrorCode

SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
NAMES_SOFTWARE_SINCE = 3


def handle_api_versions(req, ctx):
    if ctx.api_version >= NAMES_SOFTWARE_SINCE:
        if not (SOFTWARE_NAME_VERSION.fullmatch(req.client_software_name or "")
                and SOFTWARE_NAME_VERSION.fullmatch(req.client_software_version or "")):
            return {"error_code": int(ErrorCode.INVALID_REQUEST), "api_keys": [], "throttle_time_ms": 0,
                    "finalized_features_epoch": -1}
        # KIP-511: what client-metrics subscriptions match on (KIP-714)
        ctx.session.client_software = (req.client_software_name, req.client_software_version)
    features = ctx.engines.features
    return {
        "error_code": 0,
        "api_keys": ctx.engines.advertised_apis(),
        "throttle_time_ms": 0,
        # below v4 Kafka leaves out the features whose range starts at 0 (KAFKA-17492)
        "supported_features": features.supported(omit_min_zero=ctx.api_version < 4),
        "finalized_features_epoch": features.epoch,
        "finalized_features": features.finalized(),
    }
