"""Issue 38: feature flags (ApiVersions' features, UpdateFeatures), transaction version 2
(KIP-890 part 2) and client telemetry (KIP-714) against Kafka 4.4.

Both brokers serve every scenario of the session at once, so nothing here changes a
finalized level for real: updates that would succeed are sent ``validate_only`` (or are
no-ops at the current level), and the refused ones change nothing anyway."""

from __future__ import annotations

import cramjam

from kipper.protocol.messages import APIS
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.producers import _describe, _wait_state

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


@scenario("txn-v2/two-transactions-with-an-epoch-bump-each")
def _(run):
    t, txn, pid, epoch = _txn_v2(run)
    _produce_v12(run, t, txn, pid, epoch, 0, 2)
    _describe(run, txn, "ongoing after the implicit add")
    ended = _end_v2(run, txn, pid, epoch, True, "commit: the next epoch in the answer")
    epoch2 = ended.get("producer_epoch", -1)
    _wait_state(run, txn, "CompleteCommit")
    _describe(run, txn, "complete commit at the bumped epoch")
    _produce_v12(run, t, txn, pid, epoch, 2, 1, start=2, label="the epoch before the bump")
    _produce_v12(run, t, txn, pid, epoch2, 0, 2, start=2, label="the new epoch from sequence 0")
    _end_v2(run, txn, pid, epoch2, False, "abort: bumps again")
    _wait_state(run, txn, "CompleteAbort")
    k.fetch(run, t, 0, isolation=1, label="read_committed: the first transaction only")
    k.list_offsets(run, t, -1, isolation=1, label="last stable offset")


@scenario("txn-v2/end-txn-retries-and-settled-states")
def _(run):
    t, txn, pid, epoch = _txn_v2(run)
    _end_v2(run, txn, pid, epoch, True, "commit in Empty")
    _end_v2(run, txn, pid, epoch - 1 if epoch > 0 else epoch + 1, False, "abort in Empty, another epoch")
    aborted = _end_v2(run, txn, pid, epoch, False, "abort in Empty: a bump with nothing to mark")
    e1 = aborted.get("producer_epoch", -1)
    _wait_state(run, txn, "CompleteAbort")
    _end_v2(run, txn, pid, epoch, False, "the abort again (a retry)")
    _end_v2(run, txn, pid, epoch, True, "commit with the retry's epoch")
    _produce_v12(run, t, txn, pid, e1, 0, 1)
    committed = _end_v2(run, txn, pid, e1, True, "commit")
    e2 = committed.get("producer_epoch", -1)
    _wait_state(run, txn, "CompleteCommit")
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
    _wait_state(run, txn, "CompleteCommit")
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
    _wait_state(run, txn, "CompleteCommit")
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


# --- client telemetry (KIP-714) and client-metrics resources ------------------------------------

GET_TELEMETRY, PUSH_TELEMETRY, LIST_CONFIG_RESOURCES = APIS[71], APIS[72], APIS[74]
CLIENT_METRICS = 16
ZERO_UUID = k.NO_TOPIC_ID
# one OTLP MetricsData: a delta sum "org.apache.kafka.producer.record.send.total" = 5 for topic t
OTLP_SUM = bytes.fromhex(
    "0a59125712550a2b6f72672e6170616368652e6b61666b612e70726f64756365722e7265636f72642e73656e642e746f"
    "74616c3a260a201900002a36fe9c97172100000000000014403a0c0a05746f70696312030a017410011801")


def _subscription(run, configs: dict, *, op: int = 0, name: str | None = None, label: str = "subscription",
                  validate_only: bool = False):
    return run.call(k.INCREMENTAL_ALTER_CONFIGS, k.top(k.INCREMENTAL_ALTER_CONFIGS), {
        "validate_only": validate_only, "resources": [{
            "resource_type": CLIENT_METRICS, "resource_name": run.name("sub") if name is None else name,
            "configs": [{"name": key, "config_operation": op, "value": value} for key, value in configs.items()]}]},
        label=label)


def _listed(run, name: str, present: bool = True) -> None:
    """Kafka's brokers learn a subscription from its metadata log a moment after the
    controller answers; the requests that follow wait for it to be listed."""
    def done(r):
        names = {c.get("resource_name") for c in r.get("config_resources", [])}
        return (name in names) == present
    run.poll(lambda: run.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]}, record=False), done)


def _telemetry_client(run, software: str):
    """A connection whose ApiVersions names ``software`` (what the subscription matches on)."""
    run.conn("tel", negotiate=False)
    run.call(k.API_VERSIONS, 3, {"client_software_name": software, "client_software_version": "1.0"}, conn="tel",
             label="api versions naming the client software")


def _get(run, instance=ZERO_UUID, label="get telemetry subscriptions"):
    return run.call(GET_TELEMETRY, 0, {"client_instance_id": instance}, conn="tel", label=label)


def _push(run, instance, subscription, *, codec=0, metrics=OTLP_SUM, terminating=False, label="push telemetry"):
    return run.call(PUSH_TELEMETRY, 0, {"client_instance_id": instance, "subscription_id": subscription,
                                        "terminating": terminating, "compression_type": codec, "metrics": metrics},
                    conn="tel", label=label)


@scenario("telemetry/subscribe-push-and-throttle")
def _(run):
    software = run.name("sw")
    _subscription(run, {"metrics": "org.apache.kafka.producer.,org.apache.kafka.client.", "interval.ms": "1000",
                        "match": f"client_software_name={software}"})
    _listed(run, run.name("sub"))
    _telemetry_client(run, software)
    got = _get(run)
    instance, subscription = got.get("client_instance_id", ZERO_UUID), got.get("subscription_id", 0)
    _get(run, instance, label="again at once: throttled")
    _push(run, instance, subscription, label="the first push after the get")
    _push(run, instance, subscription, label="a second push at once: throttled")
    run.wait(1.2)
    _push(run, instance, subscription + 1, label="another subscription id")
    again = _get(run, instance, label="after an unknown subscription: not throttled")
    _push(run, instance, again.get("subscription_id", 0), codec=4, metrics=bytes(cramjam.zstd.compress(OTLP_SUM)),
          label="zstd")
    run.wait(1.2)
    _push(run, instance, again.get("subscription_id", 0), codec=9, label="an unknown codec")
    _get(run, instance, label="after an unknown codec")
    _push(run, instance, again.get("subscription_id", 0), terminating=True, label="terminating")
    _push(run, instance, again.get("subscription_id", 0), label="after terminating")
    _push(run, ZERO_UUID, 0, label="the zero instance id")


@scenario("telemetry/no-subscription-matches")
def _(run):
    _telemetry_client(run, run.name("nobody"))
    got = _get(run, label="no subscription for this client")
    _push(run, got.get("client_instance_id", ZERO_UUID), got.get("subscription_id", 0), metrics=b"",
          label="an empty push")


@scenario("telemetry/client-metrics-resources")
def _(run):
    sub = run.name("sub")
    # (each subscription matches only this scenario's clients: both brokers serve the whole session)
    only_mine = f"client_software_name={run.name('nobody')}"
    _subscription(run, {"metrics": "org.apache.kafka.", "interval.ms": "2000", "match": only_mine}, label="create")
    _subscription(run, {"match": f"client_id={run.name('app')}-.*,{only_mine}"}, label="change the match")
    _subscription(run, {"metrics": "org.apache.kafka.consumer."}, op=2, label="append a metric")
    _listed(run, sub)
    describe = {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": sub, "configuration_keys": None}],
                "include_synonyms": True, "include_documentation": True}
    run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), describe, label="describe with synonyms and docs")
    run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), {**describe, "resources": [
        {"resource_type": CLIENT_METRICS, "resource_name": run.name("none"), "configuration_keys": None}]},
        label="describe a subscription that does not exist")
    for v in (0, 1):
        run.call(LIST_CONFIG_RESOURCES, v, {"resource_types": [CLIENT_METRICS]}, label=f"list v{v}")
    run.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": [99]}, label="an unknown resource type")
    _subscription(run, {"interval.ms": "50"}, label="interval too short")
    _subscription(run, {"interval.ms": "soon"}, label="interval not a number")
    _subscription(run, {"nope": "1"}, label="unknown config")
    _subscription(run, {"match": "who=x"}, label="unknown match key")
    _subscription(run, {"match": "client_id"}, label="a match without a value")
    _subscription(run, {"match": "client_id="}, label="a match with an empty value")  # (the tool generator's)
    _subscription(run, {"metrics": "a", "match": only_mine}, name="", label="no name")
    _subscription(run, {"metrics": "x", "match": only_mine}, validate_only=True, label="validate only")
    _subscription(run, {"metrics": None, "interval.ms": None, "match": None}, op=1, label="delete every config")
    _listed(run, sub, present=False)
    run.call(LIST_CONFIG_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]}, label="gone")


def probe_get_telemetry(run, v):
    _telemetry_client(run, run.name("probe"))
    _get(run)


def probe_push_telemetry(run, v):
    _telemetry_client(run, run.name("probe"))
    got = _get(run)
    _push(run, got.get("client_instance_id", ZERO_UUID), got.get("subscription_id", 0), metrics=b"")


def probe_list_config_resources(run, v):
    _subscription(run, {"metrics": "org.apache.kafka.", "match": f"client_software_name={run.name('nobody')}"})
    _listed(run, run.name("sub"))
    run.call(LIST_CONFIG_RESOURCES, v, {"resource_types": [CLIENT_METRICS]})


PROBES.update({71: probe_get_telemetry, 72: probe_push_telemetry, 74: probe_list_config_resources})
