"""The registry over its topic: the engine, and the ``_schemas`` log it is kept in.

Every change is written as Confluent's registry writes it (one record per key, JSON keys and
values; ``records.py``) through the partition's one write path, in one batch, and applied to
the state only once appended: the answer a client gets is in the log. With log.dirs the
topic is recovered with the others and replayed here at start, so a broker killed after a
registration keeps every subject, version, id and config; in memory the registry starts
empty. The topic (compacted, one partition) is made at the first change, so a broker whose
registry is never written to shows no extra topic.
"""

from __future__ import annotations

import structlog

from kipper.broker.log.partition import COORDINATOR
from kipper.broker.schema_registry import errors
from kipper.broker.schema_registry.engine import Change, SchemaRegistry
from kipper.broker.schema_registry.state import RegistryState
from kipper.protocol import records

log = structlog.get_logger(__name__)

TOPIC_CONFIGS = {"cleanup.policy": "compact"}  # Confluent's kafkastore topic: compacted, one partition


class RegistryService:
    def __init__(self, topics, *, topic: str, default_level: str, clock):
        self.topics = topics
        self.topic = topic
        self.clock = clock
        self.engine = SchemaRegistry(RegistryState(), default_level=default_level)
        self.counters = {"registered": 0, "changes": 0, "records": 0}

    @property
    def state(self) -> RegistryState:
        return self.engine.state

    def recover(self) -> int:
        """Replay the topic, oldest first; returns the records read."""
        topic = self.topics.get(self.topic)
        if topic is None:
            return 0
        partition = topic.partitions[0]
        count = 0
        for _, data in partition.batches_from(partition.log_start_offset):
            batch = records.decode_batch(data, verify_crc=False)
            if batch.header.is_control:
                continue
            for record in batch.records:
                self.state.apply_raw(record.key, record.value)
                count += 1
        log.info("schema_registry_recovered", topic=self.topic, records=count,
                 subjects=len(self.state.versions), max_id=self.state.max_id, skipped=self.state.skipped)
        return count

    def commit(self, change: Change):
        """Append the change's records, then apply them; the change's answer."""
        if change.records:
            now = self.clock()
            partition = self._partition()
            batch = records.build_batch([(key.encode(), value, now) for key, value in change.records])
            result = partition.append_batch(batch, now, COORDINATOR)
            if result.error:
                raise errors.store_error(f"Register schema operation failed while writing to the Kafka store: "
                                         f"{result.error.name}")
            for key, value in change.records:
                self.state.apply(key, value)
            self.counters["changes"] += 1
            self.counters["records"] += len(change.records)
        return change.answer

    def _partition(self):
        topic = self.topics.get(self.topic)
        if topic is None:
            code, message, topic = self.topics.create(self.topic, 1, configs=dict(TOPIC_CONFIGS))
            if topic is None:
                raise errors.store_error(f"cannot create the {self.topic} topic: {code.name} {message or ''}")
            log.info("schema_registry_topic_created", topic=self.topic)
        return topic.partitions[0]

    def snapshot(self) -> dict:
        """The registry's counters, for the metrics."""
        state = self.state
        return {"subjects": len(state.versions), "schemas": len(state.id_versions), "max_id": state.max_id,
                **self.counters}
