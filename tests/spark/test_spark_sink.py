"""``loadgen --sink spark-kafka``: the workload's records written by Spark's Kafka sink
(Kafka's Java producer, idempotent) and audited by Spark's Kafka source (the Java
consumer, read_committed), on a SASL_PLAINTEXT listener with SCRAM and ACLs, configured
through the connector's kafka.* options as a PySpark team would: every record arrives
once, in order; a user without READ on the topics gets Kafka's authorization error."""

from __future__ import annotations

import json

import pytest

from kipper.client.acl_requests import AclBinding, create_acls
from kipper.client.blocking import connect_any
from tests.spark.conftest import spark_submit
from tests.support.certs import USERS, start_secure_broker

# the first test also waits for the shared Spark fixtures (a loadgen run with its audit, a JVM);
# on a busy 2-core machine that alone can pass the suite's 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PROTOCOL, MECHANISM = "SASL_PLAINTEXT", "SCRAM-SHA-256"
WORKLOAD = """\
name: java-sink
topics: 1
partitionsPerTopic: 3
messageSize: 200
producersPerTopic: 2
producerRate: 5000
testDurationMinutes: 0.1
keyDistributor: NO_KEY
topicPrefix: secure
"""


def jaas(user: str) -> str:
    return (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" '
            f'password="{USERS[user]}";')


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    # PLAINTEXT (User:ANONYMOUS) is the operators' listener: a super user
    b = start_secure_broker(tmp_path_factory.mktemp("sink"), {
        "authorizer.class.name": "standard", "super.users": "User:admin;User:ANONYMOUS"})
    with connect_any(b.bootstrap("PLAINTEXT")) as conn:
        # alice may create, write, read and describe the topics the loadgen makes (prefix "secure")
        grants = [AclBinding("TOPIC", "secure", "PREFIXED", "User:alice", "*", op, "ALLOW")
                  for op in ("CREATE", "WRITE", "READ", "DESCRIBE")]
        results = create_acls(conn, grants).results
        assert all(r.error_code == 0 for r in results), results
    yield b
    b.stop()


@pytest.fixture(scope="module")
def java_run(secure, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("java-run")
    (tmp / "w.yaml").write_text(WORKLOAD)
    config = tmp / "alice.properties"
    config.write_text(f"security.protocol={PROTOCOL}\nsasl.mechanism={MECHANISM}\n"
                      f"sasl.jaas.config={jaas('alice')}\n")
    proc = spark_submit("loadgen.py", "--bootstrap-server", secure.bootstrap(PROTOCOL), "--workload",
                        str(tmp / "w.yaml"), "--sink", "spark-kafka", "--command-config", str(config),
                        "--master", "local[2]", "--output", str(tmp / "r.json"), timeout=300)
    result = json.loads((tmp / "r.json").read_text()) if (tmp / "r.json").exists() else None
    return proc, result


def test_the_java_producer_sink_writes_over_sasl_scram_with_acls_and_audits_clean(java_run):
    proc, result = java_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["sink"] == "spark-kafka" and result["acked"] > 10_000
    assert result["stored_records"] == result["acked"] == result["sent"]
    audit = result["audit"]
    t = audit["totals"]
    assert audit["verdict"] == "clean" and t["records"] == t["distinct"] == t["acked"] == result["acked"]
    assert t["duplicates"] == t["missing"] == t["misordered"] == 0
    assert result["cpu"]["jvm_s"] > 0 and result["cpu"]["us_per_record"] > 0
    assert "not measured (the Java producer's callbacks stay in the JVM)" in proc.stdout


def test_a_user_without_read_acls_cannot_audit_the_topics(spark, secure, java_run):
    from kipper.spark_jobs.audit import audit

    _, result = java_run
    options = {"kafka.security.protocol": PROTOCOL, "kafka.sasl.mechanism": MECHANISM,
               "kafka.sasl.jaas.config": jaas("bob"), "kafka.default.api.timeout.ms": "10000",
               "kafka.request.timeout.ms": "5000"}
    with pytest.raises(Exception) as failure:
        audit(spark, secure.bootstrap(PROTOCOL), result["topics"], result["producers"], options)
    assert "TopicAuthorizationException" in str(failure.value) or "Not authorized" in str(failure.value)
    # alice, through the same session: the audit is the one the loadgen printed
    options["kafka.sasl.jaas.config"] = jaas("alice")
    again = audit(spark, secure.bootstrap(PROTOCOL), result["topics"], result["producers"], options)
    assert again["totals"] == result["audit"]["totals"]
