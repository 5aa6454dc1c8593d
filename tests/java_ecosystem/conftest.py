"""Kafka's own Java clients, command-line tools and Kafka Streams against kipper, each beside
Apache Kafka (issue 30). Needs Java (a JDK: our programs in tests/java/ are compiled here)
and Maven (scripts/kafka-reference fetches Kafka): without them this directory is skipped
with one reason, and under CI=true the run fails instead (tests/support/requires.py).

The brokers are the session's ``kafka_reference`` and ``kipper_reference``
(tests/support/reference.py); ``tools`` is one tool JVM per broker for the whole session
(tests/java_ecosystem/tool_pair.py).
"""

from __future__ import annotations

import pytest

from tests.support.java_programs import compiled_classes, require_javac
from tests.support.reference import require_kafka

require_kafka()
require_javac()


@pytest.fixture(scope="session")
def java_classes():
    return compiled_classes()


@pytest.fixture(scope="session")
def tools(kafka_reference, kipper_reference, java_classes, tmp_path_factory):
    from tests.java_ecosystem.tool_pair import Broker, ToolPair

    pair = ToolPair(Broker("kafka", kafka_reference.bootstrap, kafka_reference.sasl_bootstrap),
                    Broker("kipper", kipper_reference.bootstrap, kipper_reference.sasl_bootstrap),
                    tmp_path_factory.mktemp("tool-jvms"))
    yield pair
    pair.close()
