"""A loadgen task's kipper producers, reported to the broker's metrics topic (seed 001).

With ``loadgen --metrics-topic TOPIC`` each task samples its steady producers'
``Producer.metrics()`` once a second and appends one line to TOPIC, keyed by the task:
a metrics-dump line (schema 1) whose ``producers`` section holds the in-flight Produce
requests at the sample (a gauge, summed over the producers) and the requests, batches,
records and bytes of the interval. spark_jobs/stream_metrics.py reads them beside the
broker's lines. They are Produce records to the broker: its records_in counts them.
"""

from __future__ import annotations

import json
import threading
import time

INTERVAL_S = 1.0
COUNTERS = ("requests", "batches", "records", "bytes", "request_latency_sum")


class ProducerReport(threading.Thread):
    def __init__(self, spec: dict, producers: list):
        super().__init__(name="loadgen-producer-report", daemon=True)
        self.spec = spec
        self.producers = producers  # the task's live list: replaced producers drop out of the sums
        self.client_id = f"{spec['run_id']}-task{spec['task']}"
        self.done = threading.Event()
        self.lines = 0

    def _sample(self) -> tuple[int, dict]:
        in_flight, sums = 0, dict.fromkeys(COUNTERS, 0)
        for p in list(self.producers):
            m = p.metrics()
            in_flight += m["in_flight_requests"]
            for k in COUNTERS:
                sums[k] += m[k]
        return in_flight, sums

    def run(self) -> None:
        from kipper.client.producer import Producer

        out = Producer({"bootstrap.servers": self.spec["bootstrap"], "client.id": self.client_id,
                        "linger.ms": "0"})
        key = self.client_id.encode()
        last_t, (_, last) = time.monotonic(), self._sample()
        try:
            while not self.done.wait(INTERVAL_S):
                now = time.monotonic()
                in_flight, sums = self._sample()
                delta = {k: max(0, sums[k] - last[k]) for k in COUNTERS}
                line = {"schema": 1, "ts_ms": int(time.time() * 1000), "broker_id": None,
                        "interval_ms": max(1, round((now - last_t) * 1000)),
                        "producers": {"client_id": self.client_id, "producers": len(self.producers),
                                      "in_flight_requests": in_flight,
                                      **{k: delta[k] for k in COUNTERS[:4]},
                                      "request_latency_avg_ms": (delta["request_latency_sum"] * 1000 /
                                                                 delta["requests"]) if delta["requests"] else None}}
                out.send(self.spec["metrics_topic"], json.dumps(line, separators=(",", ":")).encode(), key=key)
                self.lines += 1
                last_t, last = now, sums
        finally:
            out.flush(10)
            out.close(5)

    def stop(self) -> int:
        self.done.set()
        self.join(15)
        return self.lines


def start(spec: dict, producers: list) -> ProducerReport | None:
    if not spec.get("metrics_topic"):
        return None
    report = ProducerReport(spec, producers)
    report.start()
    return report
