"""A whole broker in the test process (open_engines, no sockets) driven with real
request frames through its dispatcher, under a settable clock."""

from __future__ import annotations

from kipper.broker import config as cfg
from kipper.broker.server import open_engines
from kipper.broker.context import Session
from kipper.broker.dispatcher import Dispatcher, Later
from kipper.broker.handlers.replies import Reply
from kipper.protocol import records
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS

PRODUCE = 0


class InProcessBroker:
    def __init__(self, now: int = 1_700_000_000_000, **overrides):
        self.now = now
        self.state = open_engines(cfg.load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0",
                                                      **overrides}), clock=lambda: self.now)
        self.state.advertised["PLAINTEXT"] = ("127.0.0.1", 9092)
        self.dispatcher = Dispatcher.of(self.state)
        self.session = Session("PLAINTEXT", "127.0.0.1:5555")
        self.cid = 0

    def call(self, api_key: int, version: int, body: dict, session: Session | None = None):
        """Encode ``body``, dispatch it, decode the answer (as a client would)."""
        api = APIS[api_key]
        self.cid += 1
        frame = encode_request(api, version, self.cid, "test", body)[4:]
        [result], _ = self.dispatcher.dispatch([frame], 0, session or self.session)
        if type(result) is Reply:
            result = result.body
        assert type(result) is not Later, "a deferred answer: drive the engine directly instead"
        if isinstance(result, list):  # a Fetch answer's buffers (its records are not copied)
            result = b"".join(bytes(part) for part in result)
        return decode_response(api, version, result[4:])[1]

    def produce(self, topic: str, partition: int, rows, *, version: int = 9, transactional_id: str | None = None,
                **batch) -> dict:
        """One batch of (key, value[, timestamp]) rows; the partition's answer."""
        data = records.build_batch(rows, **batch)
        body = {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": data}]}]}
        return self.call(PRODUCE, version, body).responses[0].partition_responses[0]
