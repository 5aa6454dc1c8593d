"""The broker's metrics registry: the shell and engines count, exporters read.

Counts per interval (requests and latency per API, bytes and records in and
out per partition) are reset by ``take_interval``, which folds them into
cumulative counts that ``cumulative`` reads (for the Prometheus exporter) along
with the interval still open, so the hot paths count once for both; totals
are never reset. Engines that keep their own counters (producer state, quotas, share
groups) are *providers*: named callables returning a JSON-ready dict that is
included in every snapshot; ``provide`` names the engines' own (broker/composition.py,
at build and again when a reset replaces the engines: these counters stay). Nothing
here does I/O.
"""

from __future__ import annotations

from typing import Callable

from kipper.protocol.histogram import BUCKET_BOUNDS, LatencyHistogram  # noqa: F401  (re-exported)


class _PartitionCounts:
    __slots__ = ("bytes_in", "records_in", "bytes_out", "records_out")

    def __init__(self):
        self.bytes_in = self.records_in = self.bytes_out = self.records_out = 0


class Metrics:
    def __init__(self, providers: dict[str, Callable[[], dict]] | None = None):
        # (API name, version) -> its latencies: one histogram per dispatcher route, so
        # requests are counted per version at no cost (Kafka's RequestsPerSec has a version tag)
        self._apis: dict[tuple[str, int], LatencyHistogram] = {}
        self._errors: dict[str, int] = {}
        self._partitions: dict[tuple[str, int], _PartitionCounts] = {}
        self.totals = {"requests": 0, "bytes_in": 0, "records_in": 0, "bytes_out": 0,
                       "records_out": 0, "connections_accepted": 0, "connections_closed": 0,
                       "bytes_out_sendfile": 0}
        self.connections_open = 0
        self.providers: dict[str, Callable[[], dict]] = dict(providers or {})
        # what earlier intervals counted, folded in by take_interval
        self._past_apis: dict[tuple[str, int], LatencyHistogram] = {}
        self._past_partitions: dict[tuple[str, int], _PartitionCounts] = {}
        self._past_errors: dict[str, int] = {}

    def provide(self, providers: dict[str, Callable[[], dict]]) -> None:
        """Read these providers from now on (by name; others stay)."""
        self.providers.update(providers)

    @property
    def requests(self) -> int:
        """Requests answered since the start (the log cleaner yields to a busy broker)."""
        return self.totals["requests"]

    # --- counting (hot paths: keep them to a few attribute updates) -------------------

    def observe_request(self, api: str, latency_us: int, version: int = -1) -> None:
        self.observe_latency(self.latency_of(api, version), latency_us)

    def latency_of(self, api: str, version: int = -1) -> LatencyHistogram:
        """The histogram ``api`` ``version``'s request latencies go into (the dispatcher keeps it)."""
        hist = self._apis.get((api, version))
        if hist is None:
            hist = self._apis[(api, version)] = LatencyHistogram()
        return hist

    def observe_latency(self, hist: LatencyHistogram, latency_us: int, requests: int = 1) -> None:
        """``requests`` answered, each in ``latency_us`` (several: a run, broker/dispatcher.py)."""
        hist.record_many(latency_us, requests)
        self.totals["requests"] += requests

    def observe_rejected(self, reason: str) -> None:
        self._errors[reason] = self._errors.get(reason, 0) + 1

    def record_in(self, topic: str, partition: int, nbytes: int, nrecords: int) -> None:
        c = self._partitions.get((topic, partition))
        if c is None:
            c = self._partitions[(topic, partition)] = _PartitionCounts()
        c.bytes_in += nbytes
        c.records_in += nrecords
        totals = self.totals
        totals["bytes_in"] += nbytes
        totals["records_in"] += nrecords

    def record_out(self, topic: str, partition: int, nbytes: int, nrecords: int) -> None:
        c = self._partitions.get((topic, partition))
        if c is None:
            c = self._partitions[(topic, partition)] = _PartitionCounts()
        c.bytes_out += nbytes
        c.records_out += nrecords
        totals = self.totals
        totals["bytes_out"] += nbytes
        totals["records_out"] += nrecords

    def record_sendfile(self, nbytes: int) -> None:
        """Bytes of Fetch answers the kernel sent from segment files (of ``bytes_out``)."""
        self.totals["bytes_out_sendfile"] += nbytes

    def connection_opened(self) -> None:
        self.connections_open += 1
        self.totals["connections_accepted"] += 1

    def connection_closed(self) -> None:
        self.connections_open -= 1
        self.totals["connections_closed"] += 1

    # --- reading -----------------------------------------------------------------------

    def take_interval(self) -> dict:
        """Counts since the last call (and reset them), plus totals and providers."""
        # the live histograms stay (the dispatcher holds them): their counts move out
        apis = {key: h.take() for key, h in self._apis.items() if h.count}
        parts, self._partitions = self._partitions, {}
        errors, self._errors = self._errors, {}
        self._fold(apis, parts, errors)
        by_name, versions = _by_name(apis)
        out = {
            "apis": {name: h.snapshot() for name, h in sorted(by_name.items())},
            "api_versions": versions,
            "rejected": errors,
            "partitions": [{"topic": t, "partition": p, "bytes_in": c.bytes_in,
                            "records_in": c.records_in, "bytes_out": c.bytes_out,
                            "records_out": c.records_out}
                           for (t, p), c in sorted(parts.items())],
            "connections": {"open": self.connections_open,
                            "accepted": self.totals["connections_accepted"],
                            "closed": self.totals["connections_closed"]},
            "totals": dict(self.totals),
        }
        for name, provider in self.providers.items():
            out[name] = provider()
        return out

    def _fold(self, apis: dict, parts: dict, errors: dict) -> None:
        for name, h in apis.items():
            past = self._past_apis.get(name)
            if past is None:
                past = self._past_apis[name] = LatencyHistogram()
            past.add(h)
        for key, c in parts.items():
            past = self._past_partitions.get(key)
            if past is None:
                past = self._past_partitions[key] = _PartitionCounts()
            for field in _PartitionCounts.__slots__:
                setattr(past, field, getattr(past, field) + getattr(c, field))
        for reason, n in errors.items():
            self._past_errors[reason] = self._past_errors.get(reason, 0) + n

    def cumulative(self) -> dict:
        """Everything counted since start (nothing is reset), plus the providers:
        per-API histograms, per-partition bytes and records, rejected frames."""
        per_version = {}
        for key in self._past_apis.keys() | self._apis.keys():
            h = LatencyHistogram()
            for part in (self._past_apis.get(key), self._apis.get(key)):
                if part is not None:
                    h.add(part)
            per_version[key] = h
        apis, versions = _by_name(per_version)
        partitions = {}
        for key in self._past_partitions.keys() | self._partitions.keys():
            row = dict.fromkeys(_PartitionCounts.__slots__, 0)
            for part in (self._past_partitions.get(key), self._partitions.get(key)):
                if part is not None:
                    for field in _PartitionCounts.__slots__:
                        row[field] += getattr(part, field)
            partitions[key] = row
        rejected = dict(self._past_errors)
        for reason, n in self._errors.items():
            rejected[reason] = rejected.get(reason, 0) + n
        out = {"apis": apis, "api_versions": versions, "partitions": partitions, "rejected": rejected,
               "connections_open": self.connections_open, "totals": dict(self.totals)}
        for name, provider in self.providers.items():
            out[name] = provider()
        return out


def _by_name(per_version: dict) -> tuple[dict, dict]:
    """Histograms per API (the versions merged), and request counts per API and version
    ({"EndTxn": {"5": 12}}: which protocol clients use)."""
    by_name: dict[str, LatencyHistogram] = {}
    versions: dict[str, dict[str, int]] = {}
    for (name, version), h in sorted(per_version.items()):
        merged = by_name.get(name)
        if merged is None:
            merged = by_name[name] = LatencyHistogram()
        merged.add(h)
        if h.count:
            versions.setdefault(name, {})[str(version)] = h.count
    return by_name, versions
