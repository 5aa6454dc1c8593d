"""Apache Kafka beside kipper, configured alike (issue 29): the ``kafka_reference`` and
``kipper_reference`` session fixtures, registered by tests/conftest.py.

Both brokers get the same settings (``SHARED``), the same SASL users (``USERS``, PLAIN and
SCRAM on a SASL_PLAINTEXT listener), the StandardAuthorizer with ``admin`` and the
PLAINTEXT listener's ``ANONYMOUS`` as super users, and share groups enabled. Kafka is
fetched and started by scripts/kafka_reference.py; without Java or Maven the tests that
need it are skipped with one reason, or fail under CI=true (tests/support/requires.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts import kafka_reference as kref
from tests.support import requires
from tests.support.broker import BrokerProcess, free_port

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

# What both brokers are told. Kafka's defaults are left alone unless a scenario needs
# otherwise (a short cleaner back-off for compaction, one partition for the internal topics).
SHARED = {
    "num.partitions": "3",
    "auto.create.topics.enable": "true",
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin;User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "false",
    "log.cleaner.backoff.ms": "200",
    "group.share.min.record.lock.duration.ms": "1000",
    # streams groups (KIP-1071) assign at once, as classic ones do with the delay above at 0: a
    # new group's first assignment waits 3 s by default, the next ones 1 s after the previous
    "group.streams.initial.rebalance.delay.ms": "0",
    "group.streams.assignment.interval.ms": "0",
}
# Kafka turns share groups on with a feature level; kipper with group.share.enable.
KAFKA_FEATURES = {"share.version": 1}
# group.share.max.groups is seed 004's (10 by default); Kafka 4.4 has no such limit, and the suite
# leaves many share groups with members behind
KIPPER_ONLY = {"group.share.enable": "true", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
               "group.share.max.groups": "100",
               "initial.feature.levels": ",".join(f"{k}={v}" for k, v in KAFKA_FEATURES.items()),
               # scripts/kafka_reference.py sets Kafka's node.id (KRaft needs one): kipper's is set alike
               "node.id": "1"}


@dataclass
class Reference:
    """What a test needs of either broker."""

    name: str            # "kafka" or "kipper"
    bootstrap: str       # PLAINTEXT, principal User:ANONYMOUS (a super user)
    sasl_bootstrap: str  # SASL_PLAINTEXT with USERS
    version: str
    metrics_url: str | None = None  # kipper's metrics.http.listener (Kafka: none)
    data_dir: Path | None = None  # its log.dirs (the shared kipper: in memory, none)

    def request_counts(self) -> dict[tuple[str, int], int]:
        """kipper's requests answered so far per (API name, version), from its /metrics."""
        import urllib.request

        from prometheus_client.parser import text_string_to_metric_families

        with urllib.request.urlopen(self.metrics_url + "/metrics", timeout=10) as resp:
            text = resp.read().decode()
        return {(s.labels["request"], int(s.labels["version"])): int(s.value)
                for family in text_string_to_metric_families(text) for s in family.samples
                if s.name == "kafka_network_requestmetrics_requests_total"}

    def sasl_settings(self, user: str, mechanism: str = "SCRAM-SHA-256", password: str | None = None) -> dict[str, str]:
        """Command-config settings for kipper.client.connect.connect (``password``: of a user
        not in USERS, one a test made)."""
        return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                "sasl.username": user, "sasl.password": USERS[user] if password is None else password}


def require_kafka() -> None:
    """Skip (or under CI fail) when Kafka cannot be fetched or started here."""
    missing = kref.missing_tools()
    if missing:
        requires.unavailable(f"Apache Kafka as a reference needs Java and Maven: {missing}")


def start_kafka(workdir: Path) -> kref.KafkaReference:
    require_kafka()
    kafka = kref.KafkaReference(workdir=workdir, properties={**SHARED, **telemetry_exporter()},
                                scram_users=dict(USERS), features=dict(KAFKA_FEATURES),
                                heap=os.environ.get("KIPPER_KAFKA_HEAP", "512m"),
                                extra_classpath=telemetry_classpath())
    try:
        kafka.start()
    except kref.KafkaReferenceError as exc:
        kafka.stop()
        requires.unavailable(f"Apache Kafka could not be fetched or started: {exc}")
    warm_up(kafka.bootstrap)
    return kafka


TELEMETRY_SINK = "kipper.reference.TelemetrySink"


def telemetry_classpath() -> list[str]:
    """Kafka serves client telemetry (KIP-714) only with an exporter plugin: ours, compiled
    when a JDK is here (without one, Kafka answers without the telemetry APIs)."""
    from tests.support.java_programs import compiled_plugin

    if not Path(kref.java_binary()).with_name("javac").exists():
        return []
    return [str(compiled_plugin("kipper/reference/TelemetrySink.java", "broker"))]


def telemetry_exporter() -> dict[str, str]:
    return {"metric.reporters": TELEMETRY_SINK} if telemetry_classpath() else {}


def warm_up(bootstrap: str, timeout: float = 60.0) -> None:
    """Kafka creates __consumer_offsets and __transaction_state, and loads its coordinators,
    on first use, answering COORDINATOR_NOT_AVAILABLE / LOAD_IN_PROGRESS meanwhile, as any
    client sees once; kipper has them at start. Tests start after that moment."""
    import time

    from kipper.client.blocking import connect_any
    from kipper.protocol.messages import APIS

    deadline = time.monotonic() + timeout
    with connect_any(bootstrap) as conn:
        for key_type in (0, 1):  # group, transaction
            while True:
                resp = conn.request(10, {"key": "warm-up", "key_type": key_type, "coordinator_keys": ["warm-up"]},
                                    version=4)
                if resp.coordinators[0].error_code == 0 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        while conn.send_raw(APIS[22], 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                          "producer_id": -1, "producer_epoch": -1}).error_code:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)


def start_kipper(workdir: Path) -> BrokerProcess:
    from kipper.broker.security.credentials import CredentialStore

    config_dir = workdir / "config"
    store = CredentialStore(str(config_dir))
    for user, password in USERS.items():
        store.add_user(user, password)
    port, sasl_port = free_port(), free_port()
    listeners = f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    overrides = {**SHARED, **KIPPER_ONLY, "config.dir": str(config_dir), "metrics.http.listener": "http://127.0.0.1:0"}
    proc = BrokerProcess(overrides, port=port, listeners=listeners).start()
    proc.sasl_port = sasl_port
    proc.metrics_url = metrics_url_of(proc)
    warm_up(proc.bootstrap)  # as Kafka's: the coordinators' topics made by their first FindCoordinator
    return proc


def metrics_url_of(proc: BrokerProcess) -> str:
    """The /metrics address a ``kipper broker`` subprocess bound (metrics.http.listener with
    port 0: no port chosen ahead that another process could take meanwhile), from the
    broker_started line of its log (the last one: a restarted broker binds anew)."""
    import re
    import time

    deadline = time.monotonic() + 10
    while True:
        found = re.findall(r"metrics_http=(http://[\w.]+:\d+)", proc.log_text())
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert found, f"the broker logged no metrics_http address:\n{proc.log_text()[-2000:]}"
    return found[-1]


@pytest.fixture(scope="session")
def kafka_reference(tmp_path_factory):
    """Apache Kafka (newest 4.x), one combined KRaft node, for the whole session."""
    kafka = start_kafka(tmp_path_factory.mktemp("kafka-reference"))
    yield Reference("kafka", kafka.bootstrap, kafka.sasl_bootstrap, kafka.version, data_dir=Path(kafka.workdir) / "data")
    kafka.stop()


@pytest.fixture(scope="session")
def kipper_reference(tmp_path_factory):
    """A kipper broker (a subprocess) configured as ``kafka_reference`` is."""
    proc = start_kipper(tmp_path_factory.mktemp("kipper-reference"))
    from importlib.metadata import version

    yield Reference("kipper", proc.bootstrap, f"127.0.0.1:{proc.sasl_port}", version("kipper"), proc.metrics_url)
    proc.stop()
