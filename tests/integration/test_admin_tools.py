"""The kipper tools judged against Kafka's tools and kcat, run as commands against a
real broker: --version, help with defaults, exit codes and error messages, groups
describe with lag for both group protocols, groups delete / reset-offsets /
delete-offsets, topics alter, configs for topics, brokers and groups, consume
--group / --offset / -f, and produce / perf / share-consume failing usefully."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kipper.client import Producer
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import offset_commit
from kipper.client.group_consumer import GroupConsumer
from tests.support.broker import ROOT, free_port


def kipper(*args, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kipper", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=timeout)


def out(r) -> str:
    return r.stdout.decode()


def err(r) -> str:
    return r.stderr.decode()


def filled(bootstrap: str, topic: str, n: int = 10, partitions: int = 1) -> None:
    assert kipper("topics", "create", "--bootstrap-server", bootstrap, "--topic", topic,
                  "--partitions", str(partitions)).returncode == 0
    with Producer({"bootstrap.servers": bootstrap, "linger.ms": 0}) as p:
        for i in range(n):
            p.send(topic, f"v{i}".encode(), key=f"k{i}".encode(), partition=0).get(10)


def lag_rows(text: str, topic: str) -> dict[int, tuple[str, str, str]]:
    """partition -> (CURRENT-OFFSET, LOG-END-OFFSET, LAG) from groups describe."""
    rows = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[1] == topic and cols[2].isdigit():
            rows[int(cols[2])] = (cols[3], cols[4], cols[5])
    return rows


# --- everywhere --------------------------------------------------------------------------------

def test_version_help_and_exit_codes():
    r = kipper("--version")
    assert r.returncode == 0 and out(r).startswith("kipper ")
    r = kipper("perf", "--help")
    assert r.returncode == 0 and "(default: -1" in out(r) and "records/s cap" in out(r)
    r = kipper("groups", "describe", "--bootstrap-server", "127.0.0.1:1")
    assert r.returncode == 2 and "needs --group" in err(r) and out(r) == ""
    r = kipper("topics", "frobnicate", "--bootstrap-server", "127.0.0.1:1")
    assert r.returncode == 2 and "invalid choice" in err(r)


def test_runtime_errors_exit_1_and_name_the_topic_or_group(broker, unique):
    r = kipper("topics", "alter", "--bootstrap-server", broker.bootstrap, "--topic", f"none-{unique}",
               "--partitions", "3")
    assert r.returncode == 1 and f"none-{unique}" in err(r) and "UNKNOWN_TOPIC_OR_PARTITION" in err(r)
    r = kipper("groups", "delete", "--bootstrap-server", broker.bootstrap, "--group", f"g-{unique}")
    assert r.returncode == 1 and f"g-{unique}" in err(r) and "GROUP_ID_NOT_FOUND" in err(r)


# --- groups ------------------------------------------------------------------------------------

def test_describe_shows_the_lag_of_a_classic_group(broker, unique):
    topic, group = f"lag-{unique}", f"lagg-{unique}"
    filled(broker.bootstrap, topic, 10)
    with connect_any(broker.bootstrap) as conn:
        offset_commit(conn, group, {(topic, 0): 4})
    r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group)
    assert r.returncode == 0, err(r)
    assert f"GROUP {group}  TYPE classic" in out(r)
    assert lag_rows(out(r), topic) == {0: ("4", "10", "6")}


def test_describe_finds_a_kip848_group_and_shows_its_members_and_lag(broker, unique):
    topic, group = f"lag848-{unique}", f"g848-{unique}"
    filled(broker.bootstrap, topic, 10, partitions=2)
    member = GroupConsumer(broker.bootstrap, topic, group)
    try:
        r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group)
        assert r.returncode == 0, err(r)
        assert f"GROUP {group}  TYPE consumer  STATE Stable" in out(r)
        rows = lag_rows(out(r), topic)
        assert rows[0][1] == "10" and rows[1][1] == "0"
        assert member.member_id in out(r)
        r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group, "--members")
        assert member.member_id in out(r) and f"{topic}:0+1" in out(r)
    finally:
        member.close()


def test_consume_with_a_group_commits_what_it_printed(broker, unique):
    topic, group = f"cg-{unique}", f"cgg-{unique}"
    filled(broker.bootstrap, topic, 10)
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--group", group,
               "--from-beginning", "--max-messages", "3", "--timeout-ms", "5000")
    assert r.returncode == 0, err(r)
    assert out(r).splitlines() == ["v0", "v1", "v2"]
    r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group)
    assert "TYPE consumer" in out(r) and lag_rows(out(r), topic) == {0: ("3", "10", "7")}
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--group", group,
               "--max-messages", "2", "--timeout-ms", "5000")
    assert out(r).splitlines() == ["v3", "v4"]


def test_reset_offsets_dry_run_then_execute_and_only_while_inactive(broker, unique):
    topic, group = f"rs-{unique}", f"rsg-{unique}"
    filled(broker.bootstrap, topic, 10)
    with connect_any(broker.bootstrap) as conn:
        offset_commit(conn, group, {(topic, 0): 8})
    base = ["groups", "reset-offsets", "--bootstrap-server", broker.bootstrap, "--group", group,
            "--topic", topic]
    r = kipper(*base, "--to-earliest")
    assert r.returncode == 0 and out(r).splitlines()[-1].split() == [group, topic, "0", "0"]
    assert "--execute" in err(r)
    r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group)
    assert lag_rows(out(r), topic) == {0: ("8", "10", "2")}  # a dry run commits nothing
    r = kipper(*base, "--shift-by", "-3", "--execute")
    assert out(r).splitlines()[-1].split() == [group, topic, "0", "5"]
    r = kipper(*base, "--to-offset", "99", "--execute")  # kept inside the log
    assert out(r).splitlines()[-1].split() == [group, topic, "0", "10"]
    r = kipper(*base, "--to-datetime", "2000-01-01T00:00:00.000", "--execute")
    assert out(r).splitlines()[-1].split() == [group, topic, "0", "0"]
    r = kipper("groups", "describe", "--bootstrap-server", broker.bootstrap, "--group", group)
    assert lag_rows(out(r), topic) == {0: ("0", "10", "10")}
    member = GroupConsumer(broker.bootstrap, topic, group)
    try:
        r = kipper(*base, "--to-latest", "--execute")
        assert r.returncode == 1 and "inactive" in err(r) and group in err(r)
    finally:
        member.close()


def test_delete_offsets_and_delete_groups(broker, unique):
    topic, group = f"del-{unique}", f"delg-{unique}"
    filled(broker.bootstrap, topic, 3)
    with connect_any(broker.bootstrap) as conn:
        offset_commit(conn, group, {(topic, 0): 2})
    r = kipper("groups", "delete-offsets", "--bootstrap-server", broker.bootstrap, "--group", group,
               "--topic", topic)
    assert r.returncode == 0 and "Successful" in out(r)
    r = kipper("groups", "delete", "--bootstrap-server", broker.bootstrap, "--group", group)
    assert r.returncode == 0 and "was successful" in out(r)
    listed = kipper("groups", "list", "--bootstrap-server", broker.bootstrap)
    assert group not in out(listed)


# --- topics and configs ---------------------------------------------------------------------------

def test_topics_alter_grows_partitions_and_sets_configs(broker, unique):
    topic = f"alt-{unique}"
    filled(broker.bootstrap, topic, 1)
    r = kipper("topics", "alter", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--partitions", "4", "--config", "retention.ms=60000", "--config", "flush.ms=1000")
    assert r.returncode == 0, err(r)
    d = kipper("topics", "describe", "--bootstrap-server", broker.bootstrap, "--topic", topic)
    assert "PartitionCount: 4" in out(d) and "retention.ms=60000" in out(d) and "flush.ms=1000" in out(d)
    r = kipper("topics", "alter", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--partitions", "2")
    assert r.returncode == 1 and "INVALID_PARTITIONS" in err(r) and topic in err(r)


@pytest.mark.parametrize("entity,name,key,value", [
    ("topics", "TOPIC", "segment.ms", "100000"),
    ("brokers", "1", "log.retention.ms", "3600000"),
    ("groups", "GROUP", "consumer.session.timeout.ms", "50000"),
    ("groups", "GROUP", "share.record.lock.duration.ms", "20000"),
    ("groups", "GROUP", "share.isolation.level", "read_committed"),
])
def test_configs_alter_and_describe_topics_brokers_and_groups(broker, unique, entity, name, key, value):
    name = {"TOPIC": f"cfg-{unique}", "GROUP": f"cfgg-{unique}"}.get(name, name)
    if entity == "topics":
        filled(broker.bootstrap, name, 0)
    base = ["configs", "--bootstrap-server", broker.bootstrap, "--entity-type", entity, "--entity-name", name]
    r = kipper(*base, "--alter", "--add-config", f"{key}={value}")
    assert r.returncode == 0, err(r)
    r = kipper(*base, "--describe")
    assert f"{key}={value} sensitive=false" in out(r)
    r = kipper(*base, "--describe", "--all")
    assert out(r).startswith("All configs") and len(out(r).splitlines()) > 3
    r = kipper(*base, "--alter", "--delete-config", key)
    assert r.returncode == 0 and f"{key}={value}" not in out(kipper(*base, "--describe"))


def test_configs_refuses_a_static_broker_config_with_kafkas_answer(broker):
    r = kipper("configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "brokers",
               "--entity-default", "--alter", "--add-config", "num.partitions=3")
    assert r.returncode == 1 and "Cannot update these configs dynamically" in err(r)


# --- consume, produce, perf, share-consume ---------------------------------------------------------

def test_consume_offset_and_kcat_format(broker, unique):
    topic = f"fmt-{unique}"
    filled(broker.bootstrap, topic, 5)
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--offset", "-2",
               "--partition", "0", "-f", "%t/%p/%o %k=%s (%K,%S)\\n", "--timeout-ms", "1000")
    assert r.returncode == 0, err(r)
    assert out(r).splitlines() == [f"{topic}/0/3 k3=v3 (2,2)", f"{topic}/0/4 k4=v4 (2,2)"]
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--offset", "1",
               "--max-messages", "1", "-f", "%o %T\\n")
    offset, ts = out(r).split()
    assert offset == "1" and abs(int(ts) - time.time() * 1000) < 600_000


def test_produce_stops_at_a_line_without_the_separator_unless_told_to_skip(broker, unique):
    topic = f"bad-{unique}"
    r = kipper("produce", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--key-separator", ":", stdin=b"k:v\nno separator\nk2:v2\n")
    assert r.returncode == 1 and "line 2" in err(r) and topic in err(r)
    r = kipper("produce", "--bootstrap-server", broker.bootstrap, "--topic", topic,
               "--key-separator", ":", "--skip-bad-lines", stdin=b"k3:v3\nno separator\nk4:v4\n")
    assert r.returncode == 0 and "line 2" in err(r)
    r = kipper("consume", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--from-beginning",
               "--max-messages", "3", "--timeout-ms", "3000")
    assert out(r).splitlines() == ["v", "v3", "v4"]


@pytest.mark.parametrize("tool", [["produce"], ["perf", "produce", "--num-records", "10", "--record-size", "10"]])
def test_a_broker_that_is_down_fails_fast_with_the_real_cause(tool):
    bootstrap = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    r = kipper(*tool, "--bootstrap-server", bootstrap, "--topic", "t", stdin=b"x\n")
    assert r.returncode == 1 and time.monotonic() - started < 20
    assert "cannot reach any bootstrap server" in err(r) and bootstrap in err(r)


def test_share_consume_of_a_missing_topic_is_an_error(broker, unique):
    r = kipper("share-consume", "--bootstrap-server", broker.bootstrap, "--group", "g",
               "--topic", f"nothing-{unique}", "--timeout-ms", "60000")
    assert r.returncode == 1 and f"nothing-{unique}" in err(r) and "UNKNOWN_TOPIC_OR_PARTITION" in err(r)
