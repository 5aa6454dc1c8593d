"""A cluster broker's admin requests that the controller answers (Kafka's forwarding).

CreateTopics, DeleteTopics, CreatePartitions, reassignments, elections, UnregisterBroker and
the configs of topics and groups ((Incremental)AlterConfigs without a BROKER resource, which
stays with the broker it names) change the cluster's metadata, which only the controller
writes, and DescribeQuorum asks about its metadata log: the broker sends the request on as it
came (the same version) and relays the answer.
A change is answered once this broker's own metadata shows it, so that the client's next
request here sees what it just did. A controller that cannot be reached gets Kafka's answer
for a forwarding that timed out (REQUEST_TIMED_OUT), per entry where the API answers per entry.
"""

from __future__ import annotations

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, DESCRIBE
from kipper.broker.handlers.controller_apis import METADATA_KEY
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS

SHOWN_WITHIN_S = 5.0  # longest a topic change waits to be in this broker's metadata


BROKER_RESOURCE = 4


def handle_forwarded(req, ctx):
    if ctx.api_key in (43, 45, 46, 64) and not ctx.authorize(ALTER, CLUSTER, CLUSTER_NAME):
        return _unavailable(ctx.api_key, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if ctx.api_key == 55 and not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return _unavailable(ctx.api_key, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return _forward(req, ctx)


def configs_forwarded(local):
    """(Incremental)AlterConfigs: a broker's own configs are its own; topics' and groups' go
    to the controller."""
    def handle(req, ctx):
        if any(r.resource_type == BROKER_RESOURCE for r in req.resources):
            return local(req, ctx)
        return _forward(req, ctx)
    handle.__name__ = local.__name__
    return handle


async def _forward(req, ctx):
    engines = ctx.engines
    before = engines.cluster.metadata_offset
    answer = await engines.cluster.forward(APIS[ctx.api_key], req, ctx.api_version)
    if answer is None:
        return _unavailable(ctx.api_key, req, ErrorCode.REQUEST_TIMED_OUT)
    shown = _shown(ctx.api_key, req, answer, before)
    if shown is not None:
        clock = engines.clock
        deadline = clock() + SHOWN_WITHIN_S * 1000
        while not shown(engines.cluster.image) and clock() < deadline:
            await engines.appends.wait([METADATA_KEY], (deadline - clock()) / 1000)
    return answer


def _shown(api_key: int, req, answer, before: int):
    """What the broker's image must show before the answer goes back, or None."""
    if api_key in (33, 44) and not req.get("validate_only", False) and any(
            r.error_code == 0 for r in answer.responses):
        return lambda image: image.offset > before  # (the controller wrote ConfigRecords)
    if api_key == 19 and not req.get("validate_only", False):
        made = {t.name: t.get("num_partitions", 0) for t in answer.topics if t.error_code == 0}
        return lambda image: all(n in image.topics and len(image.topics[n].partitions) >= c
                                 for n, c in made.items())
    if api_key == 20:
        gone = {r.get("topic_id") for r in answer.responses if r.error_code == 0}
        return lambda image: not any(i in image.by_id for i in gone)
    if api_key == 37 and not req.get("validate_only", False):
        grown = {t.name: t.count for t in req.topics}
        ok = {r.name for r in answer.results if r.error_code == 0}
        return lambda image: all(n in image.topics and len(image.topics[n].partitions) >= grown[n] for n in ok)
    return None


def _unavailable(api_key: int, req, code: ErrorCode) -> dict:
    if api_key == 19:
        return {"throttle_time_ms": 0, "topics": [{"name": t.name, "error_code": int(code), "error_message": None}
                                                  for t in req.topics]}
    if api_key == 20:
        names = [t.get("name") for t in req.topics] if "topics" in req else list(req.topic_names)
        return {"throttle_time_ms": 0, "responses": [{"name": n, "error_code": int(code)} for n in names]}
    if api_key == 37:
        return {"throttle_time_ms": 0, "results": [{"name": t.name, "error_code": int(code), "error_message": None}
                                                   for t in req.topics]}
    if api_key == 45:
        return {"throttle_time_ms": 0, "error_code": int(code), "error_message": None, "responses": []}
    if api_key == 43:
        return {"throttle_time_ms": 0, "error_code": int(code), "replica_election_results": []}
    if api_key == 55:
        return {"error_code": int(code), "error_message": None, "topics": [], "nodes": []}
    if api_key == 46:
        return {"throttle_time_ms": 0, "error_code": int(code), "error_message": None, "topics": []}
    if api_key in (33, 44):
        return {"throttle_time_ms": 0, "responses": [
            {"error_code": int(code), "error_message": None, "resource_type": r.resource_type,
             "resource_name": r.resource_name} for r in req.resources]}
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": None}
