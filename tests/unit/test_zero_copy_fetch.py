"""Fetch answers from durable segments go out with sendfile (issue 41): the durable log
hands Fetch file ranges (``FileRegion``) instead of bytes on a plain TCP connection, and the
connection sends them from the page cache in order with the answer's other buffers, or
reads them with one pread where sendfile cannot run. Real files, real sockets, real loops."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest
import uvloop

from kipper.broker.connection import KafkaConnection
from kipper.broker.context import Session
from kipper.broker.metrics import Metrics
from kipper.broker.region_writer import RegionWriter
from kipper.broker.storage.file_region import FileRegion
from kipper.protocol import records
from tests.support.inproc import InProcessBroker


def _durable(tmp_path, batches: list[list[bytes]]):
    b = InProcessBroker(**{"log.dirs": str(tmp_path)})
    b.state.topics.create("t", 1)
    plog = b.state.topics.partition("t", 0)
    for values in batches:
        plog.append_batch(records.build_batch([(None, v) for v in values]), b.now)
    return b, plog


def test_a_durable_read_for_sendfile_gives_file_ranges_holding_the_same_bytes(tmp_path):
    _, plog = _durable(tmp_path, [[b"a" * 100] * 50, [b"b" * 70_000], [b"c" * 10] * 3])
    plain = plog.read(0, 1 << 20, one_segment=True)
    ranged = plog.read(0, 1 << 20, one_segment=True, regions=True)
    assert all(type(c) is FileRegion for c in ranged.chunks)
    assert (ranged.size, ranged.records, ranged.last_offset) == (plain.size, plain.records, plain.last_offset)
    assert b"".join(c.read() for c in ranged.chunks) == b"".join(bytes(c) for c in plain.chunks)
    assert sum(map(len, ranged.chunks)) == plain.size


def test_a_memory_log_answers_with_its_stored_batches_either_way():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    plog = b.state.topics.partition("t", 0)
    plog.append_batch(records.build_batch([(None, b"v")]), b.now)
    assert [bytes(c) for c in plog.read(0, 1 << 20, regions=True).chunks] == \
        [bytes(c) for c in plog.read(0, 1 << 20).chunks]


def test_a_region_still_gives_what_was_read_after_its_file_is_gone(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"x" * 1000 + b"wanted" + b"y" * 1000)
    fd = os.open(path, os.O_RDONLY)
    region = FileRegion(fd, 1000, 6)
    os.close(fd)  # retention deleted the segment, or the cleaner swapped in its copy
    path.unlink()
    assert region.read() == b"wanted"
    region.close()


def test_the_walk_finds_every_batch_when_large_and_small_ones_alternate(tmp_path):
    sizes = [[b"s"] * 3, [b"L" * 40_000], [b"s"] * 2, [b"L" * 20_000] * 2, [b"s"], [b"L" * 100_000]]
    _, plog = _durable(tmp_path, sizes)
    [segment] = plog.log.segments
    bases = [h.base_offset for _, h in segment.walk(0)]
    expected, offset = [], 0
    for values in sizes:
        expected.append(offset)
        offset += len(values)
    assert bases == expected


async def _sendfile_round(pieces: list, wait_for: int, send_buffer: int) -> tuple[bytes, list, list]:
    """Write ``pieces`` (bytes and regions, then ``b"after"``) through a real transport with
    a RegionWriter; what the peer got, the counts of bytes sent, and the busy signals."""
    got, done = bytearray(), asyncio.Event()

    class Peer(asyncio.Protocol):
        def data_received(self, chunk):
            got.extend(chunk)
            if len(got) >= wait_for:
                done.set()

    loop = asyncio.get_running_loop()
    server = await loop.create_server(Peer, "127.0.0.1", 0)
    transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1",
                                                server.sockets[0].getsockname()[1])
    sock = transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    counts, signals = [], []
    writer = RegionWriter(transport, sock.fileno(), loop, signals.append, counts.append)
    try:
        writer.write(pieces)
        writer.write([b"after"])  # behind the regions, however long they take
        await asyncio.wait_for(done.wait(), 10)
    finally:
        writer.close()
        transport.close()
        server.close()
    return bytes(got), counts, signals


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("send_buffer", [4 << 20, 16384])
def test_regions_go_out_with_sendfile_in_order_with_the_other_buffers(tmp_path, loop, send_buffer):
    data = os.urandom(1 << 20)
    path = tmp_path / "segment.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    pieces = [b"head", FileRegion(fd, 10, 500_000), b"middle", FileRegion(fd, 600_000, 400_000), b"tail"]
    expected = b"head" + data[10:500_010] + b"middle" + data[600_000:1_000_000] + b"tail" + b"after"
    run = asyncio.run if loop == "asyncio" else uvloop.run
    got, counts, signals = run(_sendfile_round(pieces, len(expected), send_buffer))
    os.close(fd)
    assert got == expected
    assert sum(counts) == 900_000  # all of it from the page cache, none read into the broker
    if send_buffer < 100_000:  # the socket took the regions in pieces: reading paused meanwhile
        assert signals == [True, False]


class _BusyTransport(asyncio.Transport):
    """A transport that still holds bytes for the socket: a region may not jump ahead."""

    def __init__(self, pending: int = 1):
        super().__init__()
        self.pending = pending
        self.written: list[bytes] = []

    def get_write_buffer_size(self) -> int:
        return self.pending

    def write(self, data) -> None:
        self.written.append(bytes(data))

    def writelines(self, buffers) -> None:
        self.written.extend(bytes(b) for b in buffers)


def test_a_region_behind_unsent_bytes_is_read_and_queued_in_order(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    transport, counts = _BusyTransport(), []
    a, b = socket.socketpair()
    try:
        RegionWriter(transport, a.fileno(), None, count=counts.append).write([b"<", FileRegion(fd, 2, 5), b">"])
    finally:
        a.close()
        b.close()
        os.close(fd)
    assert counts == []
    assert b"".join(transport.written) == b"<23456>"


def test_without_a_socket_to_send_from_regions_are_read(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    transport = _BusyTransport(pending=0)
    RegionWriter(transport, None, None).write([FileRegion(fd, 0, 3), b"!"])
    os.close(fd)
    assert b"".join(transport.written) == b"012!"


def test_a_closed_connection_closes_the_descriptors_of_the_regions_it_still_held(tmp_path):
    path = tmp_path / "segment.log"
    path.write_bytes(os.urandom(8 << 20))
    fd = os.open(path, os.O_RDONLY)

    async def fill_and_close():
        a, b = socket.socketpair()
        a.setblocking(False)
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_connection(asyncio.Protocol, sock=a)
        region = FileRegion(fd, 0, 8 << 20)
        writer = RegionWriter(transport, a.fileno(), loop)
        writer.write([region])  # nobody reads b: most of it waits
        assert writer.waiting and region.fd >= 0
        writer.close()
        transport.close()
        b.close()
        return region

    region = asyncio.run(fill_and_close())
    os.close(fd)
    assert region.fd == -1


class _SocketTransport(asyncio.Transport):
    def __init__(self, sock, ssl: bool):
        super().__init__()
        self.extra = {"socket": sock, "peername": ("10.0.0.1", 4242), "sslcontext": object() if ssl else None}

    def get_extra_info(self, name, default=None):
        return self.extra.get(name, default)


class _Dispatcher:
    metrics = Metrics()

    def connection_closed(self, session) -> None:
        pass


@pytest.mark.parametrize("protocol, ssl, zero_copy", [
    ("PLAINTEXT", False, True), ("SASL_PLAINTEXT", False, True), ("SSL", True, False),
    ("SASL_SSL", True, False)])
def test_only_a_connection_without_tls_sends_file_ranges(protocol, ssl, zero_copy):
    a, b = socket.socketpair()
    conn = KafkaConnection(_Dispatcher(), lambda transport, peer: Session("L", peer, security_protocol=protocol),
                           set(), max_frame=1 << 20)
    conn.connection_made(_SocketTransport(a, ssl))
    assert conn.session.zero_copy is zero_copy
    a.close()
    b.close()
