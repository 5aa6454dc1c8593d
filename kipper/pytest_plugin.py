"""pytest fixtures for a real Kafka broker in a test suite, registered as the ``pytest11``
entry point ``kipper`` (``pip install kipper`` is all a project does).

- ``kafka_broker``: one embedded kipper broker (kipper.testing.EmbeddedBroker) per test
  session; under pytest-xdist each worker is a session of its own, so each has its own
  broker and workers never see each other's topics. It runs in a process of its own,
  forked ready from a zygote in milliseconds, so no client can freeze it.
- ``kafka_bootstrap_servers``: its ``host:port``.
- ``kafka_topic``: a factory of fresh, uniquely named topics
  (``kafka_topic(partitions=3, configs={"retention.ms": "60000"})``), deleted after the test.
- ``kafka_faults``: the broker's fault injection (kipper/testing/faults.py), cleared after
  the test.
- ``schema_registry_url``: the broker's Schema Registry (``http://127.0.0.1:<port>``), on by
  default where the ``kipper[schema-registry]`` extra is installed
  (``schema.registry.listeners=`` turns it off).
- ``kafka_cluster``: a factory of kipper clusters (kipper.cluster.EmbeddedCluster, docs/
  CLUSTER.md): ``kafka_cluster(brokers=3)`` starts a controller and three broker processes
  (with the same broker overrides) and stops them after the test; ``kill(2)``,
  ``start_broker(2)``, ``move_leader(...)``, ``faults(2)`` act on it.

Broker properties come from the ini option ``kafka_broker_overrides`` (one ``key=value``
a line) and then ``--kafka-broker-override key=value`` flags, which win.
``kafka_broker_mode = thread`` (or ``--kafka-broker-mode thread``) runs the broker in a
thread of the test process instead: only for pure-Python clients (a C client that blocks
holding the GIL freezes a thread broker and the test with it).

``kafka_watchdog = timeout`` (or a number of seconds) arms a watchdog that needs no GIL
for each test (kipper/testing/watchdog.py): a test that hangs past pytest-timeout's
timeout plus ``kafka_watchdog_margin`` seconds ends its process with every thread's
stack, and under pytest-xdist the run goes on without it.
This module imports nothing of the broker until a fixture is used.
"""

from __future__ import annotations

import pytest

FIXTURES = frozenset({"kafka_broker", "kafka_bootstrap_servers", "kafka_topic", "kafka_faults", "schema_registry_url"})


def pytest_addoption(parser) -> None:
    group = parser.getgroup("kipper", "kipper: an embedded Kafka broker")
    group.addoption("--kafka-broker-override", action="append", default=[], metavar="KEY=VALUE",
                    dest="kafka_broker_overrides",
                    help="broker property for the kafka_broker fixture (Kafka's names), repeatable; "
                         "wins over the kafka_broker_overrides ini option")
    group.addoption("--kafka-broker-mode", choices=("process", "thread"), default=None, dest="kafka_broker_mode",
                    help="where the kafka_broker fixture's broker runs: its own process (default) or a thread "
                         "of the test process (pure-Python clients only)")
    group.addoption("--kafka-broker-subprocess", action="store_const", const="process", dest="kafka_broker_mode",
                    help="the older spelling of --kafka-broker-mode process")
    group.addoption("--kafka-watchdog", default=None, dest="kafka_watchdog", metavar="off|timeout|SECONDS",
                    help="end a hung test's process with every thread's stack (see kafka_watchdog)")
    parser.addini("kafka_broker_overrides", type="linelist", default=[],
                  help="broker properties for the kafka_broker fixture, one key=value a line")
    parser.addini("kafka_broker_mode", default="process",
                  help="process (default) or thread: where the kafka_broker fixture's broker runs")
    parser.addini("kafka_broker_subprocess", type="bool", default=None,
                  help="older spelling: true is kafka_broker_mode = process, false is thread")
    parser.addini("kafka_watchdog", default="off",
                  help="off, timeout (pytest-timeout's timeout plus kafka_watchdog_margin) or seconds: "
                       "a test running longer ends its process with every thread's stack, needing no GIL")
    parser.addini("kafka_watchdog_margin", default="30",
                  help="seconds past pytest-timeout's timeout before the watchdog fires (kafka_watchdog = timeout)")


def broker_overrides(config) -> dict[str, str]:
    """The ini option's lines, then the command line's flags."""
    out: dict[str, str] = {}
    for item in [*config.getini("kafka_broker_overrides"), *config.getoption("kafka_broker_overrides")]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"kipper: broker override '{item}' is not key=value")
        out[key.strip()] = value.strip()
    return out


def broker_mode(config) -> str:
    mode = config.getoption("kafka_broker_mode")
    if mode is None:
        legacy = config.getini("kafka_broker_subprocess")
        mode = config.getini("kafka_broker_mode") if legacy is None else ("process" if legacy else "thread")
    mode = str(mode).strip().lower()
    if mode not in ("process", "thread"):
        raise pytest.UsageError(f"kipper: kafka_broker_mode must be process or thread, not {mode!r}")
    return mode


def pytest_configure(config) -> None:
    from kipper.testing import watchdog

    text = config.getoption("kafka_watchdog") or config.getini("kafka_watchdog")
    try:
        setting = watchdog.parse_setting(text)
        margin = float(config.getini("kafka_watchdog_margin"))
    except ValueError as exc:
        raise pytest.UsageError(f"kipper: {exc}") from None
    if setting is None:
        return
    if not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") != "no":
        # the pytest-xdist controller: it runs no test, and its workers' stacks come here
        watchdog.controller_dir()
        config.pluginmanager.register(_CrashStacks(), "kipper-watchdog-stacks")
    else:
        config.pluginmanager.register(_Armed(watchdog.Watchdog(config, setting, margin)), "kipper-watchdog")


class _Armed:
    def __init__(self, dog):
        self.dog = dog

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.dog.arm(item)
        try:
            yield
        finally:
            self.dog.disarm()


class _CrashStacks:
    """On the xdist controller: a crashed worker's stacks go in its test's report."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem, report, sched):
        from kipper.testing.watchdog import stacks_of

        stacks = stacks_of(report.node.gateway.id)
        if stacks:
            report.longrepr = f"{report.longrepr}\n{stacks}"


def pytest_collection_modifyitems(session, config, items) -> None:
    """A test that uses a kipper fixture: the zygote starts now, while the others run."""
    if broker_mode(config) == "process" and any(FIXTURES.intersection(getattr(i, "fixturenames", ())) for i in items):
        from kipper.testing.zygote import prestart

        prestart()


@pytest.fixture(scope="session")
def kafka_broker(request):
    """A real kipper broker for the whole session (per xdist worker), in a process of its
    own unless ``kafka_broker_mode = thread``."""
    from kipper.testing import EmbeddedBroker

    overrides = broker_overrides(request.config)
    if "schema.registry.listeners" not in overrides and _registry_available():
        overrides["schema.registry.listeners"] = "http://127.0.0.1:0"
    broker = EmbeddedBroker(overrides, mode=broker_mode(request.config))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap_servers(kafka_broker) -> str:
    return kafka_broker.bootstrap_servers


@pytest.fixture(scope="session")
def schema_registry_url(kafka_broker) -> str:
    """The broker's Schema Registry, for a client's ``url``."""
    return kafka_broker.schema_registry_url


def _registry_available() -> bool:
    from kipper.broker.schema_registry.formats import missing_libraries

    return not missing_libraries()


@pytest.fixture
def kafka_topic(kafka_broker, request):
    """``kafka_topic(partitions=1, configs=None, *, name=None) -> str``: creates a topic
    named after the test plus a unique suffix; every topic made is deleted afterwards."""
    from kipper.testing import unique_name

    made: list[str] = []

    def make(partitions: int = 1, configs: dict | None = None, *, name: str | None = None) -> str:
        topic = kafka_broker.create_topic(name or unique_name(request.node.name), partitions, configs)
        made.append(topic)
        return topic

    yield make
    if made and kafka_broker.running:
        kafka_broker.delete_topics(made)


@pytest.fixture
def kafka_faults(kafka_broker):
    """``kafka_broker.faults`` for one test: what it sets is cleared afterwards."""
    kafka_broker.faults.clear()
    yield kafka_broker.faults
    if kafka_broker.running:
        kafka_broker.faults.clear()


@pytest.fixture
def kafka_cluster(request):
    """``kafka_cluster(brokers=3, overrides=None, **kwargs) -> EmbeddedCluster``, started;
    every cluster made is stopped after the test."""
    from kipper.cluster import EmbeddedCluster

    made = []

    def make(brokers: int = 3, overrides: dict | None = None, **kwargs) -> EmbeddedCluster:
        cluster = EmbeddedCluster(brokers, {**broker_overrides(request.config), **(overrides or {})}, **kwargs)
        made.append(cluster)
        return cluster.start()

    yield make
    for cluster in made:
        cluster.stop()
