"""KafkaConnection, the broker's per-connection asyncio.Protocol, without sockets.

A recording transport stands in for the socket (as uvicorn's protocol tests do)
and a scripted dispatcher decides what each request gets: a ready frame, an
answer that comes later, a Reply asking for a mute or a close, or a refusal.
What is checked is the shell's own job: responses in request order, one write
per burst, pausing and resuming reading, muting after a throttle, closing.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from kipper.broker.connection import MAX_PENDING, RESUME_PENDING, KafkaConnection
from kipper.broker.context import Session
from kipper.broker.dispatcher import Close, CloseConnection, Later
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.broker.metrics import Metrics


class Transport(asyncio.Transport):
    def __init__(self):
        super().__init__()
        self.writes: list[bytes] = []
        self.reading = True
        self.closed = False

    def get_extra_info(self, name, default=None):
        return ("10.0.0.1", 4242) if name == "peername" else default

    def write(self, data) -> None:
        self.writes.append(bytes(data))

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def answers(self) -> list[int]:
        """The request numbers answered, in the order they were written."""
        data = b"".join(self.writes)
        out = []
        while data:
            size = struct.unpack_from(">i", data)[0]
            out.append(struct.unpack_from(">i", data, 4)[0])
            data = data[4 + size:]
        return out


def frame(n: int) -> bytes:
    """A request frame whose body is just its number."""
    return struct.pack(">ii", 4, n)


def answer(n: int) -> bytes:
    return struct.pack(">ii", 4, n)


class Dispatcher:
    """What request n gets is scripted in ``plan[n]``; the default is an answer at once."""

    def __init__(self):
        self.metrics = Metrics()
        self.plan: dict = {}
        self.seen: list[int] = []
        self.closed_sessions: list = []

    def connection_closed(self, session):
        self.closed_sessions.append(session)

    def dispatch(self, frames: list, i: int, session):
        n = struct.unpack_from(">i", frames[i])[0]
        self.seen.append(n)
        what = self.plan.get(n)
        if what is None:
            return [answer(n)], 1
        if isinstance(what, CloseConnection):  # what the real dispatcher answers to a refusal
            return [Close("request_rejected", str(what))], 1
        if isinstance(what, asyncio.Future):
            return [Later(what, lambda task: answer(task.result()))], 1
        if isinstance(what, tuple) and what[0] == "hold":  # what the dispatcher makes of a Holding
            return [Later(what[1], lambda task: answer(task.result()), hold=True)], 1
        return [what], 1


@pytest.fixture
def conn():
    dispatcher = Dispatcher()
    registry: set = set()
    c = KafkaConnection(dispatcher, lambda transport, peer: Session("PLAINTEXT", peer), registry,
                        max_frame=1 << 20)
    transport = Transport()
    c.connection_made(transport)
    c.test_transport, c.test_dispatcher, c.test_registry = transport, dispatcher, registry
    return c


async def test_pipelined_requests_are_answered_in_one_write_in_order(conn):
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_transport.answers() == [1, 2, 3]
    assert len(conn.test_transport.writes) == 1


async def test_a_late_answer_holds_back_the_later_ones_until_it_is_ready(conn):
    late = asyncio.get_running_loop().create_future()
    conn.test_dispatcher.plan[2] = late
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_transport.answers() == [1]
    late.set_result(2)
    await asyncio.sleep(0)  # the task completes
    await asyncio.sleep(0)  # the scheduled flush runs
    assert conn.test_transport.answers() == [1, 2, 3]


async def test_a_frame_split_across_reads_is_dispatched_once_whole(conn):
    data = frame(7)
    conn.data_received(data[:3])
    assert conn.test_dispatcher.seen == []
    conn.data_received(data[3:])
    assert conn.test_dispatcher.seen == [7] and conn.test_transport.answers() == [7]


async def test_acks_0_gets_no_answer_and_keeps_the_order_of_the_rest(conn):
    conn.test_dispatcher.plan[2] = NO_RESPONSE
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_transport.answers() == [1, 3]


async def test_reading_pauses_when_too_many_answers_wait_and_resumes_when_they_drain(conn):
    loop = asyncio.get_running_loop()
    futures = {n: loop.create_future() for n in range(MAX_PENDING)}
    conn.test_dispatcher.plan.update(futures)
    conn.data_received(b"".join(frame(n) for n in range(MAX_PENDING)))
    assert not conn.test_transport.reading
    for n in range(MAX_PENDING - RESUME_PENDING):
        futures[n].set_result(n)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert conn.test_transport.reading
    assert conn.test_transport.answers() == list(range(MAX_PENDING - RESUME_PENDING))


async def test_reading_pauses_while_the_transport_buffer_is_full(conn):
    conn.pause_writing()
    assert not conn.test_transport.reading
    conn.resume_writing()
    assert conn.test_transport.reading


async def test_a_throttle_mutes_the_connection_after_the_answer_and_holds_later_frames(conn):
    throttled = answer(1)
    conn.test_dispatcher.plan[1] = Reply(throttled, mute_ms=30)
    conn.data_received(frame(1) + frame(2))
    assert conn.test_transport.answers() == [1]  # the throttled answer goes out first
    assert conn.test_dispatcher.seen == [1], "frame 2 waits for the mute to end"
    assert not conn.test_transport.reading
    conn.data_received(frame(3))  # already in flight when reading paused
    assert conn.test_dispatcher.seen == [1]
    await asyncio.sleep(0.06)
    assert conn.test_dispatcher.seen == [1, 2, 3]
    assert conn.test_transport.answers() == [1, 2, 3] and conn.test_transport.reading


async def test_a_holding_answer_handles_nothing_more_until_it_has_come(conn):
    """A Produce waiting for another broker's transaction coordinator (broker/handlers/replies.py
    Holding): the requests after it are not even dispatched until its answer is in, as Kafka's
    muted channel holds them."""
    pending = asyncio.get_running_loop().create_future()
    conn.test_dispatcher.plan[2] = ("hold", pending)
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_dispatcher.seen == [1, 2], "frame 3 waits for frame 2's answer"
    assert not conn.test_transport.reading
    conn.data_received(frame(4))  # already in flight when reading paused
    assert conn.test_dispatcher.seen == [1, 2] and conn.test_transport.answers() == [1]
    pending.set_result(2)
    for _ in range(3):
        await asyncio.sleep(0)
    assert conn.test_dispatcher.seen == [1, 2, 3, 4]
    assert conn.test_transport.answers() == [1, 2, 3, 4] and conn.test_transport.reading


async def test_a_throttled_acks_0_request_still_mutes(conn):
    conn.test_dispatcher.plan[1] = Reply(NO_RESPONSE, mute_ms=30)
    conn.data_received(frame(1))
    assert conn.test_transport.answers() == [] and not conn.test_transport.reading
    await asyncio.sleep(0.06)
    assert conn.test_transport.reading


async def test_a_failed_login_is_answered_then_closed_after_a_delay(conn):
    conn.test_dispatcher.plan[1] = Reply(answer(1), close=True)
    conn.data_received(frame(1) + frame(2))
    assert conn.test_transport.answers() == [1]
    assert not conn.test_transport.closed and not conn.test_transport.reading
    await asyncio.sleep(0.15)
    assert conn.test_transport.closed
    assert conn.test_dispatcher.seen == [1], "nothing after the failed login is handled"


async def test_a_refused_request_closes_the_connection_after_the_earlier_answers(conn):
    conn.test_dispatcher.plan[2] = CloseConnection("unknown API key 999")
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_transport.answers() == [1]
    assert conn.test_transport.closed and conn.test_dispatcher.seen == [1, 2]
    assert conn.test_dispatcher.metrics.take_interval()["rejected"] == {"request_rejected": 1}


async def test_a_reply_that_aborts_closes_at_once_after_the_earlier_answers(conn):
    """A refused Produce with acks=0 has no answer to send: Kafka closes the connection so
    that the client learns of it, without reading what follows."""
    conn.test_dispatcher.plan[2] = Reply(NO_RESPONSE, abort="t-0 UNKNOWN_TOPIC_OR_PARTITION")
    conn.data_received(frame(1) + frame(2) + frame(3))
    assert conn.test_transport.answers() == [1]
    assert conn.test_transport.closed and conn.test_dispatcher.seen == [1, 2]
    assert conn.test_dispatcher.metrics.take_interval()["rejected"] == {"closed_after_refusal": 1}


async def test_an_oversized_frame_closes_the_connection_before_it_is_read(conn):
    conn.data_received(struct.pack(">i", 2 << 20) + b"x")
    assert conn.test_transport.closed and conn.test_dispatcher.seen == []


async def test_close_cancels_waiting_answers_and_leaves_the_registry(conn):
    pending = asyncio.get_running_loop().create_future()
    conn.test_dispatcher.plan[1] = pending
    conn.data_received(frame(1))
    assert conn in conn.test_registry and len(conn.tasks) == 1
    conn.close()
    assert conn.test_transport.closed
    conn.connection_lost(None)
    await asyncio.sleep(0)
    assert conn not in conn.test_registry
    assert pending.cancelled() and conn.test_transport.answers() == []
