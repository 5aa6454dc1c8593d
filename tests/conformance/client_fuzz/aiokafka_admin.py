"""aiokafka's admin calls, as the client generator's steps name them: each runs in its own
event loop (the generator's threads have none) with the client settings for one broker, and
returns what the client returned (aiokafka hands back the protocol's responses, as data)."""

from __future__ import annotations

import asyncio
import json

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.structs import TopicPartition

from tests.conformance.client_fuzz.kafka_python import sorted_topics
from tests.conformance.client_fuzz.plain import failure, plain

TIMEOUT_MS = 10000
UNORDERED = frozenset({"create_topics", "delete_topics", "create_partitions", "describe_topics"})


# aiokafka raises the first refusal in the broker's order of topics (a hash map's on Kafka): each
# topic of these is asked alone, as its own call
ONE_AT_A_TIME = {"create_topics": "topics", "delete_topics": "topics", "create_partitions": "topics"}


def admin(settings: dict, op: str, args: dict):
    if op in ONE_AT_A_TIME:
        field = ONE_AT_A_TIME[op]
        return {json.dumps(item): _one(settings, op, {**args, field: [item]}) for item in args[field]}
    return _one(settings, op, args)


def _one(settings: dict, op: str, args: dict):
    try:
        found = plain(asyncio.run(asyncio.wait_for(_admin(settings, op, args), TIMEOUT_MS / 1000 * 2)))
    except Exception as exc:  # noqa: BLE001 - what the call raised is its outcome
        return failure(exc)
    return sorted_topics(found) if op in UNORDERED else found


async def _admin(settings: dict, op: str, args: dict):
    client = AIOKafkaAdminClient(**settings, request_timeout_ms=TIMEOUT_MS)
    await client.start()
    try:
        return await _call(client, op, args)
    finally:
        await client.close()


async def _call(client: AIOKafkaAdminClient, op: str, args: dict):
    if op == "create_topics":
        topics = [NewTopic(t["name"], t.get("num_partitions", -1), t.get("replication_factor", -1),
                           topic_configs=t.get("config") or {}) for t in args["topics"]]
        return await client.create_topics(topics, timeout_ms=TIMEOUT_MS, validate_only=args.get("validate_only", False))
    if op == "delete_topics":
        return await client.delete_topics(args["topics"], timeout_ms=TIMEOUT_MS)
    if op == "create_partitions":
        return await client.create_partitions({t: NewPartitions(n) for t, n in args["topics"]}, timeout_ms=TIMEOUT_MS,
                                              validate_only=args.get("validate_only", False))
    if op == "describe_topics":
        return await client.describe_topics(args["topics"])
    if op == "describe_configs":
        resources = [ConfigResource(ConfigResourceType[r["type"]], r["name"]) for r in args["resources"]
                     if r["type"] in ConfigResourceType.__members__]
        return _by_name(await client.describe_configs(resources, include_synonyms=args.get("synonyms", False)))
    if op == "delete_records":
        return await client.delete_records({TopicPartition(t, p): RecordsToDelete(o) for t, p, o in args["partitions"]},
                                           timeout_ms=TIMEOUT_MS)
    if op == "list_consumer_groups":
        return sorted((g for g in await client.list_consumer_groups() if g[0] in args["own"]), key=repr)
    if op == "describe_consumer_groups":
        return await client.describe_consumer_groups(args["groups"], include_authorized_operations=args.get(
            "authorized", False))
    if op == "list_consumer_group_offsets":
        partitions = args.get("partitions")
        return await client.list_consumer_group_offsets(args["group"], partitions=None if partitions is None else [
            TopicPartition(t, p) for t, p, _ in partitions])
    if op == "describe_cluster":
        return await client.describe_cluster()
    raise ValueError(f"no aiokafka admin call {op}")


KINDS = {2: "TOPIC", 4: "BROKER"}


def _by_name(responses) -> dict:
    """DescribeConfigs' answers as aiokafka hands them (the protocol's tuples, in the broker's
    order: a hash map's on Kafka) keyed as a reader looks them up: TYPE:name, then config name."""
    out = {}
    for response in responses:
        for code, message, kind, name, entries in response.resources:
            out[f"{KINDS.get(kind, kind)}:{name}"] = {"error": [code, message], "configs": {
                e[0]: {"value": e[1], "read_only": e[2], "source_or_default": e[3], "sensitive": e[4],
                       "synonyms": [list(s) for s in e[5]] if len(e) > 5 else None} for e in entries}}
    return out
