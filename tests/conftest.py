"""Shared fixtures: a real broker per test module or per test.

The broker is kipper.testing's embedded broker (the real one, in a process of its own
forked ready from the zygote in milliseconds), unless the module is marked
``broker_subprocess`` (it runs the `kipper broker` command itself) or
BROKER_UNDER_TEST=subprocess is set.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support.broker import BrokerProcess, make_broker

# pytester: tests/integration/test_pytest_plugin.py runs a user's suite; reference: Apache
# Kafka and a kipper configured alike, session fixtures (tests/conformance, issue 29)
pytest_plugins = ["pytester", "tests.support.reference"]


# make test's units of work and its xdist scheduler (tests/support/scheduling.py)
from tests.support.scheduling import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: E402,F401


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's confluent-kafka consumers are closed while its broker still runs.

    A failing assert skips the test's own ``close()``. The consumer then lives on in the
    traceback, and is destroyed whenever the last reference goes, often in a later test,
    with its broker long stopped. librdkafka's destroy can then spin for ever
    (confluentinc/librdkafka#5434): the worker hangs instead of reporting the failure.
    """
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and call.excinfo is not None:
        _close_consumers_of(call.excinfo.tb)


def _close_consumers_of(tb) -> None:
    try:
        from confluent_kafka import Consumer
    except ImportError:
        return
    seen: set[int] = set()
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if type(value) is Consumer and id(value) not in seen:
                seen.add(id(value))
                try:
                    value.close()
                except RuntimeError:  # closed already
                    pass
        tb = tb.tb_next
