"""A durable broker that cleans a compacted topic while an idempotent confluent-kafka
producer writes to it, killed with SIGKILL again and again mid-way: after the last restart
every key reads back with the last value the producer had acknowledged for it, offsets
strictly increase, the cleaner did remove records, and a half-written cleaned copy does
not outlive the next start."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from tests.support.broker import BrokerProcess, free_port
from tests.support.readback import read_topic

KEYS = 40
KILLS = 3


def _compacted_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"cleanup.policy": "compact", "segment.ms": "200", "min.cleanable.dirty.ratio": "0.01",
               "internal.segment.bytes": "65536"}
    for f in admin.create_topics([NewTopic(topic, 1, 1, config=configs)]).values():
        f.result(15)


class KeyedProducer(threading.Thread):
    """Writes value i under key i % KEYS until stopped; remembers, per key, the last
    value whose delivery was acknowledged, and every delivery error."""

    def __init__(self, bootstrap: str, topic: str):
        super().__init__(daemon=True)
        self.bootstrap, self.topic = bootstrap, topic
        self.acked: dict[bytes, int] = {}
        self.errors: list[str] = []
        self.sent = 0
        self.stopping = threading.Event()

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.errors.append(str(err))
            return
        value = int(msg.value())
        key = msg.key()
        if value > self.acked.get(key, -1):
            self.acked[key] = value

    def run(self) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "linger.ms": 5,
                      "message.timeout.ms": 120_000, "reconnect.backoff.max.ms": 200})
        while not self.stopping.is_set():
            i = self.sent
            try:
                p.produce(self.topic, key=b"k%d" % (i % KEYS), value=b"%d" % i, on_delivery=self._delivered)
                self.sent += 1
            except BufferError:
                pass
            p.poll(0.0005 if self.sent % 50 else 0.005)
        remaining = p.flush(120)
        if remaining:
            self.errors.append(f"{remaining} records not delivered by the end")


def test_sigkill_while_cleaning_keeps_the_latest_acknowledged_value_of_every_key(tmp_path, unique):
    data = tmp_path / "data"
    broker = BrokerProcess({"log.dirs": str(data), "log.cleaner.backoff.ms": "100"}, port=free_port()).start()
    topic = f"crash-compact-{unique}"
    try:
        _compacted_topic(broker.bootstrap, topic)
        producer = KeyedProducer(broker.bootstrap, topic)
        producer.start()
        cleaned_before_kills = 0
        for _ in range(KILLS):
            deadline = time.time() + 20
            while time.time() < deadline and "log_cleaned" not in broker.log_text():
                time.sleep(0.1)
            time.sleep(0.3)  # into the next pass
            cleaned_before_kills += len(re.findall(r"log_cleaned .*topic=" + re.escape(topic), broker.log_text()))
            broker.kill()
            broker.start()
        time.sleep(1.0)
        producer.stopping.set()
        producer.join(180)
        assert not producer.is_alive()
        assert producer.errors == []
        assert cleaned_before_kills >= KILLS, "every kill came after at least one cleaning pass"

        broker.kill()  # a last crash, then a start without the cleaner, so nothing new is written
        broker.overrides["log.cleaner.enable"] = "false"
        broker.start()
        assert not list(Path(data).rglob("*.cleaned")), "a cleaned copy left by a crash is removed at start"
        stored = read_topic(broker.bootstrap, topic)[0]
        offsets = [r.offset for r in stored]
        assert offsets == sorted(set(offsets)), "offsets strictly increase"
        latest: dict[bytes, int] = {}
        for r in stored:
            latest[r.key] = int(r.value)
        assert latest == producer.acked, "every key's last acknowledged value, and nothing after it"
        assert len(stored) < producer.sent, "the cleaner removed superseded records"
    finally:
        broker.stop()
