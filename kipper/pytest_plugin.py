"""pytest fixtures for a real Kafka broker in a test suite, registered as the ``pytest11``
entry point ``kipper`` (``pip install kipper`` is all a project does).

- ``kafka_broker``: one embedded kipper broker (kipper.testing.EmbeddedBroker) per test
  session; under pytest-xdist each worker is a session of its own, so each has its own
  broker and workers never see each other's topics.
- ``kafka_bootstrap_servers``: its ``host:port``.
- ``kafka_topic``: a factory of fresh, uniquely named topics
  (``kafka_topic(partitions=3, configs={"retention.ms": "60000"})``), deleted after the test.
- ``schema_registry_url``: the broker's Schema Registry (``http://127.0.0.1:<port>``), on by
  default where the ``kipper[schema-registry]`` extra is installed
  (``schema.registry.listeners=`` turns it off).

Broker properties come from the ini option ``kafka_broker_overrides`` (one ``key=value``
a line) and then ``--kafka-broker-override key=value`` flags, which win.
``kafka_broker_subprocess = true`` (or ``--kafka-broker-subprocess``) runs the broker in a
child process instead of a thread, for suites whose clients hold the GIL for long.
This module imports nothing of the broker until a fixture is used.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("kipper", "kipper: an embedded Kafka broker")
    group.addoption("--kafka-broker-override", action="append", default=[], metavar="KEY=VALUE",
                    dest="kafka_broker_overrides",
                    help="broker property for the kafka_broker fixture (Kafka's names), repeatable; "
                         "wins over the kafka_broker_overrides ini option")
    group.addoption("--kafka-broker-subprocess", action="store_true", default=None,
                    dest="kafka_broker_subprocess",
                    help="run the kafka_broker fixture's broker in a subprocess instead of a thread")
    parser.addini("kafka_broker_overrides", type="linelist", default=[],
                  help="broker properties for the kafka_broker fixture, one key=value a line")
    parser.addini("kafka_broker_subprocess", type="bool", default=False,
                  help="run the kafka_broker fixture's broker in a subprocess instead of a thread")


def broker_overrides(config) -> dict[str, str]:
    """The ini option's lines, then the command line's flags."""
    out: dict[str, str] = {}
    for item in [*config.getini("kafka_broker_overrides"), *config.getoption("kafka_broker_overrides")]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"kipper: broker override '{item}' is not key=value")
        out[key.strip()] = value.strip()
    return out


@pytest.fixture(scope="session")
def kafka_broker(request):
    """A real kipper broker for the whole session (per xdist worker)."""
    from kipper.testing import EmbeddedBroker

    config = request.config
    subprocess = config.getoption("kafka_broker_subprocess")
    if subprocess is None:
        subprocess = config.getini("kafka_broker_subprocess")
    overrides = broker_overrides(config)
    if "schema.registry.listeners" not in overrides and _registry_available():
        overrides["schema.registry.listeners"] = "http://127.0.0.1:0"
    broker = EmbeddedBroker(overrides, subprocess=bool(subprocess))
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
