"""A real idempotent producer whose batch overlaps what the broker already appended for it
(issue 36, item 1): the broker holds sequences 0-1 of the producer's id and epoch, and the
producer sends its first batch, 0-3. Kafka answers OUT_OF_ORDER_SEQUENCE_NUMBER and Kafka's
Java producer retries (it bumps its epoch, KIP-360, and sends the batch again from sequence
0); a DUPLICATE_SEQUENCE_NUMBER answer, which every client takes for success, would drop
its four records without a trace, as kipper did before.

How the overlap is made: no shipped client re-batches records it has sequenced once
(librdkafka stops with a fatal error rather than do it; Java, kafka-python and aiokafka
keep a batch whole across retries), so a client's own retry never overlaps. What it meets
is the state such a client leaves behind: a batch appended under its id, whose answer it
never read, then its records sent again in a wider batch. The test makes that state with
a fault proxy (tests/support/proxy.py) in front of the broker, which the broker
advertises: the proxy notes the producer id and epoch the broker gives the Java producer
(kafka-console-producer, Kafka 4.4's own tool) and holds the producer's first Produce;
meanwhile the test appends sequences 0-1 under that id and epoch straight to the broker;
then the proxy lets the held batch (sequences 0-3) go on.

Needs Java (skipped with the reason without it, failing under CI=true).
"""

from __future__ import annotations

import subprocess
import threading
import time

from kipper.client.blocking import BlockingConnection
from kipper.client.consumer_requests import fetch
from kipper.client.producer_requests import produce
from kipper.protocol import records
from scripts import kafka_reference as kref
from tests.support.broker import BrokerProcess, free_port
from tests.support.java_programs import TOOLS_LOG4J
from tests.support.proxy import FaultProxy
from tests.support.readback import read_topic
from tests.support.reference import require_kafka
from tests.support.topics import create_topics

require_kafka()

LINES = [f"record-{i}" for i in range(4)]


def console_producer(bootstrap: str, topic: str) -> subprocess.Popen:
    """Kafka's kafka-console-producer: an idempotent Java producer that gathers the four
    lines into one batch (linger.ms) and retries for up to a minute."""
    cmd = [kref.java_binary(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
           f"-Dlog4j2.configurationFile={TOOLS_LOG4J}", "-cp", kref.classpath("tools"),
           kref.TOOLS["kafka-console-producer"], "--bootstrap-server", bootstrap, "--topic", topic,
           "--command-property", "enable.idempotence=true", "--command-property", "acks=all",
           "--command-property", "linger.ms=1000", "--command-property", "retry.backoff.ms=50",
           "--command-property", "delivery.timeout.ms=60000"]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(what, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_java_producer_retries_a_batch_that_overlaps_the_appended_one_and_loses_nothing(unique):
    topic = f"overlap-{unique}"
    release = threading.Event()
    port = free_port()
    proxy = FaultProxy("127.0.0.1", port, hold_produce=release)
    proxy.start()
    broker = BrokerProcess(port=port, advertise=("127.0.0.1", proxy.port)).start()
    java = None
    try:
        create_topics(broker.bootstrap, topic, partitions=1)
        java = console_producer(f"127.0.0.1:{proxy.port}", topic)
        java.stdin.write("".join(line + "\n" for line in LINES))
        java.stdin.flush()
        wait_for(lambda: proxy.produce_requests >= 1 or java.poll() is not None)
        assert java.poll() is None, java.communicate()
        [(pid, epoch)] = proxy.producer_ids
        # what an earlier attempt left: sequences 0-1 appended, its answer never read
        with BlockingConnection("127.0.0.1", port) as conn:
            conn.negotiate()
            earlier = records.build_batch([(None, b"earlier-0"), (None, b"earlier-1")],
                                          producer_id=pid, producer_epoch=epoch, base_sequence=0)
            answer = produce(conn, {(topic, 0): earlier})
            assert answer.responses[0].partition_responses[0].error_code == 0
        release.set()  # the producer's batch, sequences 0-3, goes on to the broker
        out, err = java.communicate(timeout=90)  # stdin closed: the console producer flushes and exits
        assert java.returncode == 0, err
        assert "Error when sending message" not in err, err
        values = [r.value.decode() for r in read_topic(broker.bootstrap, topic)[0]]
        assert values == ["earlier-0", "earlier-1", *LINES], values
        # refused, the producer sent its batch again under a new epoch from sequence 0 (KIP-360)
        with BlockingConnection("127.0.0.1", port) as conn:
            conn.negotiate()
            data = fetch(conn, {(topic, 0): 0}).responses[0].partitions[0].records
        assert [(h.producer_id, h.producer_epoch, h.base_sequence, h.records_count)
                for h in (bt.header for bt in records.decode_all(data))] == [(pid, epoch, 0, 2), (pid, epoch + 1, 0, 4)]
    finally:
        release.set()
        if java is not None and java.poll() is None:
            java.kill()
            java.wait()
        broker.stop()
        proxy.stop()
