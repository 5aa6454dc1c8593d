"""Classic consumer groups with confluent-kafka and kafka-python: partitions are
shared out, and handed over when a member leaves or stops heartbeating."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from tests.support.broker import ROOT
from tests.support.topics import create_topics

# kafka-python consumers poll on threads of their own here; with the broker in the same
# process they compete with it for the GIL and a rebalance can miss its session timeout.
pytestmark = [pytest.mark.interop, pytest.mark.broker_subprocess]
PARTITIONS = 4


def _consumer(bootstrap: str, group: str, topic: str, **extra):
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "session.timeout.ms": 6000, "heartbeat.interval.ms": 500, **extra})
    c.subscribe([topic])
    return c


def _poll_until(consumers, predicate, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for c in consumers:
            c.poll(0.1)
        if predicate():
            return True
    return False


def _assigned(c) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def test_two_confluent_consumers_split_the_partitions_and_one_takes_over_when_the_other_leaves(broker, unique):
    topic, group = f"rb-{unique}", f"rb-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    a = _consumer(broker.bootstrap, group, topic)
    b = _consumer(broker.bootstrap, group, topic)
    assert _poll_until([a, b], lambda: _assigned(a) and _assigned(b)
                       and len(_assigned(a) | _assigned(b)) == PARTITIONS), "both members get partitions"
    assert not _assigned(a) & _assigned(b), "no partition is assigned twice"
    b.close()  # LeaveGroup
    assert _poll_until([a], lambda: _assigned(a) == set(range(PARTITIONS)))
    a.close()


def test_a_member_that_stops_heartbeating_is_evicted_after_its_session_timeout(broker, unique):
    topic, group = f"crash-{unique}", f"crash-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    survivor = _consumer(broker.bootstrap, group, topic)
    assert _poll_until([survivor], lambda: _assigned(survivor) == set(range(PARTITIONS)))
    # a second member in another process, killed without a LeaveGroup
    script = textwrap.dedent(f"""
        import time
        from confluent_kafka import Consumer
        c = Consumer({{"bootstrap.servers": "{broker.bootstrap}", "group.id": "{group}",
                      "session.timeout.ms": 6000, "heartbeat.interval.ms": 500}})
        c.subscribe(["{topic}"])
        while True:
            c.poll(0.1)
            if c.assignment():
                print("assigned", flush=True)
    """)
    victim = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert _poll_until([survivor], lambda: len(_assigned(survivor)) < PARTITIONS, timeout=30)
        assert victim.stdout.readline().strip() == b"assigned"
    finally:
        victim.kill()
        victim.wait()
    started = time.time()
    assert _poll_until([survivor], lambda: _assigned(survivor) == set(range(PARTITIONS)), timeout=30)
    assert time.time() - started >= 3, "taken over only after the 6 s session timeout, not at once"
    survivor.close()


def _parts(consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def test_kafka_python_members_rebalance_when_one_closes(broker, unique):
    """Each kafka-python consumer polls on its own thread, as applications do.
    (Polling two of them alternately with short timeouts from one thread can
    leave kafka-python's heartbeat disabled after a fast rebalance; that is a
    client quirk, not something a broker can answer.)"""
    import threading

    from kafka import KafkaConsumer

    topic, group = f"kprb-{unique}", f"kprb-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    a = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group)
    b = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group)
    running = {a: True, b: True}

    def loop(c):
        while running[c]:
            c.poll(200)
    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in (a, b)]
    for t in threads:
        t.start()

    def wait_for(predicate, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return True
            time.sleep(0.1)
        return False

    try:
        assert wait_for(lambda: _parts(a) and _parts(b) and len(_parts(a) | _parts(b)) == PARTITIONS
                        and not _parts(a) & _parts(b)), "kafka-python members never split the partitions"
        running[b] = False
        threads[1].join(5)
        b.close()
        assert wait_for(lambda: _parts(a) == set(range(PARTITIONS))), "the remaining member never took every partition"
    finally:
        running[a] = False
        threads[0].join(5)
        a.close()
