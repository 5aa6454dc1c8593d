"""Typed builders for what a producer sends on its own: Produce and
InitProducerId, over a BlockingConnection (kipper's Producer has its own
pipelined sender; these serve tools, benchmarks and tests).

As in kipper.client.admin: the version comes from the connection's
negotiation (``version=`` pins one) and the parsed response is returned.
"""

from __future__ import annotations

from typing import Mapping

from kipper.client.admin import DEFAULT_TIMEOUT_MS, by_topic, send
from kipper.client.blocking import BlockingConnection
from kipper.protocol.messages.init_producer_id import INIT_PRODUCER_ID
from kipper.protocol.messages.produce import PRODUCE

# Produce v11 adds TRANSACTION_ABORTABLE (KIP-890) and v12 tells the broker the
# client uses transaction version 2, where a produce adds its partition to the
# transaction; these callers handle neither, and v9 is what they always sent.
PRODUCE_MAX_VERSION = 9
# InitProducerId v5 adds TRANSACTION_ABORTABLE (KIP-890), which these callers do not handle.
INIT_PRODUCER_ID_MAX_VERSION = 4

__all__ = ["init_producer_id", "produce"]


def produce(conn: BlockingConnection, batches: Mapping[tuple[str, int], bytes], *, acks: int = -1,
            timeout_ms: int = DEFAULT_TIMEOUT_MS, transactional_id: str | None = None, version: int | None = None):
    """Append one encoded record batch (kipper.protocol.records.build_batch)
    to each (topic, partition). With acks=0 the broker sends no answer and
    None is returned."""
    if version is None:
        version = conn.pick_version(PRODUCE.key, PRODUCE_MAX_VERSION)
    body = {"transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms, "topic_data": [
        {"name": topic, "partition_data": [{"index": p, "records": batch} for p, batch in parts]}
        for topic, parts in by_topic(batches.items()).items()]}
    if acks == 0:
        conn.send_no_response(PRODUCE.key, version, body)
        return None
    return conn.request(PRODUCE.key, body, version=version)


def init_producer_id(conn: BlockingConnection, transactional_id: str | None = None, *,
                     transaction_timeout_ms: int = -1, producer_id: int = -1, producer_epoch: int = -1,
                     version: int | None = None):
    """A new producer id, or (v3+, KIP-360) an epoch bump of ``producer_id``
    at ``producer_epoch``. Errors stay in the response: CONCURRENT_TRANSACTIONS
    and friends are for the caller to retry."""
    return send(conn, INIT_PRODUCER_ID, {
        "transactional_id": transactional_id, "transaction_timeout_ms": transaction_timeout_ms,
        "producer_id": producer_id, "producer_epoch": producer_epoch}, version, INIT_PRODUCER_ID_MAX_VERSION)
