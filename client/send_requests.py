"""What the SendEngine hands the shell to write: a ProduceRequest for one
broker, or a ControlRequest (Metadata, InitProducerId) for any ready one. Each
is also the context the connection keeps with the request in flight, so its
answer finds its way back to the engine."""

from __future__ import annotations

from collections import defaultdict

from kipper.client.batch import ProducerBatch
from kipper.client.config import ProducerConfig
from kipper.protocol.messages.produce import PRODUCE


class ProduceRequest:
    """The batches drained for one broker; ``body()`` seals them (outside the lock)."""

    api = PRODUCE
    min_version, max_version = 3, 12
    __slots__ = ("node_id", "batches", "sent_at", "acks", "timeout_ms", "compression_type")

    def __init__(self, node_id: int, batches: list[ProducerBatch], now: float, config: ProducerConfig):
        self.node_id = node_id
        self.batches = batches
        self.sent_at = now
        self.acks = config.acks
        self.timeout_ms = config.request_timeout_ms
        self.compression_type = config.compression_type

    @property
    def expects_response(self) -> bool:
        return self.acks != 0

    def body(self, version: int | None = None) -> dict:
        topics: dict[str, list] = defaultdict(list)
        for b in self.batches:
            # a list of chunks: encode_request_parts leaves them where they are
            topics[b.topic].append({"index": b.partition, "records": list(b.seal_parts(self.compression_type))})
        return {"transactional_id": None, "acks": self.acks, "timeout_ms": self.timeout_ms,
                "topic_data": [{"name": t, "partition_data": p} for t, p in topics.items()]}


class ControlRequest:
    """Metadata or InitProducerId, for whichever broker is ready; ``since``
    holds fields that only exist from some version on."""

    __slots__ = ("api", "min_version", "max_version", "fields", "since", "node_id", "sent_at")

    def __init__(self, api, min_version: int, max_version: int, fields: dict,
                 since: tuple[int, dict] | None = None):
        self.api = api
        self.min_version = min_version
        self.max_version = max_version
        self.fields = fields
        self.since = since
        self.node_id = -1
        self.sent_at = 0.0

    def body(self, version: int) -> dict:
        if self.since is not None and version >= self.since[0]:
            return {**self.fields, **self.since[1]}
        return self.fields
