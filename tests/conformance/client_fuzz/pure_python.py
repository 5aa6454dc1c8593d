"""kafka-python's and aiokafka's producers and consumers, as the client generator's steps name
them (the arguments confluent.py's ``produce`` and ``consume`` take, in these clients' own
spellings): what each delivery returned, and the records read."""

from __future__ import annotations

import asyncio

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.conformance.client_fuzz.plain import failure, plain

TIMEOUT_MS = 10000
ACKS = {"all": "all", "1": 1, "0": 0}


def _producer_settings(args: dict) -> dict:
    config = args.get("config", {})
    out = {}
    if "acks" in config:
        out["acks"] = ACKS[config["acks"]]
    if "compression.type" in config:
        out["compression_type"] = config["compression.type"]
    if "enable.idempotence" in config:
        out["enable_idempotence"] = config["enable.idempotence"]
    return out


def _record(r: dict) -> dict:
    return {"key": r["key"].encode(), "value": None if r.get("value") is None else r["value"].encode(),
            "partition": r.get("partition"), "timestamp_ms": r.get("timestamp"),
            "headers": [(k, None if v is None else v.encode()) for k, v in r.get("headers") or []]}


def kafka_python_produce(settings: dict, args: dict):
    """Each record sent and flushed: its partition and offset, or what its future raised, in order."""
    try:
        producer = KafkaProducer(**settings, **_producer_settings(args), max_block_ms=TIMEOUT_MS,
                                 request_timeout_ms=TIMEOUT_MS)
    except Exception as exc:  # noqa: BLE001 - what the client raised is its outcome
        return {"raised": failure(exc)}
    reports = []
    try:
        futures = []
        for r in args["records"]:
            try:
                futures.append(producer.send(r["topic"], **_record(r)))
            except Exception as exc:  # noqa: BLE001
                futures.append(exc)
        producer.flush(TIMEOUT_MS / 1000)
        for i, future in enumerate(futures):
            if isinstance(future, Exception):
                reports.append([i, failure(future)])
                continue
            try:
                meta = future.get(timeout=TIMEOUT_MS / 1000)
                reports.append([i, [meta.partition, meta.offset]])
            except Exception as exc:  # noqa: BLE001
                reports.append([i, failure(exc)])
    finally:
        producer.close(timeout=5)
    return {"reports": reports}


def aiokafka_produce(settings: dict, args: dict):
    return asyncio.run(asyncio.wait_for(_aio_produce(settings, args), TIMEOUT_MS / 1000 * 3))


async def _aio_produce(settings: dict, args: dict):
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(**settings, **_producer_settings(args), request_timeout_ms=TIMEOUT_MS)
    reports = []
    try:
        await producer.start()
        for i, r in enumerate(args["records"]):
            try:
                meta = await producer.send_and_wait(r["topic"], **_record(r))
                reports.append([i, [meta.partition, meta.offset]])
            except Exception as exc:  # noqa: BLE001 - what the call raised is its outcome
                reports.append([i, failure(exc)])
    except Exception as exc:  # noqa: BLE001
        return {"reports": reports, "raised": failure(exc)}
    finally:
        await producer.stop()
    return {"reports": reports}


def _row(msg) -> list:
    return [msg.topic, msg.partition, msg.offset, plain(msg.key), plain(msg.value), plain(list(msg.headers or [])),
            msg.timestamp_type]


def kafka_python_consume(settings: dict, args: dict):
    """Records read from the partitions assigned, from their offsets, up to ``count`` or an idle
    second and a half."""
    iso = args.get("config", {}).get("isolation.level", "read_uncommitted")
    try:
        consumer = KafkaConsumer(**settings, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
                                 isolation_level=iso, consumer_timeout_ms=1500, request_timeout_ms=TIMEOUT_MS + 1000)
    except Exception as exc:  # noqa: BLE001
        return {"raised": failure(exc)}
    records, out = [], {}
    try:
        parts = [TopicPartition(t, p) for t, p, _ in args["partitions"]]
        consumer.assign(parts)
        for (t, p, offset), tp in zip(args["partitions"], parts):
            _seek(consumer, tp, offset)
        for msg in consumer:
            records.append(_row(msg))
            if len(records) >= args["count"]:
                break
        out.update(_lookups(consumer, args, TopicPartition))
    except Exception as exc:  # noqa: BLE001
        out["raised"] = failure(exc)
    finally:
        consumer.close()
    out["records"] = sorted(records, key=lambda r: r[:3])
    return out


def _lookups(consumer, args: dict, partition) -> dict:
    """What the consumer is asked after reading, as confluent.py's ``consume`` asks it: the
    first and next offsets of ``watermarks``' partitions, and the offsets of ``times``."""
    out = {}
    if args.get("watermarks"):
        parts = [partition(t, p) for t, p, _ in args["watermarks"]]
        out["watermarks"] = [[consumer.beginning_offsets(parts)[tp], consumer.end_offsets(parts)[tp]] for tp in parts]
    if args.get("times"):
        out["times"] = plain(consumer.offsets_for_times({partition(t, p): ts for t, p, ts in args["times"]}))
    return out


def _seek(consumer, tp, offset) -> None:
    if offset == -2:
        consumer.seek_to_beginning(tp)
    elif offset == -1:
        consumer.seek_to_end(tp)
    elif offset is not None:
        consumer.seek(tp, offset)


async def _aio_lookups(consumer, args: dict, partition) -> dict:
    """``_lookups``, of aiokafka's consumer, whose calls are coroutines."""
    out = {}
    if args.get("watermarks"):
        parts = [partition(t, p) for t, p, _ in args["watermarks"]]
        first, end = await consumer.beginning_offsets(parts), await consumer.end_offsets(parts)
        out["watermarks"] = [[first[tp], end[tp]] for tp in parts]
    if args.get("times"):
        out["times"] = plain(await consumer.offsets_for_times({partition(t, p): ts for t, p, ts in args["times"]}))
    return out


def aiokafka_consume(settings: dict, args: dict):
    return asyncio.run(asyncio.wait_for(_aio_consume(settings, args), TIMEOUT_MS / 1000 * 3))


async def _aio_consume(settings: dict, args: dict):
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition as AioPartition

    iso = args.get("config", {}).get("isolation.level", "read_uncommitted")
    consumer = AIOKafkaConsumer(**settings, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
                                isolation_level=iso, request_timeout_ms=TIMEOUT_MS)
    records, out = [], {}
    try:
        await consumer.start()
        parts = [AioPartition(t, p) for t, p, _ in args["partitions"]]
        consumer.assign(parts)
        for (t, p, offset), tp in zip(args["partitions"], parts):
            if offset == -2:
                await consumer.seek_to_beginning(tp)
            elif offset == -1:
                await consumer.seek_to_end(tp)
            elif offset is not None:
                consumer.seek(tp, offset)
        while len(records) < args["count"]:
            batch = await consumer.getmany(timeout_ms=1500)
            if not batch:
                break
            records += [_row(m) for ms in batch.values() for m in ms]
        out.update(await _aio_lookups(consumer, args, AioPartition))
    except Exception as exc:  # noqa: BLE001
        out["raised"] = failure(exc)
    finally:
        try:
            await consumer.stop()
        except asyncio.CancelledError:  # (aiokafka 0.14 cancels its own committed-offsets task on a stop)
            pass
    out["records"] = sorted(records, key=lambda r: r[:3])[:max(args["count"], 0)] if records else []
    return out
