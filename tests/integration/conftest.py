"""What the integration tests share: a negotiated connection to the test's broker."""

from __future__ import annotations

import pytest

from kipper.client.blocking import BlockingConnection


@pytest.fixture
def conn(broker):
    c = BlockingConnection("127.0.0.1", broker.port)
    c.negotiate()
    yield c
    c.close()
