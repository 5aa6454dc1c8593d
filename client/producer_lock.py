"""The producer's lock, with a token that ``Producer.send``'s fast path takes instead.

The fast path appends one record to an open batch, hundreds of thousands of
times a second, and must exclude the send thread (which closes and drains
batches) and other callers while it does. ``RLock.acquire`` plus ``release``
cost about 70 ns in CPython (``acquire`` parses its arguments every call),
a sixth of the fast path. Popping a token from a list and appending it back
costs about 25 ns, and both are atomic (``list.pop`` and ``list.append`` are
single operations under the GIL, and under the free-threaded build's
per-object locks).

So the lock has one token, in the list ``tokens``:

- the fast path pops it, appends the record, and puts it back; an IndexError
  means someone else has it, and the record takes the locked path instead;
- whoever acquires the lock takes the token too. It first points ``tokens``
  at an empty list, so no fast path starts from then on, then waits for a
  fast path already under way to put the token back (a few bytecodes; it
  yields the GIL while it waits), and restores the list on release.

Reentrant, and usable by ``threading.Condition`` (its ``wait`` gives up the
lock and the token, whatever the depth).
"""

from __future__ import annotations

import threading
import time

_TOKEN = object()
_EMPTY: list = []  # ``tokens`` while the lock is held: nothing ever appends to it


class ProducerLock:
    __slots__ = ("_mutex", "_depth", "_home", "tokens")

    def __init__(self):
        self._mutex = threading.RLock()
        self._depth = 0  # acquisitions by the owner (changed only while the mutex is held)
        self._home = [_TOKEN]  # where the token lives
        self.tokens = self._home  # what the fast path pops from: _home, or _EMPTY while held

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not self._mutex.acquire(blocking, timeout):
            return False
        if not self._depth:
            self._take_token()
        self._depth += 1
        return True

    def release(self, *exc) -> None:
        self._depth -= 1
        if not self._depth:
            self._give_token()
        self._mutex.release()

    __enter__ = acquire
    __exit__ = release  # the exception, if any, is the caller's

    def _take_token(self) -> None:
        self.tokens = _EMPTY
        home = self._home
        while True:
            try:
                home.pop()
                return
            except IndexError:  # a fast path holds it: let it finish (a few bytecodes)
                time.sleep(0)

    def _give_token(self) -> None:
        self._home.append(_TOKEN)
        self.tokens = self._home

    # --- for threading.Condition ------------------------------------------------------

    def _is_owned(self) -> bool:
        return self._mutex._is_owned()

    def _release_save(self):
        depth, self._depth = self._depth, 0
        self._give_token()
        return depth, self._mutex._release_save()

    def _acquire_restore(self, saved) -> None:
        depth, state = saved
        self._mutex._acquire_restore(state)
        self._take_token()
        self._depth = depth
