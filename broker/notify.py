"""Wakes long polls when a partition they watch receives an append.

Shell-side (asyncio). Appending code calls ``notify(topic, partition)``. A waiting
Fetch awaits ``wait(keys, timeout)`` and then re-reads the logs. A waiting ShareFetch
``watch``es its partitions instead: it is tried again once the request that appended
has ended, as Kafka completes delayed share fetches after each request, so one answer
holds what one Produce request appended (Produce calls ``settle`` after each request;
an append outside one, a lock expiring, wakes at the event loop's next turn). A watch
sits in the waiters' lists where a future would, so ``notify`` is the same few steps
whoever waits: nothing is added to the append path.
"""

from __future__ import annotations

import asyncio
from typing import Callable

_WAITING, _WOKEN, _OVER = 0, 1, 2


class Watch:
    """One wake-up of a ShareFetch: ``on_wake`` runs once, after the request that woke it."""

    __slots__ = ("notifier", "keys", "on_wake", "state")

    def __init__(self, notifier: "AppendNotifier", keys: list, on_wake: Callable[[], None]):
        self.notifier = notifier
        self.keys = keys
        self.on_wake = on_wake
        self.state = _WAITING

    # the two methods notify() calls on what waits
    def done(self) -> bool:
        return self.state != _WAITING

    def set_result(self, _) -> None:
        self.state = _WOKEN
        woken = self.notifier.woken
        if not woken:  # settled by the request that appended, or at the loop's next turn
            asyncio.get_running_loop().call_soon(self.notifier.settle)
        woken.append(self)

    def cancel(self) -> None:
        self.state = _OVER
        self.notifier.forget(self.keys, self)

    def fire(self) -> None:
        if self.state == _WOKEN:
            self.cancel()
            self.on_wake()


class AppendNotifier:
    def __init__(self):
        self._waiters: dict[tuple[str, int], list] = {}
        # share fetches woken by the appends of the request under way, tried when it ends
        self.woken: list[Watch] = []

    def notify(self, topic: str, partition: int) -> None:
        waiters = self._waiters.pop((topic, partition), None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    async def wait(self, keys, timeout: float) -> None:
        """Return on the first append to any of ``keys``, or after ``timeout`` s."""
        if timeout <= 0:
            return
        fut = asyncio.get_running_loop().create_future()
        keys = list(keys)
        for key in keys:
            self._waiters.setdefault(key, []).append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self.forget(keys, fut)

    def watch(self, keys, on_wake: Callable[[], None]) -> Watch:
        """Call ``on_wake`` once, after the request whose appends reach any of ``keys``."""
        watch = Watch(self, list(keys), on_wake)
        for key in watch.keys:
            self._waiters.setdefault(key, []).append(watch)
        return watch

    def settle(self) -> None:
        """Run the wake-ups the appends so far queued (after each Produce request)."""
        woken = self.woken
        while woken:
            woken.pop(0).fire()

    def forget(self, keys, waiter) -> None:
        for key in keys:
            waiters = self._waiters.get(key)
            if waiters is not None:
                try:
                    waiters.remove(waiter)
                except ValueError:
                    pass
                if not waiters:
                    del self._waiters[key]

    @property
    def waiting(self) -> int:
        return len({id(f) for ws in self._waiters.values() for f in ws})
