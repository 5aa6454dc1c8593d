"""The controller engine (broker/cluster/controller.py, controller_topics.py) with a manual
clock: registrations and sessions, topic placement, the classic election rule, AlterPartition's
checks, preferred and unclean elections, reassignment. Every decision is read back from the
image its own metadata log replays into, and the log's bytes decode as Kafka's records."""

from __future__ import annotations

import uuid
from types import SimpleNamespace as NS

import pytest
from construct import Container

from kipper.broker.cluster.controller import ControllerSettings
from kipper.broker.cluster.controller_topics import ControllerTopics
from kipper.broker.cluster.metadata_log import MetadataLog
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode

SESSION = 1000


class Clock:
    def __init__(self):
        self.now = 10_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def cluster():
    clock = Clock()
    topics = ControllerTopics(ControllerSettings(node_id=0, cluster_id="c", session_timeout_ms=SESSION),
                              MetadataLog(), clock, num_partitions=1, auto_create=True)
    controller = topics.controller
    controller.bootstrap(clock())
    incarnations = {}
    for broker in (1, 2, 3):
        incarnations[broker] = uuid.uuid4()
        assert register(controller, broker, incarnations[broker], clock())["error_code"] == 0
        heartbeat(controller, broker, clock())
    return NS(topics=topics, controller=controller, clock=clock, image=controller.image, incarnations=incarnations)


def register(controller, broker: int, incarnation, now: int) -> dict:
    return controller.register(NS(
        broker_id=broker, cluster_id="c", incarnation_id=incarnation, rack=None, features=[],
        listeners=[NS(name="PLAINTEXT", host="127.0.0.1", port=9000 + broker, security_protocol=0)]), now)


def heartbeat(controller, broker: int, now: int, **flags) -> dict:
    b = controller.image.brokers[broker]
    return controller.heartbeat(NS(broker_id=broker, broker_epoch=b.epoch, current_metadata_offset=1 << 40,
                                   want_fence=flags.get("want_fence", False),
                                   want_shut_down=flags.get("want_shut_down", False)), now)


def alter(controller, topic: str, index: int, isr: list[int], *, leader_epoch=None, partition_epoch=None,
          broker=None) -> int:
    info = controller.image.topics[topic]
    part = info.partitions[index]
    broker = part.leader if broker is None else broker
    answer = controller.alter_partition(NS(
        broker_id=broker, broker_epoch=controller.image.brokers[broker].epoch,
        topics=[NS(topic_id=info.topic_id, partitions=[Container(
            partition_index=index, new_isr=isr,
            leader_epoch=part.leader_epoch if leader_epoch is None else leader_epoch,
            partition_epoch=part.partition_epoch if partition_epoch is None else partition_epoch)])]), 0)
    return answer["topics"][0]["partitions"][0]["error_code"] if answer["topics"] else answer["error_code"]


def keep_alive(cluster, *brokers) -> None:
    for b in brokers:
        heartbeat(cluster.controller, b, cluster.clock())


def test_brokers_register_fenced_and_are_unfenced_once_caught_up(cluster):
    image = cluster.image
    assert [b.broker_id for b in image.live_brokers()] == [1, 2, 3]
    four = uuid.uuid4()
    answer = register(cluster.controller, 4, four, cluster.clock())
    assert answer["broker_epoch"] == cluster.controller.log.end_offset - 1  # the offset of its record
    assert image.brokers[4].fenced
    behind = cluster.controller.heartbeat(NS(broker_id=4, broker_epoch=answer["broker_epoch"],
                                             current_metadata_offset=0, want_fence=False, want_shut_down=False),
                                          cluster.clock())
    assert behind["is_fenced"] and not behind["is_caught_up"]
    assert not heartbeat(cluster.controller, 4, cluster.clock())["is_fenced"]


def test_another_incarnation_waits_for_the_old_session_to_end(cluster):
    controller, clock = cluster.controller, cluster.clock
    assert register(controller, 2, uuid.uuid4(), clock())["error_code"] == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    clock.now += SESSION + 1
    keep_alive(cluster, 1, 3)
    controller.tick(clock())
    assert cluster.image.brokers[2].fenced
    assert register(controller, 2, uuid.uuid4(), clock())["error_code"] == 0


def test_a_heartbeat_with_an_old_epoch_is_stale(cluster):
    controller = cluster.controller
    answer = controller.heartbeat(NS(broker_id=1, broker_epoch=-5, current_metadata_offset=0, want_fence=False,
                                     want_shut_down=False), cluster.clock())
    assert answer["error_code"] == ErrorCode.STALE_BROKER_EPOCH
    answer = controller.heartbeat(NS(broker_id=9, broker_epoch=1, current_metadata_offset=0, want_fence=False,
                                     want_shut_down=False), cluster.clock())
    assert answer["error_code"] == ErrorCode.BROKER_ID_NOT_REGISTERED


def test_partitions_and_their_leaders_are_spread_over_the_brokers(cluster):
    code, _, topic = cluster.topics.create("t", 6, 3)
    assert code == ErrorCode.NONE and len(topic.partitions) == 6
    parts = cluster.image.topics["t"].partitions
    assert {p.leader for p in parts.values()} == {1, 2, 3}
    for p in parts.values():
        assert sorted(p.replicas) == [1, 2, 3] and p.isr == p.replicas and p.leader == p.replicas[0]
    assert cluster.topics.replication_factor(topic) == 3


def test_a_replication_factor_above_the_brokers_is_kafkas_error(cluster):
    code, message, _ = cluster.topics.create("t", 1, 4)
    assert code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert message == ("Unable to replicate the partition 4 time(s): The target replication factor of 4 "
                       "cannot be reached because only 3 broker(s) are registered or some brokers have all "
                       "their log directories cordoned.")
    assert cluster.topics.create("t", 1, 0)[0] == ErrorCode.INVALID_REPLICATION_FACTOR


def test_a_fenced_leader_is_replaced_by_the_first_in_sync_replica(cluster):
    cluster.topics.create("t", 1, 3, assignments=[[2, 3, 1]])
    controller, clock = cluster.controller, cluster.clock
    before = cluster.image.topics["t"].partitions[0]
    assert before.leader == 2
    clock.now += SESSION + 1
    keep_alive(cluster, 1, 3)
    assert controller.tick(clock()) == 1
    after = cluster.image.topics["t"].partitions[0]
    assert after.leader == 3 and after.isr == (3, 1)
    assert after.leader_epoch == before.leader_epoch + 1
    assert after.partition_epoch == before.partition_epoch + 1


def test_the_last_in_sync_replica_stays_in_the_isr_and_the_partition_has_no_leader(cluster):
    cluster.topics.create("t", 1, 1, assignments=[[2]])
    clock = cluster.clock
    clock.now += SESSION + 1
    keep_alive(cluster, 1, 3)
    cluster.controller.tick(clock())
    part = cluster.image.topics["t"].partitions[0]
    assert part.leader == mr.NO_LEADER and part.isr == (2,)
    # it leads again once it is back (unfenced)
    heartbeat(cluster.controller, 2, clock())
    assert cluster.image.topics["t"].partitions[0].leader == 2


def test_an_unclean_election_happens_only_when_the_topic_allows_it(cluster):
    topics, controller, clock = cluster.topics, cluster.controller, cluster.clock
    topics.create("clean", 1, 2, assignments=[[2, 3]])
    topics.create("unclean", 1, 2, {"unclean.leader.election.enable": "true"}, assignments=[[2, 3]])
    for name in ("clean", "unclean"):  # the ISR shrinks to the leader alone
        assert alter(controller, name, 0, [2]) == ErrorCode.NONE
    clock.now += SESSION + 1
    keep_alive(cluster, 1, 3)
    controller.tick(clock())
    assert controller.image.topics["clean"].partitions[0].leader == mr.NO_LEADER
    unclean = controller.image.topics["unclean"].partitions[0]
    assert unclean.leader == 3 and unclean.isr == (3,)


def test_alter_partition_is_checked_as_kafka_checks_it(cluster):
    topics, controller = cluster.topics, cluster.controller
    topics.create("t", 1, 3, assignments=[[1, 2, 3]])
    assert alter(controller, "t", 0, [1, 2]) == ErrorCode.NONE
    part = controller.image.topics["t"].partitions[0]
    assert part.isr == (1, 2) and part.leader_epoch == 0, "a shrink does not move the leader epoch (3.6+)"
    assert alter(controller, "t", 0, [1, 2, 3], leader_epoch=5) == ErrorCode.FENCED_LEADER_EPOCH
    assert alter(controller, "t", 0, [1, 2, 3], partition_epoch=0) == ErrorCode.INVALID_UPDATE_VERSION
    assert alter(controller, "t", 0, [2, 3], broker=2) == ErrorCode.INVALID_REQUEST  # not the leader
    heartbeat(controller, 3, cluster.clock(), want_fence=True)
    assert alter(controller, "t", 0, [1, 2, 3]) == ErrorCode.INELIGIBLE_REPLICA
    assert controller.image.topics["t"].partitions[0].isr == (1, 2)


def test_preferred_election_gives_leadership_back_to_the_first_replica(cluster):
    topics, controller, clock = cluster.topics, cluster.controller, cluster.clock
    topics.create("t", 1, 3, assignments=[[1, 2, 3]])
    heartbeat(controller, 1, clock(), want_shut_down=True)  # a controlled shutdown moves it away
    assert controller.image.topics["t"].partitions[0].leader == 2
    [(_, [(_, code, _)])] = controller.elect_leaders(0, [("t", [0])], clock())
    assert code == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    register(controller, 1, uuid.uuid4(), clock())
    heartbeat(controller, 1, clock())
    assert alter(controller, "t", 0, [2, 3, 1]) == ErrorCode.NONE
    [(_, [(_, code, _)])] = controller.elect_leaders(0, [("t", [0])], clock())
    assert code == ErrorCode.NONE and controller.image.topics["t"].partitions[0].leader == 1
    [(_, [(_, code, _)])] = controller.elect_leaders(0, [("t", [0])], clock())
    assert code == ErrorCode.ELECTION_NOT_NEEDED


def test_a_controlled_shutdown_moves_leadership_before_letting_the_broker_go(cluster):
    topics, controller, clock = cluster.topics, cluster.controller, cluster.clock
    topics.create("t", 3, 2)
    answer = heartbeat(controller, 2, clock(), want_shut_down=True)
    assert answer["should_shut_down"] and answer["is_fenced"]
    for part in controller.image.topics["t"].partitions.values():
        assert part.leader != 2 and (2 not in part.isr or part.isr == (2,))


def test_a_reassignment_adds_replicas_then_drops_the_old_ones_once_in_sync(cluster):
    topics, controller = cluster.topics, cluster.controller
    topics.create("t", 1, 1, assignments=[[1]])
    assert topics.reassign("t", 0, [2, 3]) == (ErrorCode.NONE, None)
    moving = controller.image.topics["t"].partitions[0]
    assert moving.replicas == (2, 3, 1) and moving.adding == (2, 3) and moving.removing == (1,)
    assert [(name, index) for name, index, _ in topics.reassignments()] == [("t", 0)]
    assert alter(controller, "t", 0, [1, 2, 3]) == ErrorCode.NONE  # the leader saw them catch up
    done = controller.image.topics["t"].partitions[0]
    assert done.replicas == (2, 3) and done.isr == (2, 3) and not done.adding and not done.removing
    assert done.leader == 2
    assert topics.reassignments() == []


def test_producer_id_blocks_never_overlap(cluster):
    controller = cluster.controller
    first = controller.allocate_producer_ids(1, controller.image.brokers[1].epoch, cluster.clock())
    second = controller.allocate_producer_ids(2, controller.image.brokers[2].epoch, cluster.clock())
    assert second["producer_id_start"] == first["producer_id_start"] + first["producer_id_len"]
    assert controller.allocate_producer_ids(1, 12345, cluster.clock())["error_code"] == ErrorCode.STALE_BROKER_EPOCH


def test_the_log_is_kafkas_record_batches_and_replays_into_the_same_image(cluster):
    cluster.topics.create("t", 2, 3, {"retention.ms": "1000"})
    controller = cluster.controller
    records = list(controller.log.records())
    names = [r.name for _, r in records]
    assert names[0] == "FeatureLevelRecord" and "TopicRecord" in names and "ConfigRecord" in names
    assert [o for o, _ in records] == list(range(len(records)))
    again = ControllerTopics(controller.settings, controller.log, cluster.clock, num_partitions=1,
                             auto_create=True)
    assert again.controller.image.topics["t"].partitions == controller.image.topics["t"].partitions
    assert again.get("t").configs == {"retention.ms": "1000"}
    for _, data in controller.log.storage.batches_from(0):
        assert data[16] == 2 and int.from_bytes(data[12:16], "big") == controller.log.epoch  # magic, epoch
