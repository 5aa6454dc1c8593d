"""The shell's periodic ticks (broker/server.Periodic): a tick whose engine is idle waits
IDLE_INTERVAL_S instead of its interval, and ``wake`` brings it back at once."""

from __future__ import annotations

import asyncio

from kipper.broker import server
from kipper.broker.server import Periodic


def test_an_idle_tick_sleeps_until_woken(monkeypatch):
    monkeypatch.setattr(server, "IDLE_INTERVAL_S", 0.3)
    state = {"idle": True, "runs": 0}

    async def scenario():
        task = Periodic("t", 0.01, lambda: state.__setitem__("runs", state["runs"] + 1),
                        idle=lambda: state["idle"])
        task.start()
        assert task.sleeping
        await asyncio.sleep(0.1)
        asleep = state["runs"]  # at most the one run at IDLE_INTERVAL_S: none yet
        state["idle"] = False
        task.wake()
        assert not task.sleeping
        await asyncio.sleep(0.1)
        awake = state["runs"]
        state["idle"] = True
        await asyncio.sleep(0.05)  # the next run sees the engine idle and sleeps again
        slept_again = task.sleeping
        task.stop()
        return asleep, awake, slept_again

    asleep, awake, slept_again = asyncio.run(scenario())
    assert asleep == 0
    assert awake >= 4  # every 10 ms once woken
    assert slept_again


def test_a_tick_without_an_idle_test_keeps_its_interval():
    runs = []

    async def scenario():
        task = Periodic("t", 0.01, lambda: runs.append(1))
        task.start()
        await asyncio.sleep(0.5)  # (ten intervals would do on a quiet machine; a loaded one ran 3 in 0.1 s)
        task.stop()
        return task.sleeping

    assert asyncio.run(scenario()) is False
    assert len(runs) >= 4
