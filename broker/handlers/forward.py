"""A cluster broker's admin requests that the controller answers (Kafka's forwarding).

CreateTopics, DeleteTopics, CreatePartitions, reassignments, elections, UnregisterBroker, the
configs of topics and groups ((Incremental)AlterConfigs without a BROKER resource, which
stays with the broker it names), CreateAcls, DeleteAcls, AlterClientQuotas and
AlterUserScramCredentials change the cluster's metadata, which only the controller writes,
and DescribeQuorum asks about its metadata log. The broker sends each on at the version it
came in and relays the answer: inside an Envelope with the client's principal and address
(KIP-590, handlers/envelope.py's ENVELOPED_APIS), so that the controller authorizes the
client as Kafka's does; UnregisterBroker and DescribeQuorum as they came.
A change is answered once this broker's own metadata shows it, so that the client's next
request here sees what it just did. A controller that cannot be reached gets Kafka's answer
for a forwarding that timed out (REQUEST_TIMED_OUT), per entry where the API answers per entry.
"""

from __future__ import annotations

import ipaddress

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, DESCRIBE
from kipper.broker.handlers.acls import binding_of, matched_binding
from kipper.broker.handlers.controller_apis import METADATA_KEY, refused
from kipper.broker.handlers.envelope import ENVELOPED_APIS
from kipper.broker.quota.entities import entity_of
from kipper.protocol.sasl import MECHANISM_NAMES
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from kipper.protocol.messages.envelope import ENVELOPE, encode_principal

SHOWN_WITHIN_S = 5.0  # longest a topic change waits to be in this broker's metadata


BROKER_RESOURCE = 4
REASSIGNMENT_APIS = (45, 46, 64)  # their whole-request refusals: controller_apis.refused


# the cluster operation a forwarded request needs, asked before it goes
CLUSTER_OPERATIONS = {43: ALTER, 45: ALTER, 46: DESCRIBE, 55: DESCRIBE, 64: ALTER}


def handle_forwarded(req, ctx):
    operation = CLUSTER_OPERATIONS.get(ctx.api_key)
    if operation is not None and not ctx.authorize(operation, CLUSTER, CLUSTER_NAME):
        if ctx.api_key in REASSIGNMENT_APIS:
            return refused(ctx.api_key, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                           ctx.needs_permission("ALTER" if operation == ALTER else "DESCRIBE"))
        return _unavailable(ctx.api_key, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return _forward(req, ctx, enveloped=ctx.api_key in ENVELOPED_APIS)


def configs_forwarded(local):
    """(Incremental)AlterConfigs: a broker's own configs are its own; topics' and groups' go
    to the controller."""
    def handle(req, ctx):
        if any(r.resource_type == BROKER_RESOURCE for r in req.resources):
            return local(req, ctx)
        return _forward(req, ctx, enveloped=True)
    handle.__name__ = local.__name__
    return handle


def handle_enveloped(req, ctx):
    """CreateAcls, DeleteAcls, AlterClientQuotas, AlterUserScramCredentials: ACLs, client quotas and
    SCRAM credentials are the metadata log's, which the controller writes (broker/cluster/
    security_records.py). The request goes inside an Envelope with the client's principal and
    address (KIP-590): the controller authorizes the client, as Kafka's does."""
    return _forward(req, ctx, enveloped=True)


async def _forward(req, ctx, enveloped: bool = False):
    engines = ctx.engines
    before = engines.cluster.metadata_offset
    if enveloped:
        answer = await _enveloped(req, ctx)
    else:
        answer = await engines.cluster.forward(APIS[ctx.api_key], req, ctx.api_version)
    if answer is None:
        return _unavailable(ctx.api_key, req, ErrorCode.REQUEST_TIMED_OUT)
    if type(answer) is ErrorCode:  # the controller refused the Envelope itself
        return _unavailable(ctx.api_key, req, answer)
    shown = _shown(ctx.api_key, req, answer, before)
    if shown is not None:
        clock = engines.clock
        deadline = clock() + SHOWN_WITHIN_S * 1000
        while not shown(engines.cluster.image) and clock() < deadline:
            await engines.appends.wait([METADATA_KEY], (deadline - clock()) / 1000)
    return answer


async def _enveloped(req, ctx):
    """The controller's answer to the client's request sent inside an Envelope; None when the
    controller could not be reached, the error code of an Envelope it refused."""
    api = APIS[ctx.api_key]
    frame = encode_request(api, ctx.api_version, ctx.correlation_id, ctx.client_id, req)
    host = ctx.session.peer.rsplit(":", 1)[0].strip("[]")
    try:
        address = ipaddress.ip_address(host).packed
    except ValueError:
        address = bytes(4)  # (a peer that is no address: an in-process test's)
    answer = await ctx.engines.cluster.forward(ENVELOPE, {
        "request_data": bytes(frame[4:]), "request_principal": encode_principal(ctx.session.principal),
        "client_host_address": address}, 0)
    if answer is None:
        return None
    if answer.error_code != 0:
        return ErrorCode(answer.error_code)
    return decode_response(api, ctx.api_version, answer.response_data)[1]


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
    return _security_shown(api_key, req, answer)


def _security_shown(api_key: int, req, answer):
    """The ACLs, quotas or credentials the controller changed, as this broker's image must show them."""
    if api_key == 30:
        made = [binding_of(c) for c, r in zip(req.creations, answer.results) if r.error_code == 0]
        return lambda image: all(a in image.security.acl_ids for a in made)
    if api_key == 31:
        gone = [matched_binding(m) for r in answer.filter_results for m in r.matching_acls]
        return lambda image: not any(a in image.security.acl_ids for a in gone)
    if api_key == 49 and not req.validate_only:
        done = {_entity(r.entity) for r in answer.entries if r.error_code == 0}
        wanted = [(_entity(entry.entity), entry.ops) for entry in req.entries]
        wanted = [(entity, ops) for entity, ops in wanted if entity in done]
        return lambda image: all(_quotas_shown(image.security.quotas.get(entity, {}), ops) for entity, ops in wanted)
    if api_key == 51:
        done = {r.user for r in answer.results if r.error_code == 0}
        upserted = [(u.name, MECHANISM_NAMES[u.mechanism], u.salt, u.iterations) for u in req.upsertions
                    if u.name in done]
        deleted = [(d.name, MECHANISM_NAMES[d.mechanism]) for d in req.deletions if d.name in done]

        def shown(image) -> bool:
            creds = image.security.credentials
            return all((c := creds.get(n, {}).get(m)) is not None and c.salt == bytes(salt) and c.iterations == i
                       for n, m, salt, i in upserted) and not any(m in creds.get(n, {}) for n, m in deleted)
        return shown
    return None


def _entity(data) -> tuple:
    return entity_of({e.entity_type: e.entity_name for e in data}.items())  # (a type named twice: the last)


def _quotas_shown(values: dict, ops) -> bool:
    return all((o.key not in values) if o.remove else values.get(o.key) == float(o.value) for o in ops)


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
    if api_key in REASSIGNMENT_APIS:
        return refused(api_key, req, code, None)
    if api_key == 43:
        return {"throttle_time_ms": 0, "error_code": int(code), "replica_election_results": []}
    if api_key == 55:
        return {"error_code": int(code), "error_message": None, "topics": [], "nodes": []}
    if api_key == 30:
        return {"throttle_time_ms": 0, "results": [{"error_code": int(code), "error_message": None}
                                                   for _ in req.creations]}
    if api_key == 31:
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": int(code), "error_message": None, "matching_acls": []} for _ in req.filters]}
    if api_key == 49:
        return {"throttle_time_ms": 0, "entries": [
            {"error_code": int(code), "error_message": None,
             "entity": [{"entity_type": e.entity_type, "entity_name": e.entity_name} for e in entry.entity]}
            for entry in req.entries]}
    if api_key == 51:
        users = dict.fromkeys([d.name for d in req.deletions] + [u.name for u in req.upsertions])
        return {"throttle_time_ms": 0, "results": [{"user": n, "error_code": int(code), "error_message": None}
                                                   for n in users]}
    if api_key in (33, 44):
        return {"throttle_time_ms": 0, "responses": [
            {"error_code": int(code), "error_message": None, "resource_type": r.resource_type,
             "resource_name": r.resource_name} for r in req.resources]}
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": None}
