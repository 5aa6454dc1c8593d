"""Capture request frames from real Kafka clients as golden test data.

Usage: .venv/bin/python scripts/capture_golden.py [--client NAME ...] [--out tests/golden]

Starts the kipper broker behind a small recording TCP proxy and advertises the
proxy's address (advertised.listeners), so every connection a client opens,
bootstrap or not, goes through it. Each of confluent-kafka, aiokafka and
kafka-python then creates a topic, produces once per compression codec it
supports, consumes in a group (join/sync/heartbeat/commit/offset fetch/leave)
and lists offsets. Frames are attributed to a client by the client id in
their header. Written, per client, replacing what was there:

  <out>/<client>/<ApiName>_v<version>.hex   one request frame (no size prefix)
  <out>/batches/<client>_<codec>.hex        the records field of one Produce

tests/golden/test_golden_frames.py and tests/unit/test_records.py read them;
they need neither network nor clients at run time.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kipper.protocol import batch as b  # noqa: E402
from kipper.protocol import compression  # noqa: E402
from kipper.protocol.framing import FrameDecoder  # noqa: E402
from kipper.protocol.header import REQUEST_HEADERS, peek_api  # noqa: E402
from kipper.protocol.messages import APIS  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

CLIENTS = ("confluent-kafka", "aiokafka", "kafka-python")
RECORDS_PER_CODEC = 3
PARTITIONS = 2
GOLDEN_CODEC = "gzip"  # every client can write it; the stored Produce frame uses it


def names(client: str) -> dict:
    """Deterministic names, shared with the tests' expectation table."""
    return {"client_id": f"golden-{client}", "topic": f"golden-{client}",
            "group": f"golden-group-{client}"}


def record_key(i: int) -> bytes:
    return f"key-{i}".encode()


def record_value(client: str, codec: str, i: int) -> bytes:
    # Repetitive on purpose: some clients skip compression when it does not pay.
    return f"{client}-{codec}-{i}:".encode() + b"golden " * 30


# --- the recording proxy ---------------------------------------------------------

class RecordingProxy:
    """Forwards 127.0.0.1:<port> to the broker, keeping every client->broker frame."""

    def __init__(self):
        self.upstream: tuple[str, int] | None = None
        self.frames: list[bytes] = []
        self.port = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="golden-proxy", daemon=True)

    def start(self) -> "RecordingProxy":
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("proxy did not start")
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def take(self) -> list[bytes]:
        with self._lock:
            out, self.frames = self.frames, []
        return out

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _handle(self, client_r, client_w) -> None:
        try:
            broker_r, broker_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_w.close()
            return
        decoder = FrameDecoder()

        async def upstream():
            while data := await client_r.read(65536):
                frames = decoder.feed(data)
                if frames:
                    with self._lock:
                        self.frames.extend(frames)
                broker_w.write(data)
                await broker_w.drain()

        async def downstream():
            while data := await broker_r.read(65536):
                client_w.write(data)
                await client_w.drain()

        tasks = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for w in (client_w, broker_w):
            w.close()


# --- the three clients --------------------------------------------------------------

def drive_confluent_kafka(bootstrap: str) -> list[str]:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    n = names("confluent-kafka")
    common = {"bootstrap.servers": bootstrap, "client.id": n["client_id"]}
    admin = AdminClient(common)
    admin.create_topics([NewTopic(n["topic"], num_partitions=PARTITIONS,
                                  replication_factor=1)])[n["topic"]].result(15)
    del admin
    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    for codec in codecs:
        producer = Producer({**common, "acks": "all", "compression.type": codec, "linger.ms": 50})
        for i in range(RECORDS_PER_CODEC):
            producer.produce(n["topic"], key=record_key(i),
                             value=record_value("confluent-kafka", codec, i), partition=0)
        if producer.flush(15) != 0:
            raise RuntimeError("confluent-kafka producer did not flush")
    consumer = Consumer({**common, "group.id": n["group"], "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 10000,
                         "heartbeat.interval.ms": 300})
    consumer.subscribe([n["topic"]])
    got = 0
    deadline = time.time() + 30
    while got < RECORDS_PER_CODEC * len(codecs) and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got += 1
    linger_until = time.time() + 1.5  # a few heartbeats
    while time.time() < linger_until:
        consumer.poll(0.2)
    consumer.commit(asynchronous=False)
    tps = [TopicPartition(n["topic"], p) for p in range(PARTITIONS)]
    consumer.committed(tps, timeout=10)
    consumer.get_watermark_offsets(tps[0], timeout=10, cached=False)
    consumer.offsets_for_times([TopicPartition(n["topic"], 0, 0)], timeout=10)
    consumer.close()
    _check_consumed("confluent-kafka", got, codecs)
    return codecs


def drive_aiokafka(bootstrap: str) -> list[str]:
    return asyncio.run(_drive_aiokafka(bootstrap))


async def _drive_aiokafka(bootstrap: str) -> list[str]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    n = names("aiokafka")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id=n["client_id"])
    await admin.start()
    try:
        await admin.create_topics([NewTopic(n["topic"], num_partitions=PARTITIONS, replication_factor=1)])
    finally:
        await admin.close()
    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    for codec in codecs:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id=n["client_id"], acks="all",
                                    compression_type=None if codec == "none" else codec, linger_ms=50)
        await producer.start()
        try:
            futures = [await producer.send(n["topic"], key=record_key(i),
                                           value=record_value("aiokafka", codec, i), partition=0)
                       for i in range(RECORDS_PER_CODEC)]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
    consumer = AIOKafkaConsumer(n["topic"], bootstrap_servers=bootstrap, client_id=n["client_id"],
                                group_id=n["group"], auto_offset_reset="earliest",
                                enable_auto_commit=False, session_timeout_ms=10000,
                                heartbeat_interval_ms=300)
    await consumer.start()
    try:
        got = 0
        deadline = time.time() + 30
        while got < RECORDS_PER_CODEC * len(codecs) and time.time() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            got += sum(len(v) for v in batches.values())
        await asyncio.sleep(1.5)  # a few heartbeats
        await consumer.commit()
        tp = TopicPartition(n["topic"], 0)
        await consumer.committed(tp)
        await consumer.end_offsets([tp])
        await consumer.offsets_for_times({tp: 0})
    finally:
        await consumer.stop()
    _check_consumed("aiokafka", got, codecs)
    return codecs


def drive_kafka_python(bootstrap: str) -> list[str]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka import codec as kcodec
    from kafka.admin import KafkaAdminClient, NewTopic

    n = names("kafka-python")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=n["client_id"])
    admin.create_topics([NewTopic(n["topic"], num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()
    available = {"gzip": kcodec.has_gzip(), "snappy": kcodec.has_snappy(),
                 "lz4": kcodec.has_lz4(), "zstd": kcodec.has_zstd()}
    codecs = ["none"] + [c for c in ("gzip", "snappy", "lz4", "zstd") if available[c]]
    for codec in codecs:
        producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=n["client_id"], acks="all",
                                 compression_type=None if codec == "none" else codec, linger_ms=50)
        futures = [producer.send(n["topic"], key=record_key(i),
                                 value=record_value("kafka-python", codec, i), partition=0)
                   for i in range(RECORDS_PER_CODEC)]
        producer.flush(15)
        for f in futures:
            f.get(15)
        producer.close()
    consumer = KafkaConsumer(n["topic"], bootstrap_servers=bootstrap, client_id=n["client_id"],
                             group_id=n["group"], auto_offset_reset="earliest",
                             enable_auto_commit=False, session_timeout_ms=10000,
                             heartbeat_interval_ms=300)
    got = 0
    deadline = time.time() + 30
    while got < RECORDS_PER_CODEC * len(codecs) and time.time() < deadline:
        got += sum(len(v) for v in consumer.poll(timeout_ms=500).values())
    linger_until = time.time() + 1.5  # a few heartbeats
    while time.time() < linger_until:
        consumer.poll(timeout_ms=200)
    consumer.commit()
    tp = TopicPartition(n["topic"], 0)
    consumer.committed(tp)
    consumer.end_offsets([tp])
    consumer.offsets_for_times({tp: 0})
    consumer.close()
    _check_consumed("kafka-python", got, codecs)
    return codecs


def _check_consumed(client: str, got: int, codecs: list[str]) -> None:
    want = RECORDS_PER_CODEC * len(codecs)
    if got != want:
        raise RuntimeError(f"{client} consumed {got} records, expected {want}")


DRIVERS = {"confluent-kafka": drive_confluent_kafka, "aiokafka": drive_aiokafka,
           "kafka-python": drive_kafka_python}


# --- choosing and writing frames -------------------------------------------------------

def decode(frame: bytes):
    """(api, version, header, body) of a request frame, or None for APIs kipper lacks."""
    key, version = peek_api(frame)
    api = APIS.get(key)
    if api is None or version not in api.valid_range:
        return None
    stream = io.BytesIO(frame)
    header = REQUEST_HEADERS[api.request_header_version(version)].parse_stream(stream)
    body = api.request_schema(version).parse_stream(stream)
    return api, version, header, body


def produce_batches(body):
    for topic in body.topic_data:
        for part in topic.partition_data:
            if part.records:
                yield topic.name, part.index, bytes(part.records)


def choose(client: str, frames: list[bytes]) -> tuple[dict, dict]:
    """One frame per (api, version), and one records field per codec."""
    client_id = names(client)["client_id"]
    chosen: dict[tuple[str, int], bytes] = {}
    batches: dict[str, bytes] = {}
    for frame in frames:
        decoded = decode(frame)
        if decoded is None:
            continue
        api, version, header, body = decoded
        if header.get("client_id") != client_id:
            continue
        slot = (api.name, version)
        if api.name == "Produce":
            for _topic, _partition, data in produce_batches(body):
                codec = compression.NAMES[b.read_header(data).compression]
                batches.setdefault(codec, data)
                if codec == GOLDEN_CODEC and slot not in chosen:
                    chosen[slot] = frame
        elif len(frame) > len(chosen.get(slot, b"")):
            chosen[slot] = frame  # the largest carries the most to check
    for frame in frames:  # a Produce version that never carried gzip keeps its first frame
        decoded = decode(frame)
        if decoded and decoded[0].name == "Produce" and decoded[2].get("client_id") == client_id:
            chosen.setdefault((decoded[0].name, decoded[1]), frame)
    return chosen, batches


def write(out: Path, client: str, chosen: dict, batches: dict) -> None:
    folder = out / client
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.hex"):
        old.unlink()
    for (name, version), frame in sorted(chosen.items()):
        (folder / f"{name}_v{version}.hex").write_text(frame.hex() + "\n")
    batch_dir = out / "batches"
    batch_dir.mkdir(exist_ok=True)
    for old in batch_dir.glob(f"{client}_*.hex"):
        old.unlink()
    for codec, data in sorted(batches.items()):
        (batch_dir / f"{client}_{codec}.hex").write_text(data.hex() + "\n")
    print(f"{client}: {len(chosen)} frames ({', '.join(f'{n}_v{v}' for n, v in sorted(chosen))}); "
          f"batches: {', '.join(sorted(batches))}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", action="append", choices=CLIENTS,
                        help="capture only this client (repeatable); default: all")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden")
    args = parser.parse_args(argv)

    proxy = RecordingProxy().start()
    broker = BrokerProcess(advertise=("127.0.0.1", proxy.port))
    proxy.upstream = ("127.0.0.1", broker.port)
    broker.start()
    try:
        for client in args.client or CLIENTS:
            proxy.take()
            codecs = DRIVERS[client](f"127.0.0.1:{proxy.port}")
            time.sleep(0.5)  # let the last frames of closing connections arrive
            chosen, batches = choose(client, proxy.take())
            missing = set(codecs) - set(batches)
            if missing:
                raise RuntimeError(f"{client}: no captured Produce carried {sorted(missing)}")
            write(args.out, client, chosen, batches)
    finally:
        broker.stop()
        proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
