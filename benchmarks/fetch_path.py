"""What a Fetch answer's records cost the broker to send, by where they come from (issue 41).

    .venv/bin/python -m benchmarks.fetch_path [--records 1000000] [--rounds 5]

A partition of ``--records`` records of 100 bytes (batches of 1,000, as a linger-batching
producer stores them) is read to its end, 1 MiB per read as a consumer's Fetch asks, through
the broker's own read path (``Partition.read``, ``RegionWriter``) and written to
a real loopback socket that another process drains, in four ways:

- ``memory``: the in-memory log, its stored batches written as they are (``writelines``);
- ``disk-pread``: a durable log read with one ``pread`` per answer and written (the path
  before issue 41, and still the one under TLS);
- ``disk-sendfile``: the same log sent with ``sendfile`` from the page cache
  (``broker/region_writer.py``, going on as the socket drains);

and reports the writing process's CPU (user + system) per 1M records, the least of
``--rounds`` rounds with the ways alternating, and how much of the disk's bytes sendfile
sent. The file is in the page cache (read once before), as a consumer that keeps up finds it.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import socket
import tempfile
import time

from benchmarks.warm import in_process

WAYS = ("memory", "disk-pread", "disk-sendfile")
MAX_BYTES = 1 << 20


def _consumer(port: int) -> None:
    """Reads each size-prefixed answer whole, then asks for the next (one byte), as a
    consumer sends its next Fetch once the last answer is in."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    while True:
        have = 0
        while have < 4:
            n = sock.recv_into(view[have:])
            if not n:
                return
            have += n
        size = 4 + int.from_bytes(buf[:4], "big")
        while have < size:
            have += sock.recv_into(view[have:size])
        sock.sendall(b"k")


def _fill(overrides: dict, records: int):
    from kipper.protocol import records as rec
    from tests.support.inproc import InProcessBroker

    b = InProcessBroker(**overrides)
    b.state.topics.create("t", 1)
    plog = b.state.topics.partition("t", 0)
    value = os.urandom(100)
    batch = rec.build_batch([(None, value)] * 1000)
    for _ in range(records // 1000):
        plog.append_batch(batch, b.now)
    return b, plog


async def _send_all(plog, regions: bool, send_buffer: int) -> tuple[int, int, float]:
    """Every record of ``plog`` through a real socket; (records, sendfile bytes, CPU-s)."""
    from kipper.broker.region_writer import RegionWriter

    loop = asyncio.get_running_loop()
    accepted = loop.create_future()
    asks: asyncio.Queue = asyncio.Queue()

    class Broker(asyncio.Protocol):
        def connection_made(self, transport):
            accepted.set_result(transport)

        def data_received(self, data):
            for _ in data:
                asks.put_nowait(True)

    server = await loop.create_server(Broker, "127.0.0.1", 0)
    consumer = mp.get_context("spawn").Process(target=_consumer, args=(server.sockets[0].getsockname()[1],))
    consumer.start()
    transport = await accepted
    sock = transport.get_extra_info("socket")
    if send_buffer >= 0:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sent = [0]
    writer = RegionWriter(transport, sock.fileno(), loop, count=lambda n: sent.__setitem__(0, sent[0] + n))
    count = 0
    offset, end = 0, plog.log_end_offset
    t0 = time.process_time()
    while offset < end:
        got = plog.read(offset, MAX_BYTES, one_segment=True, regions=regions)
        head = (66 + got.size).to_bytes(4, "big") + bytes(66)  # a Fetch answer's fields, about
        writer.write([head, *got.chunks])
        count += got.records
        offset = got.last_offset + 1
        await asks.get()
    cpu = time.process_time() - t0
    writer.close()
    transport.close()
    server.close()
    consumer.join(30)
    return count, sent[0], cpu


def one_way(way: str, records: int, send_buffer: int) -> dict:
    """In a fresh process: fill the log, warm the page cache and the path, then measure."""
    import uvloop

    with tempfile.TemporaryDirectory(prefix="fetch-path-") as data:
        _, plog = _fill({"log.level": "WARNING", **({} if way == "memory" else {"log.dirs": data})}, records)
        regions = way == "disk-sendfile"
        uvloop.run(_send_all(plog, regions, send_buffer))  # warm: the page cache, the code path
        count, sent, cpu = uvloop.run(_send_all(plog, regions, send_buffer))
    return {"cpu_s_per_million": cpu / (count / 1e6), "records": count, "sendfile_bytes": sent}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    ap.add_argument("--send-buffer", type=int, default=102400,
                    help="the socket's SO_SNDBUF (socket.send.buffer.bytes; -1: the OS's)")
    args = ap.parse_args()
    best: dict[str, dict] = {}
    for r in range(args.rounds):
        for way in (args.ways if r % 2 == 0 else list(reversed(args.ways))):
            got = in_process(one_way, way, args.records, args.send_buffer)
            print(f"  round {r} {way:<14} {got['cpu_s_per_million']:.4f} CPU-s per 1M records "
                  f"({got['sendfile_bytes']:,} bytes by sendfile)", flush=True)
            if way not in best or got["cpu_s_per_million"] < best[way]["cpu_s_per_million"]:
                best[way] = got
    print(f"| way | CPU-s per 1M records (least of {args.rounds}) | bytes by sendfile |")
    print("|---|---|---|")
    for way in args.ways:
        print(f"| {way} | {best[way]['cpu_s_per_million']:.4f} | {best[way]['sendfile_bytes']:,} |")


if __name__ == "__main__":
    main()
