"""Library logging: structlog events routed through the standard ``logging``
module, so an application that configures nothing sees only warnings."""

from __future__ import annotations

import logging

import structlog


def get_logger(name: str):
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=[structlog.processors.format_exc_info, structlog.processors.KeyValueRenderer(
            key_order=["event"], drop_missing=True)],
    )
