"""The client side of benchmarks/side_by_side.py: each function runs in its own process
(spawned), speaks to any Kafka broker, and returns what it measured.

- ``raw_produce``: single-record Produce requests, pre-encoded and pipelined on one
  connection, to find how many requests a second a broker answers;
- ``paced_latency``: a confluent-kafka producer at a fixed rate with linger.ms=0 and a
  consumer in another process, latency from ``produce()`` to the consumer;
- ``fill`` and ``consume``: load a topic, then read it all back with confluent-kafka;
- ``hold_idle``: many connections that each made one request and then sit idle;
- ``request_rtts``: round trips of one raw request at a time (Metadata, Produce).
"""

from __future__ import annotations

import os
import socket
import struct
import time

_SIZE = struct.Struct(">i")
TS = struct.Struct(">q")


def produce_request(topic: str, size: int, *, acks: int = 1, cid: int = 1) -> bytes:
    """One Produce v9 frame carrying one record of ``size`` bytes (not idempotent)."""
    from kipper.protocol import records
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages.produce import PRODUCE

    batch = records.build_batch([(None, os.urandom(size))])
    return encode_request(PRODUCE, 9, cid, "bench", {
        "transactional_id": None, "acks": acks, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}]})


def metadata_request(topic: str, version: int = 9) -> bytes:
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages.metadata import METADATA

    return encode_request(METADATA, version, 1, "bench", {
        "topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})


def api_versions_request() -> bytes:
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages.api_versions import API_VERSIONS

    return encode_request(API_VERSIONS, 0, 1, "bench", {})


def _connect(bootstrap: str) -> socket.socket:
    host, port = bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class _Frames:
    """Counts whole response frames in what a socket returns."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()

    def read(self) -> int:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the broker closed the connection")
        buf = self.buf
        buf += data
        pos, n = 0, 0
        while len(buf) - pos >= 4:
            size = _SIZE.unpack_from(buf, pos)[0]
            if len(buf) - pos - 4 < size:
                break
            pos += 4 + size
            n += 1
        del buf[:pos]
        return n


def raw_produce(bootstrap: str, topic: str, requests: int, size: int, window: int) -> dict:
    """Keep ``window`` single-record Produce requests in flight until ``requests`` are answered."""
    frame = produce_request(topic, size)
    burst = frame * window
    view = memoryview(burst)
    sock = _connect(bootstrap)
    frames = _Frames(sock)
    sock.sendall(frame)  # the topic's partition is ready and the first request's costs are paid
    while frames.read() < 1:
        pass
    started = time.perf_counter()
    sent = min(window, requests)
    sock.sendall(view[:sent * len(frame)])
    answered = 0
    while answered < requests:
        got = frames.read()
        answered += got
        more = min(got, requests - sent)
        if more > 0:
            sock.sendall(view[:more * len(frame)])
            sent += more
    elapsed = time.perf_counter() - started
    sock.close()
    return {"requests": requests, "seconds": elapsed}


def request_rtts(bootstrap: str, frame: bytes, count: int) -> list[float]:
    """Milliseconds of ``count`` round trips of ``frame``, one at a time."""
    sock = _connect(bootstrap)
    frames = _Frames(sock)
    out = []
    for _ in range(count):
        t = time.perf_counter()
        sock.sendall(frame)
        while frames.read() < 1:
            pass
        out.append((time.perf_counter() - t) * 1000)
    sock.close()
    return out


def hold_idle(bootstrap: str, connections: int, seconds: float, ready_q) -> None:
    """Open ``connections``, each answered once (ApiVersions), then keep them idle."""
    frame = api_versions_request()
    socks = []
    for _ in range(connections):
        sock = _connect(bootstrap)
        sock.sendall(frame)
        frames = _Frames(sock)
        while frames.read() < 1:
            pass
        socks.append(sock)
    ready_q.put(len(socks))
    time.sleep(seconds)
    for sock in socks:
        sock.close()


def fill(bootstrap: str, topic: str, n: int, size: int) -> int:
    """``n`` records of ``size`` bytes, acks=1, librdkafka's batching; records undelivered."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5})
    return send_all(p, topic, os.urandom(size), n)


def send_all(p, topic: str, payload: bytes, n: int) -> int:
    """``n`` copies of ``payload`` through a confluent-kafka Producer, waiting out a full
    queue; returns the records still undelivered after the flush."""
    for _ in range(n):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.005)
        p.poll(0)
    return p.flush(300)


def consume(bootstrap: str, topic: str, n: int, start_evt) -> dict:
    """Read ``n`` records from the start of partition 0 (fetch.queue.backoff.ms=10)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{os.getpid()}",
                  "enable.auto.commit": False, "fetch.queue.backoff.ms": 10})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    start_evt.wait()
    started = time.perf_counter()
    got = 0
    deadline = started + 600
    while got < n and time.perf_counter() < deadline:
        batch = c.consume(10000, 1.0)
        got += sum(1 for m in batch if m.error() is None)
    elapsed = time.perf_counter() - started
    c.close()
    return {"records": got, "seconds": elapsed}


def paced_producer(bootstrap: str, topic: str, rate: int, seconds: float, size: int, go_evt) -> dict:
    """``rate`` records a second for ``seconds``, linger.ms=0; each value starts with the
    wall-clock nanoseconds of its ``produce()`` call."""
    from confluent_kafka import Producer

    pad = os.urandom(max(size - TS.size, 0))
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    p.produce(topic, TS.pack(0) + pad)
    p.flush(30)
    go_evt.wait()
    started = time.perf_counter()
    sent = 0
    total = int(rate * seconds)
    while sent < total:
        due = min(int((time.perf_counter() - started) * rate), total)
        while sent < due:
            try:
                p.produce(topic, TS.pack(time.time_ns()) + pad)
                sent += 1
            except BufferError:
                p.poll(0.001)
        p.poll(0)
        time.sleep(0.0002)
    left = p.flush(60)
    return {"sent": sent, "seconds": time.perf_counter() - started, "undelivered": left}


def latency_consumer(bootstrap: str, topic: str, expected: int, seconds: float, ready_q) -> dict:
    """Milliseconds from each record's ``produce()`` to its arrival here, summarised."""
    from confluent_kafka import OFFSET_END, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"lat-{os.getpid()}",
                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, 0, OFFSET_END)])
    c.consume(1, 2.0)  # connected and positioned at the end before the producer starts
    ready_q.put(True)
    latencies = []
    deadline = time.time() + seconds + 10
    while len(latencies) < expected and time.time() < deadline:
        m = c.poll(0.1)  # each record as soon as it is here (consume(n) would wait for n of them)
        if m is not None and m.error() is None:
            ts = TS.unpack_from(m.value())[0]
            if ts:
                latencies.append((time.time_ns() - ts) / 1e6)
    c.close()
    return summarise(latencies, expected)


def summarise(latencies: list[float], expected: int) -> dict:
    latencies.sort()
    n = len(latencies)

    def q(p: float) -> float | None:
        return round(latencies[min(int(p * n), n - 1)], 3) if n else None

    return {"received": n, "expected": expected, "received_pct": round(100 * n / expected, 1) if expected else 0,
            "p50_ms": q(0.5), "p99_ms": q(0.99), "p999_ms": q(0.999),
            "max_ms": round(latencies[-1], 3) if n else None}
