"""A three-broker kipper cluster (kipper.cluster.EmbeddedCluster: a controller and three
broker processes) answering as a Kafka cluster does: every broker in Metadata, leaders
spread, NOT_LEADER_OR_FOLLOWER naming the leader (KIP-951), min.insync.replicas refusals,
ISR changes seen in Metadata and DescribeTopicPartitions, leaders moved on request, and
acknowledged records that survive SIGKILLed brokers, read back exactly once and in order
(docs/CLUSTER.md). Bounded: a few thousand records, one cluster for the module."""

from __future__ import annotations

import collections
import time

import pytest

from kipper.client import admin, consumer_requests
from kipper.client.blocking import BlockingConnection, connect_any
from kipper.client.producer_requests import produce
from kipper.cluster import EmbeddedCluster
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS
from kipper.testing import unique_name

# failures seen within a few seconds (a busy machine may hold a broker's event loop up for a second)
QUICK = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "150",
         "replica.lag.time.max.ms": "3000", "replica.fetch.wait.max.ms": "200"}


@pytest.fixture(scope="module")
def cluster():
    with EmbeddedCluster(3, QUICK) as c:
        yield c


@pytest.fixture
def whole(cluster):
    """The cluster with its three brokers running again after the test."""
    yield cluster
    for node_id, node in cluster.brokers.items():
        if not node.running:
            cluster.start_broker(node_id)


def create(cluster, partitions: int, rf: int, configs=None, assignments=None) -> str:
    name = unique_name("cluster")
    with connect_any(cluster.bootstrap_servers) as conn:
        topic = admin.NewTopic(name, partitions if not assignments else -1, rf if not assignments else -1,
                               configs or {}, assignments=assignments)
        result = admin.create_topics(conn, [topic]).topics[0]
    assert result.error_code == 0, result.error_message
    _known_everywhere(cluster, name)
    return name


def _known_everywhere(cluster, name: str, within_s: float = 20.0) -> None:
    """The answer comes once the broker asked has the topic; the others follow the metadata log
    a moment later (a loaded machine: seconds), as on Kafka. Wait for every running broker."""
    deadline = time.monotonic() + within_s
    for node_id, node in cluster.brokers.items():
        if not node.running:
            continue
        with connect(cluster, node_id) as conn:
            while admin.metadata(conn, [name]).topics[0].error_code != 0 and time.monotonic() < deadline:
                time.sleep(0.05)


def connect(cluster, node_id: int) -> BlockingConnection:
    return BlockingConnection("127.0.0.1", cluster.brokers[node_id].port)


def batch(n: int = 1) -> bytes:
    return records.build_batch([(b"k", b"v%d" % i) for i in range(n)])


def test_metadata_names_every_broker_and_spreads_the_leaders(cluster):
    name = create(cluster, 6, 1)
    answers = []
    for node_id in (1, 2, 3):
        with connect(cluster, node_id) as conn:
            answers.append(admin.metadata(conn, [name]))
    for answer in answers:
        assert sorted(b.node_id for b in answer.brokers) == [1, 2, 3]
        assert answer.controller_id in (1, 2, 3)
    leaders = [sorted((p.partition_index, p.leader_id) for p in a.topics[0].partitions) for a in answers]
    assert leaders[0] == leaders[1] == leaders[2]
    assert {leader for _, leader in leaders[0]} == {1, 2, 3}


def test_a_broker_that_does_not_lead_names_the_leader(cluster):
    name = create(cluster, 1, 3, assignments=[[1, 2, 3]])
    with connect(cluster, 2) as conn:
        answer = produce(conn, {(name, 0): batch()}, acks=1, version=10)  # KIP-951's fields
    row = answer.responses[0].partition_responses[0]
    assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (row.current_leader.leader_id, row.current_leader.leader_epoch) == (1, 0)
    [endpoint] = answer.node_endpoints
    assert (endpoint.node_id, endpoint.port) == (1, cluster.brokers[1].port)
    with connect(cluster, 1) as conn:
        row = produce(conn, {(name, 0): batch()}, acks=-1).responses[0].partition_responses[0]
    assert (row.error_code, row.base_offset) == (0, 0)


def _isr(cluster, name: str) -> list[int]:
    return sorted(cluster.describe(name)[0].isr_nodes)


def test_min_insync_replicas_refuses_acks_all_and_the_isr_comes_back(whole):
    cluster = whole
    name = create(cluster, 1, 3, {"min.insync.replicas": "2"}, assignments=[[1, 2, 3]])
    cluster.kill(2)
    cluster.kill(3)
    cluster.wait_until(lambda: _isr(cluster, name) == [1], 30, "the ISR to shrink to the leader")
    with connect(cluster, 1) as conn:
        refused = produce(conn, {(name, 0): batch()}, acks=-1).responses[0].partition_responses[0]
        taken = produce(conn, {(name, 0): batch()}, acks=1).responses[0].partition_responses[0]
        described = conn.request(75, {"topics": [{"name": name}], "response_partition_limit": 10})
    assert refused.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert taken.error_code == 0
    assert list(described.topics[0].partitions[0].isr_nodes) == [1]
    cluster.start_broker(2)
    cluster.start_broker(3)
    cluster.wait_until(lambda: _isr(cluster, name) == [1, 2, 3], 30, "the followers to rejoin the ISR")
    with connect(cluster, 1) as conn:
        row = produce(conn, {(name, 0): batch()}, acks=-1).responses[0].partition_responses[0]
    assert (row.error_code, row.base_offset) == (0, 1)


def test_a_leader_moves_on_request_and_the_old_one_refuses(cluster):
    name = create(cluster, 1, 3, assignments=[[1, 2, 3]])
    before = cluster.describe(name)[0]
    cluster.move_leader(name, 0, 3)
    after = cluster.describe(name)[0]
    assert after.leader_id == 3 and after.leader_epoch > before.leader_epoch
    with connect(cluster, 1) as conn:
        row = produce(conn, {(name, 0): batch()}, acks=1, version=10).responses[0].partition_responses[0]
    assert row.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and row.current_leader.leader_id == 3
    with connect(cluster, 3) as conn:
        ends = conn.request(23, {"replica_id": -1, "topics": [{"topic": name, "partitions": [
            {"partition": 0, "current_leader_epoch": after.leader_epoch, "leader_epoch": before.leader_epoch}]}]})
    row = ends.topics[0].partitions[0]
    assert (row.error_code, row.leader_epoch, row.end_offset) == (0, before.leader_epoch, 0)


def test_describe_quorum_and_elections_are_the_controllers_through_any_broker(cluster):
    """DescribeQuorum and ElectLeaders forwarded to the controller: it is the one voter at its
    metadata log's end, the brokers that fetch the log are its observers, and an election of
    every partition names the topics with the elections that were needed."""
    name = create(cluster, 1, 3, assignments=[[1, 2, 3]])
    cluster.move_leader(name, 0, 2)  # (its replicas now [2, 1, 3])
    cluster._reassign(name, 0, [1, 2, 3])  # 1 preferred again, 2 still leading
    EmbeddedCluster.wait_until(lambda: cluster.describe(name)[0].replica_nodes == [1, 2, 3], 30, "the reorder")
    assert cluster.describe(name)[0].leader_id == 2
    with connect(cluster, 3) as conn:
        quorum = conn.request(55, {"topics": [{"topic_name": "__cluster_metadata",
                                               "partitions": [{"partition_index": 0}]}]}, version=2)
        state = quorum.topics[0].partitions[0]
        assert (quorum.error_code, state.error_code, state.leader_id) == (0, 0, 0)
        assert [v.replica_id for v in state.current_voters] == [0]
        assert state.current_voters[0].log_end_offset == state.high_watermark > 0
        assert sorted(o.replica_id for o in state.observers) == [1, 2, 3]
        assert all(o.log_end_offset <= state.high_watermark for o in state.observers)
        assert [n.node_id for n in quorum.nodes] == [0] and quorum.nodes[0].listeners[0].port == cluster.controller.port
        elected = conn.request(43, {"election_type": 0, "topic_partitions": None, "timeout_ms": 30000})
    rows = {r.topic: [(p.partition_id, p.error_code) for p in r.partition_result]
            for r in elected.replica_election_results}
    assert rows[name] == [(0, ErrorCode.NONE)]
    EmbeddedCluster.wait_until(lambda: cluster.describe(name)[0].leader_id == 1, 30, "broker 1 to lead again")


def test_acknowledged_records_survive_killed_brokers_exactly_once_in_order(whole):
    from confluent_kafka import Consumer, Producer, TopicPartition

    cluster = whole
    name = create(cluster, 3, 3, {"min.insync.replicas": "2"})
    acked = collections.defaultdict(list)
    failed = collections.Counter()

    def delivered(err, msg):
        if err is None:
            acked[msg.partition()].append((msg.offset(), msg.value()))
        else:
            failed[err.name()] += 1

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 60000, "topic.metadata.refresh.interval.ms": 500,
                         "log_level": 0})
    total, kills = 6000, [2, 1, 3]
    for i in range(total):
        producer.produce(name, key=b"%d" % (i % 7), value=b"%d" % i, on_delivery=delivered)
        producer.poll(0)
        if i and i % (total // (len(kills) + 1)) == 0 and kills:
            producer.flush(30)
            victim = kills.pop(0)
            cluster.kill(victim)
            time.sleep(0.3)  # records go on into the fenced broker's partitions meanwhile
            cluster.start_broker(victim)
    assert producer.flush(60) == 0
    assert not failed and sum(map(len, acked.values())) == total
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": unique_name("check"),
                         "enable.auto.commit": False, "log_level": 0})
    consumer.assign([TopicPartition(name, p, 0) for p in range(3)])
    read = collections.defaultdict(list)
    deadline = time.monotonic() + 30
    while sum(map(len, read.values())) < total and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            read[m.partition()].append((m.offset(), m.value()))
    consumer.close()
    for p in range(3):
        assert read[p] == sorted(acked[p]), f"partition {p}: every acknowledged record once, in order"


def _find(conn, key: str, key_type: int = 0):
    return conn.request(10, {"key_type": key_type, "coordinator_keys": [key]}).coordinators[0]


def test_coordinators_are_spread_by_kafkas_hashing(cluster):
    from kipper.broker.groups.journal import partition_for

    groups = [f"group-{i}" for i in range(12)]
    with connect(cluster, 1) as conn:
        EmbeddedCluster.wait_until(lambda: _find(conn, groups[0]).error_code == 0, 30, "__consumer_offsets")
        found = {g: _find(conn, g) for g in groups}
        offsets = {p.partition_index: p.leader_id for p in admin.metadata(conn, ["__consumer_offsets"]).topics[0].partitions}
    assert {f.node_id for f in found.values()} == {1, 2, 3}
    for g, f in found.items():
        assert f.node_id == offsets[partition_for(g, len(offsets))]
        assert f.port == cluster.brokers[f.node_id].port
    group, coordinator = groups[0], found[groups[0]].node_id
    other = next(i for i in (1, 2, 3) if i != coordinator)
    topic = create(cluster, 1, 1)
    commit = {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
              "retention_time_ms": -1, "topics": [{"name": topic, "partitions": [
                  {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                   "committed_metadata": ""}]}]}
    with connect(cluster, other) as conn:
        refused = conn.request(8, commit).topics[0].partitions[0].error_code
    with connect(cluster, coordinator) as conn:
        taken = conn.request(8, commit).topics[0].partitions[0].error_code
    assert (refused, taken) == (ErrorCode.NOT_COORDINATOR, 0)


def test_committed_offsets_survive_their_coordinator(whole):
    from confluent_kafka import Consumer, Producer

    cluster = whole
    name = create(cluster, 3, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "log_level": 0})
    for i in range(600):
        producer.produce(name, value=b"%d" % i)
    assert producer.flush(30) == 0
    group = unique_name("g")

    def consume(n: int, settle: bool) -> list[bytes]:
        """``n`` records (with ``settle``, and whatever else comes within a second)."""
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "log_level": 0,
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([name])
        got, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
            if len(got) == n:
                if not settle:
                    break
                deadline = min(deadline, time.monotonic() + 1)
        consumer.commit(asynchronous=False)
        consumer.close()
        return got

    first = consume(300, settle=False)
    with connect(cluster, 1) as conn:
        coordinator = _find(conn, group).node_id
    cluster.kill(coordinator)
    rest = consume(600 - len(first), settle=True)
    assert sorted(first + rest, key=int) == [b"%d" % i for i in range(600)], "the new coordinator had the offsets"


def _coordinator(conn, key: str, key_type: int = 0) -> int:
    """The coordinator of ``key``, once its internal topic is there."""
    found = []
    EmbeddedCluster.wait_until(lambda: found.append(_find(conn, key, key_type)) or found[-1].error_code == 0,
                               30, f"a coordinator for {key}")
    return found[-1].node_id


def test_a_transaction_spans_brokers_with_its_offsets(cluster):
    """Markers go to the partitions' leaders (WriteTxnMarkers), and the consumed offsets to a
    group that another broker than the transaction's coordinates."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    source, sink = create(cluster, 3, 3), create(cluster, 3, 3)
    assert {p.leader_id for p in cluster.describe(sink)} == {1, 2, 3}
    plain = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "log_level": 0})
    for i in range(90):
        plain.produce(source, key=b"%d" % i, value=b"%d" % i)
    assert plain.flush(30) == 0
    tid = unique_name("tx")
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid, "log_level": 0})
    producer.init_transactions(30)
    with connect(cluster, 1) as conn:
        transactions = _coordinator(conn, tid, 1)
        group = next(g for g in (unique_name("g") for _ in range(50)) if _coordinator(conn, g) != transactions)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "log_level": 0,
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    start = [TopicPartition(source, p, 0) for p in range(3)]
    consumer.assign(start)
    done, rounds, deadline = 0, 0, time.monotonic() + 60
    while done < 90 and time.monotonic() < deadline:
        batch = [m for m in consumer.consume(30, 1.0) if not m.error()]
        if not batch:
            continue
        producer.begin_transaction()
        for m in batch:
            producer.produce(sink, key=m.key(), value=m.value())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 30)
        if rounds == 1:  # one round aborted, and read again
            producer.abort_transaction(30)
            consumer.assign(start if done == 0 else [TopicPartition(source, t.partition, max(t.offset, 0))
                                                     for t in consumer.committed(start, 10)])
        else:
            producer.commit_transaction(30)
            done += len(batch)
        rounds += 1
    consumer.close()
    reader = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group, "log_level": 0,
                       "isolation.level": "read_committed", "enable.auto.commit": False})
    reader.assign([TopicPartition(sink, p, 0) for p in range(3)])
    got, deadline = [], time.monotonic() + 20
    while len(got) < 90 and time.monotonic() < deadline:
        m = reader.poll(0.2)
        if m is not None and not m.error():
            got.append(int(m.value()))
    committed = reader.committed(start, 10)
    reader.close()
    assert sorted(got) == list(range(90)), "every record once: the aborted round's copies are not read"
    assert sum(t.offset for t in committed) == 90, "the group's offsets were committed with the transactions"


def _txn_produce(conn, tid: str, topic: str, partition: int, pid: int, epoch: int, seq: int, version: int):
    data = records.build_batch([(None, b"%d" % seq)], producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                               transactional=True)
    return produce(conn, {(topic, partition): data}, transactional_id=tid, version=version,
                   timeout_ms=10000).responses[0].partition_responses[0]


def test_a_partition_leader_asks_the_transaction_coordinator_of_another_broker(cluster):
    """KIP-890 across brokers (AddPartitionsToTxn v5 from the partition's leader): a Produce
    before v12 is only verified (not in the transaction: INVALID_TXN_STATE with Kafka's
    message at v10, TRANSACTION_ABORTABLE at v11), a Produce v12 adds its partition (the
    coordinator's transaction holds it, and its commit's marker reaches it), and a coordinator
    that cannot be reached is NOT_ENOUGH_REPLICAS, which the producer retries."""
    topic, tid = create(cluster, 3, 1), unique_name("tx")
    with connect(cluster, 1) as conn:
        coordinator = _coordinator(conn, tid, 1)
    partition, leader = next((p.partition_index, p.leader_id) for p in cluster.describe(topic)
                             if p.leader_id != coordinator)
    with connect(cluster, coordinator) as conn:
        init = conn.request(22, {"transactional_id": tid, "transaction_timeout_ms": 60000, "producer_id": -1,
                                 "producer_epoch": -1}, version=5)
        assert init.error_code == 0
        pid, epoch = init.producer_id, init.producer_epoch
    with connect(cluster, leader) as conn:
        row = _txn_produce(conn, tid, topic, partition, pid, epoch, 0, version=10)
        assert (row.error_code, row.error_message) == (ErrorCode.INVALID_TXN_STATE,
                                                       "Partition was not added to the transaction")
        assert _txn_produce(conn, tid, topic, partition, pid, epoch, 0, version=11).error_code == \
            ErrorCode.TRANSACTION_ABORTABLE
        cluster.faults(coordinator).close("AddPartitionsToTxn", versions=(4, 5))
        row = _txn_produce(conn, tid, topic, partition, pid, epoch, 0, version=12)
        assert (row.error_code, row.error_message) == (
            ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to the transaction. "
                                           "Underlying error: NETWORK_EXCEPTION")
        assert _txn_produce(conn, tid, topic, partition, pid, epoch, 0, version=12).error_code == 0  # added
        assert _txn_produce(conn, tid, topic, partition, pid, epoch, 1, version=12).error_code == 0
    with connect(cluster, coordinator) as conn:
        [state] = conn.request(65, {"transactional_ids": [tid]}).transaction_states
        assert (state.transaction_state, [(t.topic, list(t.partitions)) for t in state.topics]) == (
            "Ongoing", [(topic, [partition])])
        assert conn.request(26, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                 "committed": True}, version=5).error_code == 0
    with connect(cluster, leader) as conn:  # the commit's marker reached the leader: read_committed reads both
        EmbeddedCluster.wait_until(lambda: consumer_requests.list_offsets(
            conn, {(topic, partition): -1}, isolation_level=1).topics[0].partitions[0].offset == 3,
            30, "the last stable offset past the commit marker")


def test_delete_records_answers_once_every_replica_starts_there(whole):
    """Kafka's DelayedDeleteRecords: the leader answers once every live follower's log starts at
    the offset (they learn it from their fetches), REQUEST_TIMED_OUT when its timeout comes
    first; a follower refuses. Then the leader dies and the next one starts there too."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    cluster = whole
    name = create(cluster, 1, 3, assignments=[[1, 2, 3]])
    with connect(cluster, 1) as conn:
        assert produce(conn, {(name, 0): batch(10)}, acks=-1).responses[0].partition_responses[0].error_code == 0
    with connect(cluster, 2) as conn:
        row = admin.delete_records(conn, {(name, 0): 4}, timeout_ms=5000).topics[0].partitions[0]
    assert (row.error_code, row.low_watermark) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
    cluster.faults(1).close("Fetch", count=None, topic=name)  # the followers' fetches do not get through
    try:
        with connect(cluster, 1) as conn:
            row = admin.delete_records(conn, {(name, 0): 4}, timeout_ms=300).topics[0].partitions[0]
        assert row.error_code == ErrorCode.REQUEST_TIMED_OUT and row.low_watermark < 4
    finally:
        cluster.faults(1).clear()
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})  # (kept: its futures need it)
    deleted = client.delete_records([TopicPartition(name, 0, 6)], request_timeout=30)
    assert [f.result(30).low_watermark for f in deleted.values()] == [6]
    cluster.kill(1)
    cluster.wait_until(lambda: cluster.leader_of(name, 0) in (2, 3), what="a new leader")
    with connect(cluster, cluster.leader_of(name, 0)) as conn:
        earliest = consumer_requests.list_offsets(conn, {(name, 0): -2}).topics[0].partitions[0]
    assert (earliest.error_code, earliest.offset) == (0, 6)


def test_a_durable_cluster_keeps_its_records_through_a_kill_and_a_full_restart(tmp_path):
    """log.dirs for every node: a SIGKILLed broker comes back with its log, and the whole
    cluster (controller too) stopped and started again still holds every record."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    cluster = EmbeddedCluster(3, QUICK, log_dirs=tmp_path).start()
    try:
        name = create(cluster, 3, 3, {"min.insync.replicas": "2"})
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True,
                             "acks": "all", "log_level": 0})
        for i in range(300):
            producer.produce(name, value=b"%d" % i)
            if i == 150:
                producer.flush(30)
                cluster.kill(2)
                cluster.start_broker(2)
        assert producer.flush(60) == 0
        cluster.stop()
        cluster.start()
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": unique_name("d"),
                             "enable.auto.commit": False, "log_level": 0})
        consumer.assign([TopicPartition(name, p, 0) for p in range(3)])
        got, deadline = [], time.monotonic() + 30
        while len(got) < 300 and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and not m.error():
                got.append(int(m.value()))
        consumer.close()
        assert sorted(got) == list(range(300))
    finally:
        cluster.stop()
