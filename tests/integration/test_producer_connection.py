"""The producer's non-blocking Connection writes frames given as buffers
(scatter-gather) in order and whole, across partial writes."""

from __future__ import annotations

import socket

from kipper.client.connection import READY, Connection
from kipper.protocol.header import encode_request
from kipper.protocol.messages.produce import PRODUCE
from kipper.protocol import records, records_builder


def test_produce_frames_written_as_buffers_arrive_whole_and_in_order_across_partial_sends():
    listener = socket.create_server(("127.0.0.1", 0))
    conn = Connection(1, "127.0.0.1", listener.getsockname()[1], "c", 0.0)
    peer, _ = listener.accept()
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    conn.on_writable()  # connected; the ApiVersions request goes out
    conn.state = READY
    header, recs = records.assemble_parts(records_builder.encode_plain_records([bytes([i % 256]) * 100 for i in range(3000)],
                                                                       [0] * 3000), 3000, 1, 1)
    expected = []
    for i in range(3):
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                "topic_data": [{"name": "t", "partition_data": [{"index": i, "records": [header, recs]}]}]}
        cid = conn.send(PRODUCE, 9, body, None, 0.0)
        expected.append(encode_request(PRODUCE, 9, cid, "c", body))
    got = bytearray()
    writes = 0
    peer.setblocking(False)
    while conn.wants_write:
        conn.on_writable()
        writes += 1
        try:
            while True:
                got += peer.recv(1 << 16)
        except BlockingIOError:
            pass
    assert writes > 3, "the frames took several partial writes"
    peer.setblocking(True)
    total = sum(len(f) for f in expected)
    first_frame = int.from_bytes(got[:4], "big") + 4  # ApiVersions
    while len(got) < first_frame + total:
        got += peer.recv(1 << 16)
    assert bytes(got[first_frame:]) == b"".join(expected)
    conn.close()
    peer.close()
    listener.close()
