"""benchmarks.fetch_trace tallies librdkafka's own debug lines (issue 41): the lines below are
librdkafka 2.16's, as its logger hands them to Python."""

import logging

from benchmarks.fetch_trace import FetchLog

LINES = [
    "127.0.0.1:49731/1: Sent FetchRequest (v16, 98 bytes @ 0, CorrId 11)",
    "127.0.0.1:49731/1: Received FetchResponse (v16, 1048646 bytes, CorrId 11, rtt 1.13ms)",
    "127.0.0.1:49731/1: Received FetchResponse (v16, 1048646 bytes, CorrId 12, rtt 3.07ms)",
    "127.0.0.1:49731/1: c1 [0]: Fetch backoff for 1000ms: Local: Queue full",
    "127.0.0.1:49731/1: Topic c1 [0] in state active at offset 0 (leader epoch 0) (102265/100000 msgs, "
    "9984/65536 kb queued, opv 2) is not fetchable: queued.min.messages exceeded",
    "127.0.0.1:49731/1: Fetch backoff for 1000ms",
    "127.0.0.1:49731/1: Received FetchResponse (v16, 491214 bytes, CorrId 13, rtt 2.00ms)",
    "127.0.0.1:49731/1: Received FetchResponse (v16, 94 bytes, CorrId 14, rtt 500.20ms)",
    "127.0.0.1:49731/1: c1 [0]: Fetch backoff for 500ms: Broker: Not leader for partition",
]


def test_answers_round_trips_and_queue_full_backoffs_are_counted():
    tally = FetchLog()
    for text in LINES:
        tally.emit(logging.LogRecord("rd", logging.DEBUG, __file__, 0, text, None, None))
    got = tally.summary(records=20_000)
    assert got["fetch_answers"] == 3  # the empty answer (94 bytes) is not one
    assert got["bytes_per_answer"] == 1048646
    assert got["records_per_answer"] == 6667
    assert got["rtt_ms_median"] == 2.535  # every answer's round trip, the empty one's too
    assert got["queue_full_backoffs"] == 1  # neither the broker-wide line nor an error's backoff
