"""ProducerLock: the producer's reentrant lock and the token Producer.send's
fast path takes instead of it, with real threads."""

from __future__ import annotations

import threading
import time

from kipper.client.producer_lock import ProducerLock


def take(lock):
    """The fast path's way in: the token, or None."""
    try:
        return lock.tokens.pop()
    except IndexError:
        return None


def test_holding_the_lock_holds_the_token_until_the_outermost_release():
    lock = ProducerLock()
    with lock:
        assert take(lock) is None
        with lock:
            assert take(lock) is None
        assert take(lock) is None  # still held once
    token = take(lock)
    assert token is not None
    lock.tokens.append(token)


def test_acquire_waits_for_a_fast_path_to_put_the_token_back():
    lock = ProducerLock()
    home = lock.tokens
    token = home.pop()  # a fast path is under way
    acquired = threading.Event()

    def locker():
        with lock:
            acquired.set()

    t = threading.Thread(target=locker)
    t.start()
    time.sleep(0.1)
    assert not acquired.is_set()
    assert take(lock) is None  # no new fast path starts while the lock is wanted
    home.append(token)  # the fast path ends
    assert acquired.wait(5)
    t.join(5)
    assert take(lock) is not None  # released: the token is home again


def test_the_lock_excludes_other_threads_and_a_nonblocking_acquire_says_so():
    lock = ProducerLock()
    held, done = threading.Event(), threading.Event()

    def holder():
        with lock:
            held.set()
            done.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(5)
    assert lock.acquire(blocking=False) is False
    assert lock.acquire(timeout=0.05) is False
    done.set()
    t.join(5)
    assert lock.acquire(timeout=5) is True
    lock.release()


def test_condition_wait_gives_up_the_lock_and_the_token_at_any_depth():
    lock = ProducerLock()
    cond = threading.Condition(lock)
    waiting, woke = threading.Event(), threading.Event()

    def waiter():
        with cond:
            with cond:  # depth 2
                waiting.set()
                assert cond.wait(5)
                assert take(lock) is None  # the lock and its token are back
                woke.set()
            assert take(lock) is None
        token = take(lock)
        lock.tokens.append(token)

    t = threading.Thread(target=waiter)
    t.start()
    assert waiting.wait(5)
    time.sleep(0.05)
    token = take(lock)
    assert token is not None  # a fast path runs while the other thread waits
    lock.tokens.append(token)
    with cond:
        cond.notify_all()
    assert woke.wait(5)
    t.join(5)
    assert take(lock) is not None


def test_token_holders_and_lock_holders_never_overlap():
    lock = ProducerLock()
    inside = []
    overlaps = []
    stop = time.monotonic() + 1.0

    def enter(who):
        inside.append(who)
        if len(inside) > 1:
            overlaps.append(tuple(inside))
        time.sleep(0)  # give the GIL away inside
        inside.remove(who)

    def fast():
        while time.monotonic() < stop:
            tokens = lock.tokens
            try:
                token = tokens.pop()
            except IndexError:
                with lock:
                    enter("slow")
                continue
            try:
                enter("fast")
            finally:
                tokens.append(token)

    def locked():
        while time.monotonic() < stop:
            with lock:
                enter("lock")

    threads = [threading.Thread(target=fast) for _ in range(3)] + [threading.Thread(target=locked)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert overlaps == []
