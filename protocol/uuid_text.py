"""Kafka's Uuid as text (Uuid.toString and fromString): URL-safe base64 of the 16 bytes, with no
padding. Kafka prints topic ids so in partition.metadata, its logs and some error messages."""

from __future__ import annotations

import base64
import uuid


def uuid_text(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def uuid_from_text(text: str) -> uuid.UUID:
    """ValueError (binascii.Error is one) when ``text`` is no such Uuid."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
