"""Streams groups (KIP-1071) on the real broker, spoken to with raw StreamsGroupHeartbeat and
StreamsGroupDescribe requests: the broker makes the internal topics the topology needs, gives
the tasks out, applies per-group configs, and with log.dirs the group comes back as it was
after a SIGKILL, its member carrying on at its epoch."""

from __future__ import annotations

import time
import uuid

import pytest

from kipper.client.blocking import connect_any
from kipper.protocol.errors import ErrorCode
from tests.support.broker import BrokerProcess, free_port
from tests.support.streams_member import word_count

HB, DESCRIBE, CREATE_TOPICS, DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 88, 89, 19, 32, 44


@pytest.fixture(scope="module")
def durable(tmp_path_factory):
    proc = BrokerProcess({"log.dirs": str(tmp_path_factory.mktemp("streams-broker")),
                          "group.streams.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "1"},
                         port=free_port()).start()
    yield proc
    proc.stop()


class Member:
    def __init__(self, bootstrap: str, group: str, source: str):
        self.conn = connect_any(bootstrap)
        self.conn.negotiate()
        self.group, self.member_id = group, uuid.uuid4().hex
        self.topology = word_count(source, app=group)
        self.epoch, self.active = 0, []

    def beat(self, **kw):
        joining = self.epoch == 0
        body = {"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch,
                "endpoint_information_epoch": -1, "rebalance_timeout_ms": 30000 if joining else -1,
                "topology": self.topology if joining else None, "process_id": "p1" if joining else None,
                "active_tasks": self.active, "standby_tasks": [], "warmup_tasks": [], **kw}
        resp = self.conn.request(HB, body, version=1)
        if resp.error_code == 0:
            self.epoch = resp.member_epoch
            if resp.active_tasks is not None:
                self.active = [{"subtopology_id": t.subtopology_id, "partitions": list(t.partitions)}
                               for t in resp.active_tasks]
        return resp

    def settle(self, timeout: float = 10.0):
        deadline = time.monotonic() + timeout
        while True:
            resp = self.beat()
            if (resp.error_code == 0 and not resp.status and self.active) or time.monotonic() > deadline:
                return resp
            time.sleep(0.1)


def create(conn, name: str, partitions: int = 2) -> None:
    conn.request(CREATE_TOPICS, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                             "assignments": [], "configs": []}],
                                 "timeout_ms": 10000, "validate_only": False}, version=5)


def describe(conn, group: str):
    return conn.request(DESCRIBE, {"group_ids": [group], "include_authorized_operations": False,
                                   "include_topology_description": False}, version=1).groups[0]


def test_a_member_joins_the_broker_makes_the_internal_topics_and_gives_it_every_task(durable):
    conn = connect_any(durable.bootstrap)
    conn.negotiate()
    create(conn, "orders")
    m = Member(durable.bootstrap, "counts", "orders")
    first = m.beat()
    assert first.error_code == 0 and [s.status_code for s in first.status] == [3]  # MISSING_INTERNAL_TOPICS
    assert m.settle().status == []
    assert sorted((t["subtopology_id"], p) for t in m.active for p in t["partitions"]) == [
        ("0", 0), ("0", 1), ("1", 0), ("1", 1)]
    configs = conn.request(DESCRIBE_CONFIGS, {"resources": [{"resource_type": 2, "resource_name": "counts-counts-changelog",
                                                             "configuration_keys": ["cleanup.policy"]}],
                                              "include_synonyms": False, "include_documentation": False}, version=4)
    assert configs.results[0].configs[0].value == "compact"
    group = describe(conn, "counts")
    assert (group.group_state, group.assignor_name, len(group.members)) == ("Stable", "sticky", 1)
    assert group.topology.subtopologies[1].state_changelog_topics[0].partitions == 2


def test_per_group_configs_reach_the_members(durable):
    conn = connect_any(durable.bootstrap)
    conn.negotiate()
    create(conn, "payments")
    conn.request(INCREMENTAL_ALTER_CONFIGS, {"resources": [{"resource_type": 32, "resource_name": "pay", "configs": [
        {"name": "streams.heartbeat.interval.ms", "config_operation": 0, "value": "7000"}]}], "validate_only": False},
        version=1)
    m = Member(durable.bootstrap, "pay", "payments")
    assert m.beat().heartbeat_interval_ms == 7000


def test_a_group_comes_back_after_a_sigkill_and_its_member_carries_on(durable):
    conn = connect_any(durable.bootstrap)
    conn.negotiate()
    create(conn, "clicks", 3)
    m = Member(durable.bootstrap, "views", "clicks")
    m.settle()
    before = describe(conn, "views")
    durable.kill()
    durable.start()
    m.conn = connect_any(durable.bootstrap)
    m.conn.negotiate()
    resp = m.beat()
    assert (resp.error_code, resp.member_epoch, resp.status) == (ErrorCode.NONE, before.members[0].member_epoch, [])
    conn = connect_any(durable.bootstrap)
    conn.negotiate()
    after = describe(conn, "views")
    assert (after.group_epoch, after.assignment_epoch, after.group_state) == (
        before.group_epoch, before.assignment_epoch, "Stable")
    assert after.members[0].assignment == before.members[0].assignment
    assert after.members[0].target_assignment == before.members[0].target_assignment


def test_kipper_groups_lists_and_describes_a_streams_group(durable):
    from tests.integration.test_admin_tools import kipper, out

    conn = connect_any(durable.bootstrap)
    conn.negotiate()
    create(conn, "taps")
    m = Member(durable.bootstrap, "tapcount", "taps")
    m.settle()
    listed = kipper("groups", "list", "--bootstrap-server", durable.bootstrap)
    assert any(line.split()[:3] == ["tapcount", "streams", "Stable"] for line in out(listed).splitlines())
    described = kipper("groups", "describe", "--bootstrap-server", durable.bootstrap, "--group", "tapcount",
                       "--members")
    assert described.returncode == 0, described.stderr
    assert "TYPE streams  STATE Stable" in out(described) and "0:0+1,1:0+1 / -" in out(described)
