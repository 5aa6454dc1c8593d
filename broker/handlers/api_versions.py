"""ApiVersions: the supported (api, version) ranges, generated from the registry.

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
    if ctx.api_version >= NAMES_SOFTWARE_SINCE and not (
            SOFTWARE_NAME_VERSION.fullmatch(req.client_software_name or "")
            and SOFTWARE_NAME_VERSION.fullmatch(req.client_software_version or "")):
        return {"error_code": int(ErrorCode.INVALID_REQUEST), "api_keys": [], "throttle_time_ms": 0,
                "finalized_features_epoch": -1}
    return {
        "error_code": 0,
        "api_keys": ctx.engines.advertised_apis(),
        "throttle_time_ms": 0,
        "finalized_features_epoch": -1,
    }
