"""Shared fixtures: a real broker subprocess per test module or per test."""

from __future__ import annotations

import uuid

import pytest

from tests.support.broker import BrokerProcess

pytest_plugins = ["pytester"]  # tests/integration/test_pytest_plugin.py runs a user's suite


@pytest.fixture(scope="module")
def broker():
    """One broker for a module; tests use unique topic and group names."""
    proc = BrokerProcess().start()
    yield proc
    proc.stop()


@pytest.fixture
def fresh_broker():
    """A broker of one's own, for tests that need a clean state."""
    proc = BrokerProcess().start()
    yield proc
    proc.stop()


@pytest.fixture
def unique():
    """A short unique suffix for topic and group names."""
    return uuid.uuid4().hex[:10]
