"""Data-path answers (Metadata, Produce, Fetch) the conformance suite (tests/conformance,
issue 29) found to differ from Apache Kafka 4.4's, fixed in kipper; these hold without Kafka.
Each states what Kafka answers."""

from __future__ import annotations

import pytest

from kipper.client.admin import metadata
from kipper.protocol.errors import ErrorCode


def test_the_metadata_request_that_auto_creates_a_topic_does_not_show_it_yet(conn, unique):
    name = f"auto-{unique}"
    first = metadata(conn, [name], allow_auto_topic_creation=True).topics[0]
    assert (first.error_code, first.partitions) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    second = metadata(conn, [name]).topics[0]
    assert second.error_code == ErrorCode.NONE and len(second.partitions) >= 1


@pytest.mark.parametrize("auto", [False, True])
def test_an_illegal_topic_name_in_metadata_is_invalid_topic_exception(conn, auto):
    topic = metadata(conn, ["bad name!"], allow_auto_topic_creation=auto).topics[0]
    assert topic.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
