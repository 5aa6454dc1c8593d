"""log.dirs as a whole broker sees them, without sockets: the directory checks and lock,
the metadata that survives a restart (topics, configs, producer-id blocks), and the
internal topics replayed at start (offsets, groups, transactions)."""

from __future__ import annotations

import os

import pytest

from kipper.broker.server import open_engines
from kipper.broker.config import load
from kipper.broker.storage.files import CLEAN_SHUTDOWN, StorageError
from kipper.broker.storage.log_manager import LogManager
from kipper.broker.storage.metadata import MetadataStore
from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.txn.states import TxnState
from kipper.protocol import batch as b
from kipper.protocol import records


def broker(path, **overrides):
    values = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(path),
              "offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "2",
              **overrides}
    return open_engines(load(overrides=values), clock=lambda: 1_000_000)


def test_a_directory_held_by_another_broker_is_refused(tmp_path):
    first = broker(tmp_path)
    with pytest.raises(StorageError, match="in use by another broker"):
        broker(tmp_path)
    first.close()
    broker(tmp_path).close()  # free again after a clean stop


def test_a_file_in_the_way_is_refused_with_one_line(tmp_path):
    (tmp_path / "data").write_text("not a directory")
    with pytest.raises(StorageError) as err:
        broker(tmp_path / "data")
    assert "is not a directory" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_directory_without_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(StorageError, match="not readable and writable"):
        broker(locked)


def test_a_directory_of_another_node_is_refused(tmp_path):
    broker(tmp_path).close()
    with pytest.raises(StorageError, match="belongs to node.id 1"):
        broker(tmp_path, **{"node.id": "2"})


def test_the_cluster_id_is_kept_and_a_clean_stop_leaves_its_marker(tmp_path):
    first = broker(tmp_path, **{"cluster.id": "abc"})
    assert not (tmp_path / CLEAN_SHUTDOWN).exists()
    first.close()
    assert (tmp_path / CLEAN_SHUTDOWN).exists()
    again = broker(tmp_path)  # no cluster.id given: the stored one
    assert again.cluster_id == "abc" and again.storage.clean
    again.close()
    with pytest.raises(StorageError, match="belongs to cluster abc"):
        broker(tmp_path, **{"cluster.id": "other"})


def test_producer_ids_are_never_handed_out_twice_across_a_crash(tmp_path):
    store = MetadataStore(tmp_path)
    ids = ProducerIdManager(store.producer_id_block_end, reserve=store.reserve_producer_ids)
    first = [ids.allocate() for _ in range(1500)]
    reloaded = MetadataStore(tmp_path).load()  # what a restart after SIGKILL reads
    again = ProducerIdManager(reloaded.producer_id_block_end, reserve=reloaded.reserve_producer_ids)
    assert again.allocate() > max(first)


def test_topics_configs_and_data_survive_a_crash(tmp_path):
    first = broker(tmp_path)
    _, _, topic = first.topics.create("t", 2, configs={"retention.ms": "1000"})
    data = records.build_batch([(b"k", b"v")] * 3)
    topic.partitions[1].append(data, b.split_batches(data), 0)
    first.group_configs.set("g", "share.auto.offset.reset", "earliest")
    first.storage.release()  # a crash: nothing closed, the lock goes with the process
    again = broker(tmp_path)
    t = again.topics.get("t")
    assert t.topic_id == topic.topic_id and t.configs == {"retention.ms": "1000"}
    assert [p.log_end_offset for p in t.partitions] == [0, 3]
    assert again.group_configs.get("g", "share.auto.offset.reset") == "earliest"
    again.delete_topic(t)
    again.close()
    assert not (tmp_path / "t-0").exists()
    assert broker(tmp_path).topics.get("t") is None


def test_committed_offsets_and_classic_groups_are_replayed_from_consumer_offsets(tmp_path):
    first = broker(tmp_path)
    first.topics.create("t", 1)
    first.offsets.commit_all("g", [("t", 0, 42, 3, "meta")], 100)
    first.offsets.commit_all("gone", [("t", 0, 7, -1, None)], 100)
    first.offsets.delete("gone", [("t", 0)], 200)
    group = first.groups.classic.get_or_create("c")
    group.protocol_type, group.generation_id = "consumer", 5
    first.groups.classic.journal.group_stored(group, 300)
    assert first.topics.get("__consumer_offsets").internal
    first.storage.release()
    again = broker(tmp_path)
    c = again.offsets.get("g", "t", 0)
    assert (c.offset, c.leader_epoch, c.metadata) == (42, 3, "meta")
    assert again.offsets.get("gone", "t", 0) is None
    assert again.groups.classic.groups["c"].generation_id == 5


def test_a_transaction_caught_in_prepare_commit_is_finished_at_start(tmp_path):
    first = broker(tmp_path)
    first.topics.create("t", 1)
    r = first.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    coordinator = first.txn.coordinator
    assert coordinator.add_partitions("tx", r.producer_id, r.producer_epoch, [("t", 0)], 0) == 0
    assert coordinator.add_offsets("tx", r.producer_id, r.producer_epoch, "g", 0) == 0
    first.offsets.stage("g", r.producer_id, "t", 0, 9, -1, None, 0, producer_epoch=r.producer_epoch)
    data = records.build_batch([(None, b"v")], producer_id=r.producer_id, producer_epoch=r.producer_epoch,
                               base_sequence=0, transactional=True)
    first.topics.partition("t", 0).append(data, b.split_batches(data), 0)
    error, completion = coordinator.end_txn("tx", r.producer_id, r.producer_epoch, True, 10)
    assert completion is not None  # PrepareCommit is in __transaction_state; no marker yet
    first.storage.release()
    again = broker(tmp_path)
    meta = again.txn.coordinator.transactions["tx"]
    assert meta.state == TxnState.COMPLETE_COMMIT
    assert again.offsets.get("g", "t", 0).offset == 9
    partition = again.topics.partition("t", 0)
    assert partition.last_stable_offset == partition.high_watermark == 2  # the marker is in


def test_an_open_transaction_is_restored_and_times_out_as_usual(tmp_path):
    first = broker(tmp_path)
    first.topics.create("t", 1)
    r = first.txn.init_producer_id("tx", 1000, -1, -1, 0)
    first.txn.coordinator.add_partitions("tx", r.producer_id, r.producer_epoch, [("t", 0)], 0)
    first.storage.release()
    again = broker(tmp_path)
    meta = again.txn.coordinator.transactions["tx"]
    assert (meta.state, meta.producer_id) == (TxnState.ONGOING, r.producer_id)
    assert again.txn.tick(5000) == 1
    assert again.txn.coordinator.transactions["tx"].state == TxnState.COMPLETE_ABORT


def test_last_producer_id_and_epoch_survive_for_a_retried_bump(tmp_path):
    first = broker(tmp_path)
    r = first.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    bumped = first.txn.init_producer_id("tx", 60_000, r.producer_id, r.producer_epoch, 1)
    first.storage.release()
    again = broker(tmp_path)
    # KIP-360: the retry of that bump (the old pair) gets the bumped pair again
    retry = again.txn.init_producer_id("tx", 60_000, r.producer_id, r.producer_epoch, 2)
    assert (retry.error, retry.producer_id, retry.producer_epoch) == (0, bumped.producer_id,
                                                                       bumped.producer_epoch)


def test_log_managers_place_new_partitions_in_the_emptiest_directory(tmp_path):
    dirs = [tmp_path / "a", tmp_path / "b"]
    first = broker(tmp_path, **{"log.dirs": ",".join(map(str, dirs))})
    first.topics.create("t", 4)
    first.close()
    assert sorted(os.listdir(dirs[0])).count("t-0") + sorted(os.listdir(dirs[1])).count("t-0") == 1
    counts = [sum(1 for n in os.listdir(d) if n.startswith("t-")) for d in dirs]
    assert counts == [2, 2]
    again = broker(tmp_path, **{"log.dirs": ",".join(map(str, dirs))})
    assert len(again.topics.get("t").partitions) == 4
    assert isinstance(again.storage, LogManager)


def test_a_transaction_version_2_commit_caught_at_an_exhausted_epoch_rotates_the_producer_id_at_start(tmp_path):
    """EndTxn v5 at epoch 32766: PrepareCommit (epoch 32767, the new producer id as
    NextProducerId) is journaled before any marker; a restart writes the markers at 32767
    and moves the transactional id to the new producer id at epoch 0, and the producer's
    retry of its EndTxn is answered with that pair."""
    from kipper.broker.txn.coordinator import EPOCH_EXHAUSTED

    first = broker(tmp_path)
    first.topics.create("t", 1)
    r = first.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    coordinator = first.txn.coordinator
    meta = coordinator.transactions["tx"]
    meta.producer_epoch = EPOCH_EXHAUSTED
    assert coordinator.add_partitions("tx", r.producer_id, EPOCH_EXHAUSTED, [("t", 0)], 0, 2) == 0
    data = records.build_batch([(None, b"v")], producer_id=r.producer_id, producer_epoch=EPOCH_EXHAUSTED,
                               base_sequence=0, transactional=True)
    first.topics.partition("t", 0).append(data, b.split_batches(data), 0)
    result = coordinator.end_txn_v2("tx", r.producer_id, EPOCH_EXHAUSTED, True, 10)
    assert result.completion is not None and result.completion.next_producer_id >= 0  # no marker yet
    first.storage.release()
    again = broker(tmp_path)
    meta = again.txn.coordinator.transactions["tx"]
    assert (meta.state, meta.producer_id, meta.producer_epoch) == (
        TxnState.COMPLETE_COMMIT, result.completion.next_producer_id, 0)
    partition = again.topics.partition("t", 0)
    assert partition.last_stable_offset == partition.high_watermark == 2  # the marker (epoch 32767) is in
    retried = again.txn.end_txn_v2("tx", r.producer_id, EPOCH_EXHAUSTED, True, 20)
    assert (retried.error, retried.producer_id, retried.producer_epoch) == (0, meta.producer_id, 0)
