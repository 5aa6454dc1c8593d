"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets through a
whole in-process broker with real frames. The expected answers are the ones a Kafka 4.4 broker
gave for the same requests (error codes, start offsets -1 and lags -1 without state, zero topic
ids, which topics come first), and the ACL checks are KafkaApis'."""

from __future__ import annotations

from uuid import UUID

from construct import Container

from kipper.broker.acl.model import ALLOW, DELETE, DESCRIBE, GROUP, LITERAL, READ, TOPIC, AclBinding
from kipper.broker.share.log_view import PartitionLogView
from kipper.broker.share.store import ShareStore
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker
from tests.unit.test_group_admin import commit

DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS, SHARE_DESCRIBE = 90, 91, 92, 77
ZERO = UUID(int=0)
NOT_HOSTED = "This server does not host this topic-partition."


def broker(n=10, partitions=2, **overrides) -> InProcessBroker:
    b = InProcessBroker(**{"group.share.auto.offset.reset": "earliest", **overrides})
    b.state.topics.create("t", partitions)
    for p in range(partitions):
        b.state.topics.partition("t", p).append_batch(
            records.build_batch([(None, b"v%d" % i) for i in range(n)]), b.now)
    return b


def describe(b, group, topics=None, version=1, session=None):
    wanted = None if topics is None else [{"topic_name": t, "partitions": ps} for t, ps in topics.items()]
    return b.call(DESCRIBE_OFFSETS, version, {"groups": [{"group_id": group, "topics": wanted}]},
                  session=session).groups[0]


def rows(group_body) -> dict:
    return {(t.topic_name, p.partition_index): (p.start_offset, p.lag, p.error_code)
            for t in group_body.topics for p in t.partitions}


def alter(b, group, offsets: dict, session=None):
    by_topic: dict = {}
    for (t, p), o in offsets.items():
        by_topic.setdefault(t, []).append({"partition_index": p, "start_offset": o})
    return b.call(ALTER_OFFSETS, 0, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]}, session=session)


def delete(b, group, *topics, session=None):
    return b.call(DELETE_OFFSETS, 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]},
                  session=session)


def join(b, group, topic="t"):
    req = Container(group_id=group, member_id="m1", member_epoch=0, rack_id=None,
                    subscribed_topic_names=[topic])
    return b.state.share.heartbeat(req, client_id="c", client_host="/h", now=b.now)


def test_a_group_without_state_describes_as_uninitialized():
    b = broker()
    g = describe(b, "g", {"t": [0, 1], "nosuch": [0]})
    assert (g.error_code, g.error_message) == (0, None)
    assert [(t.topic_name, t.topic_id == ZERO) for t in g.topics] == [("t", False), ("nosuch", True)]
    assert rows(g) == {("t", 0): (-1, -1, 0), ("t", 1): (-1, -1, 0), ("nosuch", 0): (-1, -1, 0)}
    assert all(p.leader_epoch == 0 for t in g.topics for p in t.partitions)
    assert describe(b, "g").topics == [] and describe(b, "g", {}).topics == []
    assert describe(b, "", None).error_code == 0
    # Kafka 4.4: a partition the topic lacks is one of no state (and beside a partition it has,
    # Kafka closes the connection: KAFKA_DIFFERENCES.md kafka-closes-the-connection)
    assert rows(describe(b, "g", {"t": [7]})) == {("t", 7): (-1, -1, 0)}


def test_alter_makes_an_empty_share_group_and_describe_reads_spso_and_lag():
    b = broker()
    body = alter(b, "g", {("nosuch", 0): 0, ("t", 0): 3, ("t", 9): 1})
    assert body.error_code == 0
    assert [(t.topic_name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
            for t in body.responses] == [("nosuch", [(0, E.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED)]),
                                         ("t", [(0, 0, None), (9, E.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED)])]
    assert body.responses[0].topic_id == ZERO and body.responses[1].topic_id != ZERO
    assert rows(describe(b, "g")) == {("t", 0): (3, 7, 0)}  # lag: 10 records - 3
    assert rows(describe(b, "g", {"t": [0, 1]})) == {("t", 0): (3, 7, 0), ("t", 1): (-1, -1, 0)}
    v0 = describe(b, "g", version=0).topics[0].partitions[0]
    assert v0.start_offset == 3 and "lag" not in v0
    shared = b.call(SHARE_DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": False})
    assert (shared.groups[0].group_state, shared.groups[0].group_epoch) == ("Empty", 1)
    # the share-partition starts at 3, every record a first delivery
    sp = b.state.share.share_partition("g", b.state.topics.get("t"), 0, b.now)
    assert sp.acquire("m", b.now, PartitionLogView(b.state.topics.partition("t", 0)),
                      max_records=100) == [(3, 9, 1)]


def test_offsets_outside_the_log_are_stored_as_given_and_minus_one_starts_again():
    b = broker()
    assert alter(b, "g", {("t", 0): 1000, ("t", 1): -5}).error_code == 0
    got = rows(describe(b, "g"))
    assert got[("t", 0)][0] == 1000 and got[("t", 0)][1] < 0  # Kafka: HWM - SPSO, negative
    assert got[("t", 1)] == (-5, 15, 0)  # as Kafka shows it until the share-partition loads
    alter(b, "g", {("t", 0): -1})
    assert rows(describe(b, "g"))[("t", 0)] == (-1, -1, 0)  # still listed: Kafka's "uninitialized"
    # the next load starts again at share.auto.offset.reset (earliest here)
    assert b.state.share.share_partition("g", b.state.topics.get("t"), 0, b.now).spso == 0
    assert b.state.share.share_partition("g", b.state.topics.get("t"), 1, b.now).spso == 0


def test_group_checks_for_alter_and_delete():
    b = broker()
    assert commit(b, "classic", topic="t") == 0
    for body in (alter(b, "classic", {("t", 0): 1}), delete(b, "classic", "t")):
        assert (body.error_code, body.error_message, body.responses) == (
            E.GROUP_ID_NOT_FOUND, "Group classic is not a share group.", [])
    body = delete(b, "unknown", "t")
    assert (body.error_code, body.error_message) == (E.GROUP_ID_NOT_FOUND, "Group unknown not found.")
    for body in (alter(b, "", {("t", 0): 1}), delete(b, "", "t")):
        assert (body.error_code, body.error_message) == (E.INVALID_GROUP_ID, "The group id is invalid.")
    join(b, "busy")
    for body in (alter(b, "busy", {("t", 0): 1}), delete(b, "busy", "t")):
        assert (body.error_code, body.error_message) == (E.NON_EMPTY_GROUP, "The group is not empty.")
    # no topic named, no group made (Kafka 4.4); a topic it has, even without such a partition, makes it
    assert alter(b, "empty", {}).error_code == 0 and delete(b, "empty").error_code == E.GROUP_ID_NOT_FOUND
    assert alter(b, "empty", {("t", 9): 1}).error_code == 0 and delete(b, "empty").error_code == 0


def test_delete_drops_a_topics_state_and_answers_for_topics_without_any():
    b = broker()
    alter(b, "g", {("t", 0): 2, ("t", 1): 4})
    b.state.topics.create("u", 1)
    body = delete(b, "g", "nosuch", "u", "t")
    assert [(t.topic_name, t.topic_id == ZERO, t.error_code, t.error_message) for t in body.responses] == [
        ("t", False, 0, None),
        ("nosuch", True, E.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED),
        ("u", True, E.UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete.")]
    assert describe(b, "g").topics == []
    assert rows(describe(b, "g", {"t": [0]})) == {("t", 0): (-1, -1, 0)}


def test_acl_checks_are_kafkas():
    me = "User:ANONYMOUS"
    b = broker(**{"authorizer.class.name": "standard"})
    b.state.topics.create("u", 1)
    b.state.acls.create([AclBinding(GROUP, "g", LITERAL, me, "*", DESCRIBE, ALLOW),
                         AclBinding(TOPIC, "t", LITERAL, me, "*", DESCRIBE, ALLOW)])
    g = describe(b, "g", {"t": [0], "u": [0]})
    assert [(t.topic_name, t.topic_id == ZERO) for t in g.topics] == [("t", False), ("u", True)]
    assert rows(g)[("u", 0)] == (-1, -1, E.TOPIC_AUTHORIZATION_FAILED)
    assert describe(b, "other").error_code == E.GROUP_AUTHORIZATION_FAILED
    # DESCRIBE on the group is not enough to alter (READ) or delete (DELETE)
    for body in (alter(b, "g", {("t", 0): 1}), delete(b, "g", "t")):
        assert (body.error_code, body.error_message) == (E.GROUP_AUTHORIZATION_FAILED,
                                                         "Group authorization failed.")
    b.state.acls.create([AclBinding(GROUP, "g", LITERAL, me, "*", READ, ALLOW),
                         AclBinding(TOPIC, "t", LITERAL, me, "*", READ, ALLOW)])
    body = alter(b, "g", {("u", 0): 1, ("nosuch", 0): 1, ("t", 0): 1})
    assert [(t.topic_name, t.partitions[0].error_code) for t in body.responses] == [
        ("u", E.TOPIC_AUTHORIZATION_FAILED), ("nosuch", E.TOPIC_AUTHORIZATION_FAILED), ("t", 0)]
    assert body.responses[0].topic_id != ZERO  # an existing topic keeps its id
    assert delete(b, "g", "t").error_code == E.GROUP_AUTHORIZATION_FAILED
    b.state.acls.create([AclBinding(GROUP, "g", LITERAL, me, "*", DELETE, ALLOW)])
    body = delete(b, "g", "u", "t")
    assert [(t.topic_name, t.error_code) for t in body.responses] == [
        ("u", E.TOPIC_AUTHORIZATION_FAILED), ("t", 0)]


def test_a_reset_is_a_share_checkpoint_that_recovery_reads():
    b = broker()
    share = b.state.share
    topic = b.state.topics.get("t")
    sp = share.share_partition("g", topic, 0, b.now)
    log = PartitionLogView(topic.partitions[0])
    sp.acquire("m", b.now, log, max_records=4)
    share.store.persist(sp, sp.acknowledge("m", [(0, 3, [1])], b.now)[1], b.now)
    assert alter(b, "g", {("t", 0): 1}).error_code == 0
    # a broker that starts from the same log (index rebuilt by scanning it) sees the reset
    fresh = ShareStore(share.settings, b.state.topics)
    from kipper.broker.share import index_file
    fresh.index[("t", 0)] = {}
    index_file.rescan(topic.partitions[0], fresh.index[("t", 0)], 0)
    again = fresh.get("g", topic, 0, b.now)
    assert (again.spso, [r for r in again.runs]) == (1, [])


def test_describe_shows_the_spso_as_the_last_state_write_carried_it():
    """Kafka's SharePartition writes its SPSO as it was before the write's own acknowledgements
    and moves it afterwards without writing again: the share coordinator (what describe reads)
    keeps the older SPSO and counts the acknowledged records past it, so the lag is right while
    the start offset lags one write. Measured against Kafka 4.4 with kafka-share-groups: a member
    that accepted all 4 records of a partition and left shows START-OFFSET 0, LAG 0."""
    b = broker(n=4, partitions=1)
    share = b.state.share
    topic = b.state.topics.get("t")
    sp = share.share_partition("g", topic, 0, b.now)
    log = PartitionLogView(topic.partitions[0])
    sp.acquire("m", b.now, log, max_records=10)
    # loaded, records acquired, nothing written yet: Kafka's "uninitialized"
    assert rows(describe(b, "g", {"t": [0]})) == {("t", 0): (-1, -1, 0)}
    share.store.persist(sp, sp.acknowledge("m", [(0, 3, [1])], b.now)[1], b.now)
    assert sp.spso == 4
    assert rows(describe(b, "g")) == {("t", 0): (0, 0, 0)}
    # the next write carries the moved SPSO
    topic.partitions[0].append_batch(records.build_batch([(None, b"w%d" % i) for i in range(2)]), b.now)
    # (offsets 4 and 5 hold the share state's own control records, seed 004)
    assert sp.acquire("m", b.now, log, max_records=10) == [(6, 7, 1)]
    share.store.persist(sp, sp.release_member("m"), b.now)
    assert rows(describe(b, "g")) == {("t", 0): (6, 2, 0)}
