"""Shared fixtures: a real broker per test module or per test.

The broker is kipper.testing's embedded broker (the real one, in a thread, started in
milliseconds), unless the module is marked ``broker_subprocess`` (its clients hold the GIL
for long, or it reads the broker's log) or BROKER_UNDER_TEST=subprocess is set.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support.broker import BrokerProcess, make_broker

pytest_plugins = ["pytester"]  # tests/integration/test_pytest_plugin.py runs a user's suite


@pytest.fixture(scope="module")
def broker(request):
    """One broker for a module; tests use unique topic and group names."""
    proc = BrokerProcess() if request.node.get_closest_marker("broker_subprocess") else make_broker()
    proc.start()
    yield proc
    proc.stop()


@pytest.fixture
def fresh_broker():
    """A broker of one's own, for tests that need a clean state."""
    proc = make_broker().start()
    yield proc
    proc.stop()


@pytest.fixture
def unique():
    """A short unique suffix for topic and group names."""
    return uuid.uuid4().hex[:10]
