"""Shared fixtures: a real broker per test module or per test.

The broker is kipper.testing's embedded broker (the real one, in a thread, started in
milliseconds), unless the module is marked ``broker_subprocess`` (its clients hold the GIL
for long, or it reads the broker's log) or BROKER_UNDER_TEST=subprocess is set.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support.broker import BrokerProcess, make_broker

# pytester: tests/integration/test_pytest_plugin.py runs a user's suite; reference: Apache
# Kafka and a kipper configured alike, session fixtures (tests/conformance, issue 29)
pytest_plugins = ["pytester", "tests.support.reference"]


# `make test` runs the suite on two pytest-xdist workers (-n 2 --dist loadscope
# --no-loadscope-reorder), handing out units of work: each test module is one, so its module
# fixtures start once, and the suites around one long-lived session fixture are one unit each,
# so that fixture starts once too (a Spark cluster, loadgen runs and a JVM; Apache Kafka beside a
# kipper set up alike). Those go first, the longest first, while the modules fill in around them.
# (xdist's own --dist loadgroup cannot do this under pytest 9.2, which no longer lets a plugin
# rename a test's node id: the scheduler below cuts the units itself.)
LONG_UNITS = (("tests/spark/", "spark"), ("tests/conformance/", "kafka-reference"),
              ("tests/java_ecosystem/", "kafka-reference"), ("tests/client_suites/", "client-suites"))


def work_unit(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return next((unit for prefix, unit in LONG_UNITS if path.startswith(prefix)), path)


def pytest_collection_modifyitems(items):
    first = {unit: rank for rank, unit in enumerate(dict.fromkeys(unit for _, unit in LONG_UNITS))}
    items.sort(key=lambda item: first.get(work_unit(item.nodeid), len(first)))


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)


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
