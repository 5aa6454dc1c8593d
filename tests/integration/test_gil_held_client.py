"""A client that holds the GIL while it waits on the broker (confluent-kafka's close during a
rebalance did, and froze the suite: issue 37) cannot freeze a test broker any more: the
default broker runs in a process of its own. The thread mode keeps the hazard, which these
tests show with libc's send and recv called through ctypes.PyDLL, which keep the GIL."""

from __future__ import annotations

import socket
import time

from kipper.protocol.header import encode_request
from kipper.protocol.messages.api_versions import API_VERSIONS
from kipper.testing import EmbeddedBroker
from tests.support.gil import exchange_holding_the_gil

REQUEST = encode_request(API_VERSIONS, 3, 7, "gil-held", {"client_software_name": "gil",
                                                           "client_software_version": "1"})


def _exchange(broker: EmbeddedBroker, timeout_s: float) -> bytes | None:
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        return exchange_holding_the_gil(sock, REQUEST, timeout_s)


def test_a_process_broker_answers_a_client_that_holds_the_gil_while_it_waits():
    with EmbeddedBroker() as broker:
        started = time.monotonic()
        answer = _exchange(broker, timeout_s=20)
        assert answer is not None, "the broker did not answer while the client held the GIL"
        assert int.from_bytes(answer[4:8], "big") == 7  # the ApiVersions answer, correlation id 7
        assert time.monotonic() - started < 20


def test_a_thread_broker_cannot_answer_while_its_client_holds_the_gil():
    """The documented caveat of mode="thread", bounded here by the socket's receive timeout."""
    with EmbeddedBroker(mode="thread") as broker:
        assert _exchange(broker, timeout_s=2) is None
        # once the GIL is free again the broker catches up: it was frozen, not broken
        with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
            sock.sendall(REQUEST)
            assert int.from_bytes(sock.recv(8)[4:8], "big") == 7
