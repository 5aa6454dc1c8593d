"""Kafka's ACL checks on the everyday APIs, in process: Metadata (DESCRIBE, and CREATE
for auto-creation), the classic group APIs (READ on the group; a refused join makes no
group), OffsetCommit (READ on group and topic), OffsetFetch (DESCRIBE on group and topic),
ListOffsets and DescribeGroups (DESCRIBE), CreateTopics and DeleteTopics."""

from __future__ import annotations

from kipper.broker.acl.model import (
    ALLOW, CREATE, DELETE, DESCRIBE, GROUP, LITERAL, READ, TOPIC, AclBinding,
)
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

ME = "User:ANONYMOUS"


def broker(*acls: tuple[int, str, int]) -> InProcessBroker:
    b = InProcessBroker(**{"authorizer.class.name": "standard"})
    for name in ("seen", "hidden"):
        b.state.topics.create(name, 1)
    b.state.acls.create([AclBinding(TOPIC, "seen", LITERAL, ME, "*", READ, ALLOW),
                         *(AclBinding(rtype, name, LITERAL, ME, "*", op, ALLOW) for rtype, name, op in acls)])
    return b


def metadata(b, names, auto=True):
    topics = None if names is None else [{"name": n, "topic_id": None} for n in names]
    return b.call(3, 12, {"topics": topics, "allow_auto_topic_creation": auto,
                          "include_topic_authorized_operations": False}).topics


def test_metadata_lists_only_describable_topics_and_refuses_named_ones():
    b = broker()
    assert [t.name for t in metadata(b, None)] == ["seen"]
    by_name = {t.name: t.error_code for t in metadata(b, ["seen", "hidden"])}
    assert by_name == {"seen": 0, "hidden": E.TOPIC_AUTHORIZATION_FAILED}
    hidden_id = b.state.topics.get("hidden").topic_id
    by_id = b.call(3, 12, {"topics": [{"name": None, "topic_id": hidden_id}],
                           "allow_auto_topic_creation": False,
                           "include_topic_authorized_operations": False}).topics[0]
    assert by_id.error_code == E.TOPIC_AUTHORIZATION_FAILED and by_id.name is None  # (an id is no secret)


def test_auto_creation_needs_create_on_the_topic_or_the_cluster():
    b = broker((TOPIC, "new", DESCRIBE))
    assert metadata(b, ["new"])[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert b.state.topics.get("new") is None
    assert metadata(b, ["new"], auto=False)[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    b.state.acls.create([AclBinding(TOPIC, "new", LITERAL, ME, "*", CREATE, ALLOW)])
    # created by this request, shown by the next one (Kafka's answer)
    assert metadata(b, ["new"])[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert b.state.topics.get("new") is not None and metadata(b, ["new"])[0].error_code == 0


def test_create_and_delete_topics():
    b = broker((TOPIC, "mine", CREATE))
    create = {"topics": [{"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                          "configs": []} for n in ("mine", "theirs")], "timeout_ms": 1000,
              "validate_only": False}
    codes = {t.name: t.error_code for t in b.call(19, 7, create).topics}
    assert codes == {"mine": 0, "theirs": E.TOPIC_AUTHORIZATION_FAILED}
    assert b.state.topics.get("theirs") is None
    delete = {"topics": [{"name": n, "topic_id": None} for n in ("seen", "hidden", "missing")],
              "timeout_ms": 1000}
    codes = {r.name: r.error_code for r in b.call(20, 6, delete).responses}
    assert codes == {"seen": E.TOPIC_AUTHORIZATION_FAILED, "hidden": E.TOPIC_AUTHORIZATION_FAILED,
                     "missing": E.TOPIC_AUTHORIZATION_FAILED}
    assert b.state.topics.get("seen") is not None and b.state.topics.get("hidden") is not None
    b.state.acls.create([AclBinding(TOPIC, "seen", LITERAL, ME, "*", DELETE, ALLOW)])
    codes = {r.name: r.error_code for r in b.call(20, 6, delete).responses}  # (Kafka shuffles them)
    assert codes["seen"] == 0 and b.state.topics.get("seen") is None


def test_a_refused_join_makes_no_group():
    b = broker()
    join = {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
            "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}
    assert b.call(11, 9, join).error_code == E.GROUP_AUTHORIZATION_FAILED
    assert "g" not in b.state.groups.classic.groups
    beat = {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None}
    assert b.call(12, 4, beat).error_code == E.GROUP_AUTHORIZATION_FAILED
    leave = {"group_id": "g", "members": [{"member_id": "m", "group_instance_id": None, "reason": None}]}
    assert b.call(13, 5, leave).error_code == E.GROUP_AUTHORIZATION_FAILED
    described = b.call(15, 5, {"groups": ["g"], "include_authorized_operations": False}).groups[0]
    assert described.error_code == E.GROUP_AUTHORIZATION_FAILED


def test_offset_commit_and_fetch():
    b = broker((GROUP, "g", READ))
    commit = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
              "group_instance_id": None, "topics": [
                  {"name": n, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}
                  for n in ("seen", "hidden")]}
    codes = {t.name: t.partitions[0].error_code for t in b.call(8, 8, commit).topics}
    assert codes == {"seen": 0, "hidden": E.TOPIC_AUTHORIZATION_FAILED}
    fetched = b.call(9, 7, {"group_id": "g", "topics": None, "require_stable": False})
    assert [t.name for t in fetched.topics] == ["seen"]
    named = b.call(9, 7, {"group_id": "g", "topics": [{"name": "hidden", "partition_indexes": [0]}],
                          "require_stable": False})
    assert named.topics[0].partitions[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    other = b.call(8, 8, {**commit, "group_id": "other"})
    assert {t.partitions[0].error_code for t in other.topics} == {E.GROUP_AUTHORIZATION_FAILED}
    assert b.call(9, 7, {"group_id": "other", "topics": None,
                         "require_stable": False}).error_code == E.GROUP_AUTHORIZATION_FAILED
    groups = b.call(9, 9, {"groups": [{"group_id": g, "member_id": None, "member_epoch": -1, "topics": None}
                                      for g in ("g", "other")], "require_stable": False}).groups
    assert [(g.group_id, g.error_code) for g in groups] == [("g", 0), ("other", E.GROUP_AUTHORIZATION_FAILED)]


def test_list_offsets_needs_describe():
    b = broker()
    body = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": n, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}
        for n in ("seen", "hidden")]}
    codes = {t.name: t.partitions[0].error_code for t in b.call(2, 7, body).topics}
    assert codes == {"seen": 0, "hidden": E.TOPIC_AUTHORIZATION_FAILED}
