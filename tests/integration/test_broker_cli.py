"""The command line: ``kipper broker`` config handling and signals, the
``python -m kipper.broker`` alias, and ``kipper topics`` end to end against a real
broker, including the errors a user sees (one line, no traceback)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kipper.client.admin import metadata
from kipper.client.blocking import BlockingConnection
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.broker import ROOT, BrokerProcess, free_port

FETCH = 1
_CONSOLE_SCRIPT = Path(sys.executable).with_name("kipper")
KIPPER = [str(_CONSOLE_SCRIPT)] if _CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "kipper"]


def kipper(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([*KIPPER, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess, *, mentions: str) -> None:
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert mentions in lines[0], lines[0]


def auto_created_partitions(port: int, topic: str) -> int:
    with BlockingConnection("127.0.0.1", port, timeout=10) as conn:
        for _ in range(20):
            meta = metadata(conn, [topic], allow_auto_topic_creation=True)
            if meta.topics[0].error_code == 0:
                return len(meta.topics[0].partitions)
            # Kafka answers the request that auto-creates with UNKNOWN_TOPIC_OR_PARTITION
            assert meta.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, meta
    raise AssertionError(f"topic {topic} was not auto-created")


# --- kipper broker: configuration errors ------------------------------------------------------

def broker_with(*args: str) -> subprocess.CompletedProcess:
    """Run ``kipper broker`` expecting it to refuse to start. A listener on a
    free port keeps a wrongly accepted configuration from touching 9092; the
    timeout turns "it started anyway" into a failure."""
    listener = ["--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}"]
    try:
        return kipper("broker", *listener, *args, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kipper broker {' '.join(args)} kept running instead of exiting")


@pytest.mark.parametrize("override,mentions", [
    ("nosuch.key=1", "nosuch.key"),
    ("num.partitions=0", "num.partitions"),
    ("num.partitions=four", "num.partitions"),
    ("socket.request.max.bytes=12", "socket.request.max.bytes"),
    ("auto.create.topics.enable=maybe", "auto.create.topics.enable"),
    ("listeners=localhost:9092", "listeners"),
    ("listeners=PLAINTEXT://127.0.0.1:99999", "listeners"),
    ("advertised.listeners=OTHER://example.com:9092", "advertised.listeners"),
])
def test_broker_refuses_bad_override_with_one_line_naming_the_key(override, mentions):
    result = broker_with("--override", override)
    assert_one_line_error(result, mentions=mentions)
    assert "configuration error" in result.stderr


def test_broker_refuses_override_that_is_not_key_value():
    assert_one_line_error(broker_with("--override", "num.partitions"), mentions="num.partitions")


def test_broker_refuses_missing_config_file_naming_it(tmp_path):
    missing = tmp_path / "missing.properties"
    assert_one_line_error(broker_with("--config", str(missing)), mentions=str(missing))


def test_broker_refuses_unknown_key_in_config_file(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("log.retention.hourz=168\n")
    assert_one_line_error(broker_with("--config", str(path)), mentions="log.retention.hourz")


def test_broker_exits_with_one_line_when_its_port_is_taken():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        try:
            result = kipper("broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}")
        except subprocess.TimeoutExpired:
            pytest.fail("broker kept running on a port that is already in use")
    assert_one_line_error(result, mentions="cannot start")


# --- kipper broker: config file and overrides ----------------------------------------------------

def properties_file(tmp_path, port: int) -> Path:
    path = tmp_path / "server.properties"
    path.write_text("# written by test_broker_cli\n"
                    f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
                    "num.partitions: 4\n")
    return path


def test_config_file_sets_listeners_and_num_partitions(tmp_path, unique):
    port = free_port()
    proc = BrokerProcess(config_file=str(properties_file(tmp_path, port)), port=port)
    proc.overrides.pop("listeners")  # the file alone says where to listen
    with proc:
        assert auto_created_partitions(port, f"from-file-{unique}") == 4


def test_override_wins_over_config_file(tmp_path, unique):
    file_port = free_port()
    proc = BrokerProcess({"num.partitions": "2"},
                         config_file=str(properties_file(tmp_path, file_port)))
    assert proc.port != file_port
    with proc:
        assert auto_created_partitions(proc.port, f"overridden-{unique}") == 2


class AliasBroker(BrokerProcess):
    """Started as ``python -m kipper.broker`` instead of ``python -m kipper broker``."""

    def command(self) -> list[str]:
        cmd = super().command()
        assert cmd[1:4] == ["-m", "kipper", "broker"]
        return [cmd[0], "-m", "kipper.broker", *cmd[4:]]


def test_python_m_broker_runs_the_broker_with_the_same_options(unique):
    with AliasBroker({"num.partitions": "3"}) as proc:
        assert auto_created_partitions(proc.port, f"alias-{unique}") == 3
    assert proc.proc.returncode == 0


def test_python_m_broker_reports_config_errors_like_kipper_broker():
    result = subprocess.run([sys.executable, "-m", "kipper.broker", "--override", "nosuch.key=1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=20)
    assert_one_line_error(result, mentions="nosuch.key")


# --- signals ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_broker_gracefully_with_clients_connected(signum, unique):
    topic = f"shutdown-{unique}"
    proc = BrokerProcess().start()
    try:
        assert auto_created_partitions(proc.port, topic) == 1
        idle = BlockingConnection("127.0.0.1", proc.port, timeout=10)
        idle.negotiate()
        # a long-poll still waiting when the signal arrives must not hold up the exit
        polling = socket.create_connection(("127.0.0.1", proc.port), timeout=10)
        fetch = APIS[FETCH]
        polling.sendall(encode_request(fetch, 12, 1, "poller", {
            "max_wait_ms": 60000, "min_bytes": 1, "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}]}]}))
        # sent after the fetch, so the broker has almost surely read the fetch once this returns
        metadata(idle)

        proc.proc.send_signal(signum)
        returncode = proc.proc.wait(15)

        assert returncode == 0, proc.log_text()
        assert "broker_stopped" in proc.log_text()
        with polling, idle:
            assert polling.recv(1024) == b""  # closed without an answer
            with pytest.raises(ConnectionError):
                metadata(idle)
    finally:
        proc.stop()


# --- kipper topics ------------------------------------------------------------------------------------

def test_topics_create_list_describe_delete_end_to_end(broker, unique):
    topic = f"cli-{unique}"
    bs = ["--bootstrap-server", broker.bootstrap]

    created = kipper("topics", "create", *bs, "--topic", topic, "--partitions", "3",
                     "--config", "retention.ms=60000")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f"Created topic {topic}."

    listed = kipper("topics", "list", *bs)
    assert listed.returncode == 0, listed.stderr
    assert topic in listed.stdout.splitlines()

    described = kipper("topics", "describe", *bs, "--topic", topic)
    assert described.returncode == 0, described.stderr
    head, *partitions = described.stdout.strip().splitlines()
    assert f"Topic: {topic}" in head
    assert "PartitionCount: 3" in head
    assert "retention.ms=60000" in head
    assert [line.split("Partition: ")[1].split("\t")[0] for line in partitions] == ["0", "1", "2"]

    deleted = kipper("topics", "delete", *bs, "--topic", topic)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == f"Deleted topic {topic}."

    listed = kipper("topics", "list", *bs)
    assert topic not in listed.stdout.splitlines()


def test_topics_create_of_existing_topic_prints_readable_error_and_exits_1(broker, unique):
    topic = f"cli-dup-{unique}"
    bs = ["--bootstrap-server", broker.bootstrap]
    assert kipper("topics", "create", *bs, "--topic", topic).returncode == 0
    again = kipper("topics", "create", *bs, "--topic", topic)
    assert again.returncode == 1
    assert_one_line_error(again, mentions="TOPIC_ALREADY_EXISTS")
    assert topic in again.stderr


def test_topics_create_if_not_exists_accepts_existing_topic(broker, unique):
    topic = f"cli-ine-{unique}"
    bs = ["--bootstrap-server", broker.bootstrap]
    assert kipper("topics", "create", *bs, "--topic", topic).returncode == 0
    again = kipper("topics", "create", *bs, "--topic", topic, "--if-not-exists")
    assert again.returncode == 0, again.stderr


def test_topics_describe_of_missing_topic_reports_it_and_exits_1(broker, unique):
    topic = f"cli-missing-{unique}"
    result = kipper("topics", "describe", "--bootstrap-server", broker.bootstrap, "--topic", topic)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{topic}" in result.stdout + result.stderr
    assert "UNKNOWN_TOPIC_OR_PARTITION" in result.stdout + result.stderr
    # describing must not have created it
    listed = kipper("topics", "list", "--bootstrap-server", broker.bootstrap)
    assert topic not in listed.stdout.splitlines()


def test_topics_delete_of_missing_topic_prints_readable_error_and_exits_1(broker, unique):
    result = kipper("topics", "delete", "--bootstrap-server", broker.bootstrap,
                    "--topic", f"cli-gone-{unique}")
    assert result.returncode == 1
    assert_one_line_error(result, mentions="UNKNOWN_TOPIC_OR_PARTITION")


def test_topics_create_with_invalid_name_prints_readable_error(broker):
    result = kipper("topics", "create", "--bootstrap-server", broker.bootstrap,
                    "--topic", "no spaces allowed")
    assert result.returncode == 1
    assert_one_line_error(result, mentions="INVALID_TOPIC_EXCEPTION")


@pytest.mark.parametrize("action", ["list", "describe", "create"])
def test_topics_against_unreachable_bootstrap_server_prints_one_line(action):
    bootstrap = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = kipper("topics", action, "--bootstrap-server", bootstrap, "--topic", "t")
    assert_one_line_error(result, mentions=bootstrap)
    assert result.stdout == ""


def test_topics_with_malformed_bootstrap_server_prints_one_line():
    result = kipper("topics", "list", "--bootstrap-server", "no-port-here")
    assert_one_line_error(result, mentions="no-port-here")
