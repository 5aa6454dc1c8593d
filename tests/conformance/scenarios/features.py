"""Issue 38: feature flags (ApiVersions' features, UpdateFeatures), transaction version 2
(KIP-890 part 2) and client telemetry (KIP-714) against Kafka 4.4.

Both brokers serve every scenario of the session at once, so nothing here changes a
finalized level for real: updates that would succeed are sent ``validate_only`` (or are
no-ops at the current level), and the refused ones change nothing anyway."""

from __future__ import annotations

from kipper.protocol.messages import APIS
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario

UPDATE_FEATURES = APIS[57]
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def update_features(run, updates, *, version=None, validate_only=True, label="update features"):
    v = k.top(UPDATE_FEATURES) if version is None else version
    return run.call(UPDATE_FEATURES, v, {"timeout_ms": 60000, "validate_only": validate_only, "feature_updates": [
        {"feature": name, "max_version_level": level, "upgrade_type": kind, "allow_downgrade": kind != UPGRADE}
        for name, level, kind in updates]}, label=label)


def api_versions(run, v, label="api versions"):
    return run.call(k.API_VERSIONS, v, {"client_software_name": "conformance", "client_software_version": "1.0"},
                    label=label)


def probe_update_features(run, v):
    """The versions probe: a downgrade validated only, and one refused."""
    update_features(run, [("transaction.version", 1, SAFE_DOWNGRADE)], version=v, label="validate a downgrade")
    update_features(run, [("transaction.version", 3, UPGRADE)], version=v, label="a level not supported")


@scenario("features/api-versions-at-each-version")
def _(run):
    for v in range(k.API_VERSIONS.min_version, k.API_VERSIONS.max_version + 1):
        api_versions(run, v, label=f"v{v}")


@scenario("features/update-validate-only")
def _(run):
    update_features(run, [("transaction.version", 1, SAFE_DOWNGRADE)], label="a safe downgrade")
    update_features(run, [("share.version", 0, UNSAFE_DOWNGRADE)], label="an unsafe downgrade to 0")
    update_features(run, [("group.version", 0, SAFE_DOWNGRADE), ("streams.version", 0, SAFE_DOWNGRADE)],
                    label="two downgrades")
    update_features(run, [("eligible.leader.replicas.version", 0, SAFE_DOWNGRADE)], label="ELR off")
    update_features(run, [], label="nothing to update")
    update_features(run, [("transaction.version", 2, UPGRADE)], validate_only=False, label="the level it has")
    update_features(run, [("kraft.version", 1, UPGRADE)], validate_only=False, label="kraft.version it has")
    api_versions(run, 4, label="nothing changed")


@scenario("features/update-refused")
def _(run):
    update_features(run, [("transaction.version", 1, UPGRADE)], label="a downgrade typed as an upgrade")
    update_features(run, [("transaction.version", 3, UPGRADE)], label="above the supported range")
    update_features(run, [("group.version", -1, SAFE_DOWNGRADE)], label="a negative level")
    update_features(run, [("share.version", 2, 7)], label="an unknown upgrade type")
    update_features(run, [("share.version", 3, SAFE_DOWNGRADE)], label="a downgrade to a newer level")
    update_features(run, [("no.such.version", 1, UPGRADE)], label="an unknown feature")
    update_features(run, [("no.such.version", 0, SAFE_DOWNGRADE)], label="an unknown feature to 0")
    update_features(run, [("kraft.version", 0, SAFE_DOWNGRADE)], label="kraft.version down")
    update_features(run, [("metadata.version", 30, SAFE_DOWNGRADE)], label="metadata.version down (safe)")
    update_features(run, [("metadata.version", 30, UNSAFE_DOWNGRADE)], label="metadata.version down (unsafe)")
    update_features(run, [("metadata.version", 34, UPGRADE)], label="metadata.version above latest production")
    update_features(run, [("metadata.version", 6, SAFE_DOWNGRADE)], label="metadata.version below the minimum")
    update_features(run, [("group.version", 0, SAFE_DOWNGRADE), ("streams.version", 5, UPGRADE)],
                    label="one refused refuses the request")
    for v in (0, 1):
        update_features(run, [("transaction.version", 1, UPGRADE)], version=v, label=f"refused at v{v}")
    api_versions(run, 4, label="nothing changed")


@scenario("features/update-needs-alter-on-the-cluster")
def _(run):
    run.conn("alice", user="alice")
    run.call(UPDATE_FEATURES, k.top(UPDATE_FEATURES), {"timeout_ms": 60000, "validate_only": True, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": SAFE_DOWNGRADE}]},
        conn="alice", label="alice, without ALTER on the cluster")


# the version probes of the APIs this module covers (scenarios/versions.py runs them)
PROBES = {57: probe_update_features}


# --- transaction version 2 (KIP-890 part 2) ---------------------------------------------------

END_TXN_V2 = 5


def _txn_v2(run, suffix="txn", partitions=1):
    t = k.create_topic(run, partitions=partitions)
    txn = run.name(suffix)
    resp = k.init_producer_id(run, txn)
    return t, txn, resp.get("producer_id", -1), resp.get("producer_epoch", -1)


def _produce_v12(run, t, txn, pid, epoch, seq, n=1, start=0, *, version=12, label="produce (adds the partition)"):
    return k.produce(run, t, k.batch(n, start=start, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                                     transactional=True), transactional_id=txn, version=version, label=label)


def _end_v2(run, txn, pid, epoch, committed, label):
    return k.end_txn(run, txn, pid, epoch, committed, version=END_TXN_V2, label=label)


def _settled(run, txn, state):
    """Kafka writes the markers after answering EndTxn: the next transaction waits for them."""
    run.poll(lambda: run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]},
                              record=False),
             lambda r: r.get("transaction_states", [{}])[0].get("transaction_state") == state)


def _describe(run, txn, label):
    run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]}, label=label)


@scenario("txn-v2/two-transactions-with-an-epoch-bump-each")
def _(run):
    t, txn, pid, epoch = _txn_v2(run)
    _produce_v12(run, t, txn, pid, epoch, 0, 2)
    _describe(run, txn, "ongoing after the implicit add")
    ended = _end_v2(run, txn, pid, epoch, True, "commit: the next epoch in the answer")
    epoch2 = ended.get("producer_epoch", -1)
    _settled(run, txn, "CompleteCommit")
    _describe(run, txn, "complete commit at the bumped epoch")
    _produce_v12(run, t, txn, pid, epoch, 2, 1, start=2, label="the epoch before the bump")
    _produce_v12(run, t, txn, pid, epoch2, 0, 2, start=2, label="the new epoch from sequence 0")
    _end_v2(run, txn, pid, epoch2, False, "abort: bumps again")
    _settled(run, txn, "CompleteAbort")
    k.fetch(run, t, 0, isolation=1, label="read_committed: the first transaction only")
    k.list_offsets(run, t, -1, isolation=1, label="last stable offset")


@scenario("txn-v2/end-txn-retries-and-settled-states")
def _(run):
    t, txn, pid, epoch = _txn_v2(run)
    _end_v2(run, txn, pid, epoch, True, "commit in Empty")
    _end_v2(run, txn, pid, epoch - 1 if epoch > 0 else epoch + 1, False, "abort in Empty, another epoch")
    aborted = _end_v2(run, txn, pid, epoch, False, "abort in Empty: a bump with nothing to mark")
    e1 = aborted.get("producer_epoch", -1)
    _settled(run, txn, "CompleteAbort")
    _end_v2(run, txn, pid, epoch, False, "the abort again (a retry)")
    _end_v2(run, txn, pid, epoch, True, "commit with the retry's epoch")
    _produce_v12(run, t, txn, pid, e1, 0, 1)
    committed = _end_v2(run, txn, pid, e1, True, "commit")
    e2 = committed.get("producer_epoch", -1)
    _settled(run, txn, "CompleteCommit")
    _end_v2(run, txn, pid, e1, True, "the commit again (a retry)")
    _end_v2(run, txn, pid, e1, False, "abort with the retry's epoch")
    _end_v2(run, txn, pid, e2, True, "commit at the current epoch, nothing open")
    _end_v2(run, txn, pid, e2 + 2, False, "an epoch from the future")
    _end_v2(run, txn, pid + 1000, e2, False, "another producer id")
    _end_v2(run, run.name("unknown"), pid, e2, False, "an unknown transactional id")
    _describe(run, txn, "where it ended")


@scenario("txn-v2/produce-v11-and-v12")
def _(run):
    t, txn, pid, epoch = _txn_v2(run, partitions=2)
    _produce_v12(run, t, txn, pid, epoch, 0, version=11, label="Produce v11, partition not added")
    _produce_v12(run, t, txn, pid, epoch, 0, label="Produce v12 adds it")
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              partition=1, transactional_id=txn, version=11, label="Produce v11 to the other partition")
    _describe(run, txn, "one partition in the transaction")
    ended = _end_v2(run, txn, pid, epoch, True, "commit")
    _settled(run, txn, "CompleteCommit")
    _produce_v12(run, t, txn, pid, ended.get("producer_epoch", -1), 0, start=1, version=11,
                 label="Produce v11 at the new epoch: nothing is open")


@scenario("txn-v2/txn-offset-commit-adds-the-group")
def _(run):
    t, txn, pid, epoch = _txn_v2(run)
    group = run.name("g")

    def commit(version, offset, label):
        topic = {"name": t, "topic_id": k.topic_id(run, t) if version >= 6 else k.NO_TOPIC_ID, "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1, "committed_metadata": ""}]}
        return run.call(k.TXN_OFFSET_COMMIT, version, {
            "transactional_id": txn, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None, "topics": [topic]},
            label=label)
    _produce_v12(run, t, txn, pid, epoch, 0)
    commit(4, 1, "v4 without AddOffsetsToTxn")
    commit(5, 1, "v5 adds the group")
    commit(6, 1, "v6 by topic id")
    k.offset_fetch(run, group, t, require_stable=True, label="require_stable while pending")
    _end_v2(run, txn, pid, epoch, True, "commit")
    _settled(run, txn, "CompleteCommit")
    k.offset_fetch(run, group, t, label="the offset after the commit")


@scenario("txn-v2/add-partitions-as-brokers-send-it")
def _(run):
    t, txn, pid, epoch = _txn_v2(run, partitions=2)
    for v in (4, 5):
        k.add_partitions(run, txn, pid, epoch, t, (0,), version=v, verify_only=True, label=f"v{v} verify, not added")
    k.add_partitions(run, txn, pid, epoch, t, (0,), version=5, label="v5 adds")
    k.add_partitions(run, txn, pid, epoch, t, (0, 1), version=5, verify_only=True, label="verify one of two")
    k.add_partitions(run, txn, pid, epoch, t, (0, 7), version=5, label="with an unknown partition")
    k.add_partitions(run, txn, pid, epoch + 1, t, (0,), version=5, verify_only=True, label="verify, epoch ahead")
    k.add_partitions(run, txn, pid + 1000, epoch, t, (0,), version=5, verify_only=True, label="verify, other id")
    _describe(run, txn, "what was added")
    _end_v2(run, txn, pid, epoch, False, "abort")
    run.conn("alice", user="alice")
    run.call(k.ADD_PARTITIONS_TO_TXN, 5, {"transactions": [{
        "transactional_id": txn, "producer_id": pid, "producer_epoch": epoch, "verify_only": True,
        "topics": [{"name": t, "partitions": [0]}]}]}, conn="alice", label="alice, without CLUSTER_ACTION")
