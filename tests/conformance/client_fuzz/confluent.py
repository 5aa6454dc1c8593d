"""confluent-kafka's calls (librdkafka), as the client generator's steps name them: each takes
the client settings for one broker (and the sequence's user, when the step is that user's) and
the step's arguments, and returns what the client returned, as ``plain`` data."""

from __future__ import annotations

import time
from concurrent.futures import Future

from confluent_kafka import (ConsumerGroupTopicPartitions, ElectionType, IsolationLevel, Consumer, KafkaException,
                             Producer, TopicCollection, TopicPartition)
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic,
                                   OffsetSpec, ResourcePatternType, ResourceType, ScramCredentialInfo,
                                   ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion)

from tests.conformance.client_fuzz.plain import failure, key, plain

TIMEOUT_S = 10.0
QUIET = {"log_level": 0}  # librdkafka's own log lines (a broker not up yet...) are not outcomes


def _futures(futures) -> object:
    """Each future's result (or what it raised), keyed as the client keyed them."""
    if isinstance(futures, Future):
        futures = {"result": futures}
    out = {}
    for name, future in futures.items():
        try:
            out[key(name)] = plain(future.result(timeout=TIMEOUT_S))
        except Exception as exc:  # noqa: BLE001 - what the call raised is its outcome
            out[key(name)] = failure(exc)
    return dict(sorted(out.items()))


def _resource(r: dict) -> ConfigResource:
    return ConfigResource(ResourceType[r["type"]], r["name"],
                          set_config=r.get("set"), incremental_configs=[
                              ConfigEntry(name, value, incremental_operation=AlterConfigOpType[op])
                              for name, op, value in r.get("ops", [])] or None)


def _acl(a: dict, cls=AclBinding):
    return cls(ResourceType[a["resource"]], a["name"], ResourcePatternType[a["pattern"]], a["principal"], a["host"],
               AclOperation[a["operation"]], AclPermissionType[a["permission"]])


def _spec(spec):
    if isinstance(spec, int):
        return OffsetSpec.for_timestamp(spec)
    return getattr(OffsetSpec, spec)()


def _tps(items) -> list[TopicPartition]:
    return [TopicPartition(t, p, o) if o is not None else TopicPartition(t, p) for t, p, o in items]


def admin(settings: dict, op: str, args: dict):
    client = AdminClient({**settings, **QUIET, "socket.timeout.ms": int(TIMEOUT_S * 1000)})
    timeout = {"request_timeout": TIMEOUT_S}
    if op == "create_topics":
        topics = [NewTopic(t["name"], **{k: v for k, v in t.items() if k != "name"}) for t in args["topics"]]
        return _futures(client.create_topics(topics, validate_only=args.get("validate_only", False),
                                             operation_timeout=TIMEOUT_S, **timeout))
    if op == "delete_topics":
        return _futures(client.delete_topics(args["topics"], operation_timeout=TIMEOUT_S, **timeout))
    if op == "create_partitions":
        return _futures(client.create_partitions([NewPartitions(t, n) for t, n in args["topics"]],
                                                 validate_only=args.get("validate_only", False), **timeout))
    if op == "describe_topics":
        return _futures(client.describe_topics(TopicCollection(args["topics"]), include_authorized_operations=args.get(
            "authorized", False), **timeout))
    if op == "list_topics":
        meta = client.list_topics(args.get("topic"), timeout=TIMEOUT_S)
        return {"topics": {name: plain(t) for name, t in sorted(meta.topics.items()) if name in args["own"]}}
    if op == "describe_cluster":
        return _futures(client.describe_cluster(include_authorized_operations=args.get("authorized", False), **timeout))
    if op == "describe_configs":
        return _futures(client.describe_configs([_resource(r) for r in args["resources"]], **timeout))
    if op == "incremental_alter_configs":
        return _futures(client.incremental_alter_configs([_resource(r) for r in args["resources"]],
                                                         validate_only=args.get("validate_only", False), **timeout))
    if op == "alter_configs":
        return _futures(client.alter_configs([_resource(r) for r in args["resources"]],
                                             validate_only=args.get("validate_only", False), **timeout))
    if op == "list_offsets":
        specs = {TopicPartition(t, p): _spec(s) for t, p, s in args["partitions"]}
        return _futures(client.list_offsets(specs, isolation_level=IsolationLevel[args["isolation"]], **timeout))
    if op == "delete_records":
        return _futures(client.delete_records(_tps(args["partitions"]), operation_timeout=TIMEOUT_S, **timeout))
    if op == "list_consumer_groups":
        result = client.list_consumer_groups(**timeout).result(timeout=TIMEOUT_S)
        own = sorted((g for g in result.valid if g.group_id in args["own"]), key=lambda g: g.group_id)
        return {"valid": plain(own), "errors": plain(result.errors)}
    if op == "describe_consumer_groups":
        return _futures(client.describe_consumer_groups(args["groups"], include_authorized_operations=args.get(
            "authorized", False), **timeout))
    if op == "list_consumer_group_offsets":
        return _futures(client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
            args["group"], _tps(args["partitions"]) if args.get("partitions") is not None else None)],
            require_stable=args.get("stable", False), **timeout))
    if op == "alter_consumer_group_offsets":
        return _futures(client.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
            args["group"], _tps(args["partitions"]))], **timeout))
    if op == "delete_consumer_groups":
        return _futures(client.delete_consumer_groups(args["groups"], **timeout))
    if op == "create_acls":
        return _futures(client.create_acls([_acl(a) for a in args["acls"]], **timeout))
    if op == "describe_acls":
        return _futures(client.describe_acls(_acl(args["filter"], AclBindingFilter), **timeout))
    if op == "delete_acls":
        return _futures(client.delete_acls([_acl(a, AclBindingFilter) for a in args["filters"]], **timeout))
    if op == "describe_user_scram_credentials":
        return _futures(client.describe_user_scram_credentials(args["users"], **timeout))
    if op == "alter_user_scram_credentials":
        alterations = [UserScramCredentialUpsertion(u, ScramCredentialInfo(ScramMechanism[m], i), pw.encode(),
                                                    salt.encode() if salt else None)
                       if pw is not None else UserScramCredentialDeletion(u, ScramMechanism[m])
                       for u, m, i, pw, salt in args["alterations"]]
        return _futures(client.alter_user_scram_credentials(alterations, **timeout))
    if op == "elect_leaders":
        # (no request_timeout: confluent-kafka 2.16 raises SystemError reading its own keywords)
        return _futures(client.elect_leaders(ElectionType[args["type"]], _tps(args["partitions"])))
    raise ValueError(f"no confluent admin call {op}")


def produce(settings: dict, args: dict):
    """Records produced and flushed: each delivery report's partition, offset and error, in order."""
    reports = []
    conf = {**settings, **QUIET, **args.get("config", {}), "message.timeout.ms": int(TIMEOUT_S * 1000)}
    producer = Producer(conf)
    try:
        if args.get("transaction"):
            producer.init_transactions(TIMEOUT_S)
            producer.begin_transaction()
        for i, r in enumerate(args["records"]):
            producer.produce(r["topic"], value=r.get("value"), key=r.get("key"), partition=r.get("partition", -1),
                             timestamp=r.get("timestamp", 0), headers=r.get("headers"),
                             on_delivery=lambda err, msg, i=i: reports.append(
                                 [i, plain(err) if err is not None else [msg.partition(), msg.offset()]]))
        if args.get("offsets"):  # a consume-transform-produce's: the group's offsets in the transaction
            producer.send_offsets_to_transaction(_tps(args["offsets"]["partitions"]),
                                                 _group_metadata(settings, args["offsets"]["group"]), TIMEOUT_S)
        if args.get("transaction") == "commit":
            producer.commit_transaction(TIMEOUT_S)
        elif args.get("transaction"):
            # (flushed first: an abort purges what is not sent yet, and what is is timing)
            producer.flush(TIMEOUT_S)
            producer.abort_transaction(TIMEOUT_S)
        left = producer.flush(TIMEOUT_S)
    except KafkaException as exc:
        return {"reports": sorted(reports), "raised": failure(exc)}
    return {"reports": sorted(reports), "unflushed": left}


def _group_metadata(settings: dict, group: str):
    """A group's metadata as a consumer of it that has not joined gives it (generation -1)."""
    consumer = Consumer({**settings, **QUIET, "group.id": group})
    try:
        return consumer.consumer_group_metadata()
    finally:
        consumer.close()


def consume(settings: dict, args: dict):
    """Records read from the partitions assigned (or the group's), up to ``count`` or an idle
    second; then what the consumer is asked after (committed offsets, positions, watermarks)."""
    conf = {**settings, **QUIET, "group.id": args.get("group", "unused"), "enable.auto.commit": False,
            "auto.offset.reset": args.get("reset", "earliest"), **args.get("config", {})}
    consumer = Consumer(conf)
    records, out = [], {}
    try:
        if args.get("subscribe"):
            consumer.subscribe(args["subscribe"])
        else:
            consumer.assign(_tps(args["partitions"]))
        idle_until = None
        while len(records) < args["count"]:
            msg = consumer.poll(0.2)
            if msg is None:
                idle_until = idle_until or _now() + args.get("idle_s", 1.5)
                if _now() > idle_until:
                    break
                continue
            idle_until = None
            if msg.error():
                records.append(plain(msg.error()))
                break
            records.append([msg.topic(), msg.partition(), msg.offset(), plain(msg.key()), plain(msg.value()),
                            plain(msg.headers()), msg.timestamp()[0]])
        records.sort(key=lambda r: (r[:3] if isinstance(r, list) else []))
        out["records"] = records
        if args.get("commit"):
            out["commit"] = plain(consumer.commit(offsets=_tps(args["commit"]), asynchronous=False))
        if args.get("committed"):
            out["committed"] = plain(consumer.committed(_tps(args["committed"]), timeout=TIMEOUT_S))
        if args.get("watermarks"):
            out["watermarks"] = [consumer.get_watermark_offsets(TopicPartition(t, p), timeout=TIMEOUT_S)
                                 for t, p, _ in args["watermarks"]]
        if args.get("times"):
            out["times"] = plain(consumer.offsets_for_times(_tps(args["times"]), timeout=TIMEOUT_S))
    except KafkaException as exc:
        out["raised"] = failure(exc)
    finally:
        consumer.close()
    return out


def share_consume(settings: dict, args: dict):
    """A KIP-932 share consumer (confluent-kafka's ShareConsumer, explicit acknowledgement) in
    the share group ``group``, set to read from the earliest offset (waited for: Kafka applies a
    group config a moment after it answers): every record it is given until ``idle_s`` pass
    without one, each acknowledged as ``acks`` says for its offset, then committed. What was
    delivered, with each record's delivery count, and what the commit returned."""
    from confluent_kafka import AcknowledgeType, ShareConsumer

    admin_client = AdminClient({**settings, **QUIET})
    group = _resource({"type": "GROUP", "name": args["group"], "ops": [("share.auto.offset.reset", "SET", "earliest")]})
    out = {"config": _futures(admin_client.incremental_alter_configs([group]))}
    deadline = _now() + 5
    while _now() < deadline and not _reads_earliest(admin_client, args["group"]):
        time.sleep(0.2)
    time.sleep(1.0)  # (Kafka's group coordinator reads the config from its metadata log a moment later still)
    consumer = ShareConsumer({**settings, **QUIET, "group.id": args["group"], "share.acknowledgement.mode": "explicit"})
    delivered, acks = [], args.get("acks") or ["ACCEPT"]
    try:
        consumer.subscribe(args["topics"])
        # the first record may take a while: Kafka assigns a share group's partitions off the
        # heartbeat (the assignment comes on a later one) and loads a share partition on first use
        idle_until = _now() + args.get("idle_s", 30.0)
        while _now() < idle_until:
            for msg in consumer.poll(0.3):
                idle_until = _now() + 2.0
                if msg.error():
                    delivered.append(plain(msg.error()))
                    continue
                ack = acks[msg.offset() % len(acks)]
                delivered.append([msg.topic(), msg.partition(), msg.offset(), plain(msg.key()), msg.delivery_count(),
                                  ack])
                consumer.acknowledge(msg, AcknowledgeType[ack])
            if delivered:
                out["commit"] = plain(consumer.commit_sync())
    except KafkaException as exc:
        out["raised"] = failure(exc)
    finally:
        consumer.close()
    out["delivered"] = sorted(delivered, key=lambda r: r[:3] if isinstance(r, list) else [])
    return out


def _reads_earliest(client: AdminClient, group: str) -> bool:
    try:
        found = client.describe_configs([ConfigResource(ResourceType.GROUP, group)])
        configs = next(iter(found.values())).result(timeout=TIMEOUT_S)
    except Exception:  # noqa: BLE001 - not yet (or not allowed: then it never will)
        return False
    entry = configs.get("share.auto.offset.reset")
    return entry is not None and entry.value == "earliest"


def _now() -> float:
    return time.monotonic()
