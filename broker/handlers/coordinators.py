"""Which broker of a cluster coordinates a group or a transactional id, as the handlers see it.

In a cluster (docs/CLUSTER.md) a group's coordinator is the leader of its `__consumer_offsets`
partition, a transactional id's the leader of its `__transaction_state` partition (Kafka's
hashing: broker/cluster/node.py). ``coordinated`` wraps a group or transaction handler: a
request for keys this broker coordinates goes to it, one for keys it does not is answered
NOT_COORDINATOR (the answer built from the API's declaration, protocol/error_answers.py),
and in a batch (DescribeGroups, OffsetFetch v8+, DeleteGroups...) the entries of the other
brokers' keys are answered NOT_COORDINATOR. A request whose handling appended records to
the coordinator's internal partition is answered once they are replicated to its ISR (the
partition's high watermark passed them), as Kafka's coordinators write with acks=all, for at
most offsets.commit.timeout.ms: a committed offset or a group's state survives its
coordinator's loss.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from kipper.protocol import error_answers
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS

NOT_COORDINATOR = int(ErrorCode.NOT_COORDINATOR)
COMMIT_TIMEOUT_S = 5.0  # Kafka's offsets.commit.timeout.ms


def _group(req, version):
    return [req.group_id]


def _groups(name: str):
    def keys(req, version):
        entries = req.get(name) or []
        return [e if isinstance(e, str) else e.group_id for e in entries]
    return keys


def _offset_fetch(req, version):
    return [g.group_id for g in req.groups] if version >= 8 else [req.group_id]


def _transactional(req, version):
    return [req.transactional_id] if req.get("transactional_id") is not None else []


def _add_partitions(req, version):
    return [t.transactional_id for t in req.transactions] if version >= 4 else [req.v3_and_below_transactional_id]


# api key -> (the request's keys, transaction coordinator?)
KEYS: dict[int, tuple[Callable, bool]] = {
    8: (_group, False), 9: (_offset_fetch, False), 11: (_group, False), 12: (_group, False),
    13: (_group, False), 14: (_group, False), 15: (_groups("groups"), False),
    42: (_groups("groups_names"), False), 47: (_group, False), 68: (_group, False),
    69: (_groups("group_ids"), False), 76: (_group, False), 77: (_groups("group_ids"), False),
    90: (_groups("groups"), False), 91: (_group, False), 92: (_group, False), 28: (_group, False),
    22: (_transactional, True), 24: (_add_partitions, True), 25: (_transactional, True),
    26: (_transactional, True), 65: (_groups("transactional_ids"), True),
}


def coordinated(handler):
    """``handler`` behind the coordinator check of its API (KEYS)."""
    def gate(req, ctx):
        cluster = ctx.engines.cluster
        keys_of, transaction = KEYS[ctx.api_key]
        keys = keys_of(req, ctx.api_version)
        foreign = {k for k in keys if not cluster.coordinates(k, transaction)}
        if not foreign:
            return _replicated(handler(req, ctx), cluster, keys, transaction)
        api = APIS[ctx.api_key]
        if len(foreign) == len(set(keys)) and len(keys) <= 1 or not _batched(ctx.api_key, ctx.api_version):
            return error_answers.error_answer(api, ctx.api_version, req, NOT_COORDINATOR)
        answer = handler(req, ctx)
        if type(answer) is dict:
            _refuse_entries(answer, foreign)
        return answer
    gate.__name__ = handler.__name__
    return gate


def _replicated(result, cluster, keys, transaction: bool):
    """``result``, once what its handling appended to the coordinator's partitions is in
    their ISR (at once when nothing waits)."""
    if not hasattr(result, "__await__") and not cluster.unreplicated(keys, transaction):
        return result
    return _after_replication(result, cluster, keys, transaction)


async def _after_replication(result, cluster, keys, transaction: bool):
    if hasattr(result, "__await__"):
        result = await result
    waits = cluster.unreplicated(keys, transaction)
    if waits:
        loop = asyncio.get_running_loop()
        futures = []
        for replica, end in waits:
            future = loop.create_future()
            replica.wait_for(end, 1, lambda code, f=future: f.done() or f.set_result(code))
            futures.append(future)
        await asyncio.wait(futures, timeout=COMMIT_TIMEOUT_S)
    return result


def _batched(api_key: int, version: int) -> bool:
    return api_key in (15, 42, 69, 77, 90, 65) or (api_key == 9 and version >= 8)


def _refuse_entries(answer: dict, foreign: set) -> None:
    """NOT_COORDINATOR in the entries of a batched answer that name another broker's key."""
    for value in answer.values():
        if isinstance(value, list):
            for entry in value:
                if isinstance(entry, dict) and (entry.get("group_id") or entry.get("transactional_id")) in foreign:
                    for name in entry:
                        if name.endswith("error_code"):
                            entry[name] = NOT_COORDINATOR
