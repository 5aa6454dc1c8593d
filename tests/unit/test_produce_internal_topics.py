"""A client's Produce to one of Kafka's internal topics (__consumer_offsets,
__transaction_state, __share_group_state) is refused with INVALID_TOPIC_EXCEPTION, as
Kafka's ReplicaManager refuses it, whether or not kipper has made the topic yet; nothing is
appended to the journal a coordinator keeps there."""

from __future__ import annotations

import pytest

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker


@pytest.mark.parametrize("name", ["__consumer_offsets", "__transaction_state", "__share_group_state"])
def test_an_internal_topic_not_made_yet_is_refused(name):
    b = InProcessBroker()
    part = b.produce(name, 0, [(b"k", b"v")])
    assert (part.error_code, part.base_offset, part.log_start_offset) == (E.INVALID_TOPIC_EXCEPTION, -1, -1)
    assert b.state.topics.get(name) is None  # and it is not made by the refusal


def test_an_internal_topic_in_use_is_refused_and_keeps_its_records():
    b = InProcessBroker()
    topic = b.state.topics.internal("__consumer_offsets", 3, {"cleanup.policy": "compact"})
    before = [p.log_end_offset for p in topic.partitions]
    for index in range(3):
        assert b.produce("__consumer_offsets", index, [(b"k", b"v")]).error_code == E.INVALID_TOPIC_EXCEPTION
    # a partition it does not have: Kafka checks that first
    assert b.produce("__consumer_offsets", 3, [(b"k", b"v")]).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert [p.log_end_offset for p in topic.partitions] == before


def test_a_topic_merely_named_with_underscores_takes_records():
    b = InProcessBroker()
    b.state.topics.create("__mine", 1)
    assert b.produce("__mine", 0, [(b"k", b"v", b.now)]).error_code == 0
