"""The generator's ``--workers`` pool: a worker must die of the SIGTERM its pool's terminate
sends, whatever thread the signal lands on (the twenty-third run hung there: the parent's
KeyboardInterrupt handler, inherited by the fork, runs only on a main thread that was blocked)."""

from __future__ import annotations

import signal

from tests.conformance.fuzz.__main__ import workers_pool


def test_a_worker_takes_sigterm_s_default_action():
    before = signal.signal(signal.SIGTERM, signal.default_int_handler)  # as main() installs it
    try:
        with workers_pool(1) as pool:
            assert pool.apply(signal.getsignal, (signal.SIGTERM,)) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)
