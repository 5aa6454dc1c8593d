"""Workload files: the OpenMessaging Benchmark's shape plus kipper's keys.

``load(path)`` reads the YAML and validates every key once, with one readable
message per mistake (JobError, exit status 2). Values are in the units OMB
uses: ``producerRate`` is the total rate of all producers in records per
second (0: as fast as they go), ``testDurationMinutes`` may be fractional.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kipper.spark_jobs.common import JobError

KEY_DISTRIBUTORS = ("NO_KEY", "KEY_ROUND_ROBIN", "RANDOM_NANO")

# OMB keys about its consumers and payload files: accepted so OMB files load, and ignored.
OMB_IGNORED = ("subscriptionsPerTopic", "consumerPerSubscription", "consumerBacklogSizeGB",
               "warmupDurationMinutes", "payloadFile", "useRandomizedPayloads", "randomBytesRatio",
               "randomizedPayloadPoolSize", "producerPerTopic")


@dataclass(frozen=True)
class Workload:
    name: str
    topics: int
    partitions_per_topic: int
    message_size: int
    producers_per_topic: int
    producer_rate: float
    test_duration_minutes: float
    key_distributor: str = "NO_KEY"
    # kipper's keys
    idempotence: bool = True
    producer_id_churn_per_second: float = 0.0
    share_consumers_per_topic: int = 0
    topic_prefix: str = "loadgen"
    producer_config: dict = field(default_factory=dict)
    # seed 002: dedicated churn producers, and a producer-id quota for the run
    churn_records_per_producer: int = 0
    producer_ids_rate: float | None = None
    # seed 003: transactional producers (confluent-kafka)
    transactional_producers_per_topic: int = 0
    transaction_records: int = 100
    transactions_per_second: float = 5.0
    transaction_abort_percent: float = 0.0
    transaction_fence: bool = False
    # seed 004: what the share consumers answer, and consumers that let their locks expire
    share_release_percent: float = 0.0
    share_reject_percent: float = 0.0
    share_stalling_consumers_per_topic: int = 0
    ignored: tuple = ()

    @property
    def duration_s(self) -> float:
        return self.test_duration_minutes * 60

    @property
    def producers(self) -> int:
        return self.topics * self.producers_per_topic

    @property
    def transactional_producers(self) -> int:
        return self.topics * self.transactional_producers_per_topic

    @property
    def explicit_share_acks(self) -> bool:
        return bool(self.share_release_percent or self.share_reject_percent)


# yaml key -> (attribute, kind, required, minimum[, maximum])
_KEYS = {
    "name": ("name", "str", False, None),
    "topics": ("topics", "int", True, 1),
    "partitionsPerTopic": ("partitions_per_topic", "int", True, 1),
    "messageSize": ("message_size", "int", True, 1),
    "producersPerTopic": ("producers_per_topic", "int", True, 1),
    "producerRate": ("producer_rate", "number", True, 0),
    "testDurationMinutes": ("test_duration_minutes", "number", True, None),
    "keyDistributor": ("key_distributor", "str", False, None),
    "idempotence": ("idempotence", "bool", False, None),
    "producerIdChurnPerSecond": ("producer_id_churn_per_second", "number", False, 0),
    "shareConsumersPerTopic": ("share_consumers_per_topic", "int", False, 0),
    "topicPrefix": ("topic_prefix", "str", False, None),
    "producerConfig": ("producer_config", "map", False, None),
    "churnRecordsPerProducer": ("churn_records_per_producer", "int", False, 0),
    "producerIdsRate": ("producer_ids_rate", "number", False, None),
    "transactionalProducersPerTopic": ("transactional_producers_per_topic", "int", False, 0),
    "transactionRecords": ("transaction_records", "int", False, 1),
    "transactionsPerSecond": ("transactions_per_second", "number", False, None),
    "transactionAbortPercent": ("transaction_abort_percent", "number", False, 0, 100),
    "transactionFence": ("transaction_fence", "bool", False, None),
    "shareReleasePercent": ("share_release_percent", "number", False, 0, 100),
    "shareRejectPercent": ("share_reject_percent", "number", False, 0, 100),
    "shareStallingConsumersPerTopic": ("share_stalling_consumers_per_topic", "int", False, 0),
}

_KIND_NAMES = {"int": "an integer", "number": "a number", "str": "a string", "bool": "true or false",
               "map": "a mapping of client properties"}


def _check(key: str, kind: str, value, minimum, maximum=None):
    ok = {"int": isinstance(value, int) and not isinstance(value, bool),
          "number": isinstance(value, (int, float)) and not isinstance(value, bool),
          "str": isinstance(value, str) and bool(value.strip()),
          "bool": isinstance(value, bool),
          "map": isinstance(value, dict)}[kind]
    if not ok:
        raise JobError(f"workload key '{key}' must be {_KIND_NAMES[kind]}, got {value!r}", 2)
    if minimum is not None and value < minimum:
        raise JobError(f"workload key '{key}' must be at least {minimum}, got {value!r}", 2)
    if maximum is not None and value > maximum:
        raise JobError(f"workload key '{key}' must be at most {maximum}, got {value!r}", 2)
    return value


def parse(data, source: str = "workload") -> Workload:
    if not isinstance(data, dict):
        raise JobError(f"{source}: the workload must be a YAML mapping of keys", 2)
    unknown = sorted(k for k in data if k not in _KEYS and k not in OMB_IGNORED)
    if unknown:
        raise JobError(f"{source}: unknown workload key(s): {', '.join(map(str, unknown))} "
                       f"(known: {', '.join(_KEYS)})", 2)
    missing = [k for k, (_, _, required, *_) in _KEYS.items() if required and k not in data]
    if missing:
        raise JobError(f"{source}: missing workload key(s): {', '.join(missing)}", 2)
    values = {}
    for key, (attr, kind, _, *bounds) in _KEYS.items():
        if key in data:
            values[attr] = _check(key, kind, data[key], *bounds)
    for key, attr in (("testDurationMinutes", "test_duration_minutes"), ("producerIdsRate", "producer_ids_rate"),
                      ("transactionsPerSecond", "transactions_per_second")):
        if attr in values and values[attr] <= 0:
            raise JobError(f"workload key '{key}' must be above 0, got {values[attr]!r}", 2)
    if values.get("share_release_percent", 0) + values.get("share_reject_percent", 0) > 100:
        raise JobError("workload keys 'shareReleasePercent' and 'shareRejectPercent' add up to more than 100", 2)
    for key, attr in (("shareReleasePercent", "share_release_percent"), ("shareRejectPercent", "share_reject_percent"),
                      ("shareStallingConsumersPerTopic", "share_stalling_consumers_per_topic")):
        if values.get(attr) and not values.get("share_consumers_per_topic"):
            raise JobError(f"workload key '{key}' needs shareConsumersPerTopic of at least 1", 2)
    if values.get("churn_records_per_producer") and not values.get("producer_id_churn_per_second"):
        raise JobError("workload key 'churnRecordsPerProducer' needs producerIdChurnPerSecond above 0", 2)
    if values.get("producer_ids_rate") and not values.get("idempotence", True):
        raise JobError("workload key 'producerIdsRate' needs idempotence: without producer ids there is "
                       "nothing for the quota to count", 2)
    kd = values.get("key_distributor", "NO_KEY")
    if kd not in KEY_DISTRIBUTORS:
        raise JobError(f"workload key 'keyDistributor' must be one of {', '.join(KEY_DISTRIBUTORS)}, "
                       f"got {kd!r}", 2)
    props = values.get("producer_config", {})
    for k, v in props.items():
        if not isinstance(k, str) or isinstance(v, (dict, list)) or v is None:
            raise JobError(f"workload key 'producerConfig': '{k}' must map to a scalar value", 2)
    if "bootstrap.servers" in props or "enable.idempotence" in props:
        raise JobError("workload key 'producerConfig' may not set bootstrap.servers or "
                       "enable.idempotence (use --bootstrap-server and 'idempotence')", 2)
    values["producer_config"] = {k: str(v).lower() if isinstance(v, bool) else str(v)
                                 for k, v in props.items()}
    values.setdefault("name", Path(source).stem)
    values["ignored"] = tuple(k for k in OMB_IGNORED if k in data)
    return Workload(**values)


def load(path: str | Path) -> Workload:
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise JobError(f"cannot read workload file {path}: {exc.strerror or exc}", 2) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise JobError(f"{path}: not valid YAML{where}: {problem}", 2) from None
    return parse(data, str(path))
