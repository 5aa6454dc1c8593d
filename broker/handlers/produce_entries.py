"""A Produce request's entries as Kafka reads them: into a map keyed by partition, each
entry's records checked as ProduceRequest.validateRecords checks them, and what
ReplicaManager.handleProduceAppend asks of the transactional batches of all of them (that
they are one producer's, at one epoch) before anything is appended."""

from __future__ import annotations

from kipper.broker.log import validate
from kipper.protocol import compression
from kipper.protocol.batch import HEADER_SIZE, TRANSACTIONAL, read_header
from kipper.protocol.errors import ErrorCode
from kipper.protocol.produce_codec import PartitionProduceData, TopicProduceData

ZSTD_SINCE = 7  # a batch compressed with zstd needs Produce v7+ (KIP-110)
MORE_THAN_ONE_PRODUCER = "Transactional records contained more than one producer ID"


class Repeated(PartitionProduceData):
    """A partition a request names more than once whose records Kafka's validateRecords
    refused in some entry: the last records it read are appended all the same, and the
    answer is the last refusal (Kafka merges its map of refusals over the appends' answers)."""

    __slots__ = ("refusal",)

    def __init__(self, index: int, records, refusal: ErrorCode):
        super().__init__(index, records)
        self.refusal = refusal


def distinct(topic_data: list, version: int) -> list:
    """``topic_data`` with each topic once and each of its partitions once, holding the last
    records the request gave for it that read as a batch (Kafka reads a request into a map
    keyed by partition); the list itself when nothing repeats."""
    seen: dict = {}
    for tdata in topic_data:
        parts = seen.setdefault(tdata.name if tdata.name is not None else tdata.topic_id, (tdata, {}))[1]
        for pdata in tdata.partition_data:
            parts.setdefault(pdata.index, []).append(pdata)
    if len(seen) == len(topic_data) and all(
            len(parts) == len(t.partition_data) for t, parts in seen.values()):
        return topic_data
    return [TopicProduceData(t.name, t.topic_id, [_one(entries, version) for entries in parts.values()])
            for t, parts in seen.values()]


def _one(entries: list, version: int):
    if len(entries) == 1:
        return entries[0]
    refusals = [(p, records_refusal(p.records, version)) for p in entries]
    read = [p for p, code in refusals if code is None]
    refused = [code for _, code in refusals if code is not None]
    kept = read[-1] if read else entries[-1]
    return Repeated(kept.index, kept.records, refused[-1]) if refused else kept


def records_refusal(records, version: int) -> ErrorCode | None:
    """What Kafka's ProduceRequest.validateRecords refuses in one entry's records: the batch
    as read, then zstd before Produce v7."""
    if records is None:
        return None
    try:
        _, _, header = validate.produced_batch(records, counts=False)
    except validate.Rejected as exc:
        return exc.code
    if version < ZSTD_SINCE and header.attributes & 7 == compression.ZSTD:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    return None


def transactional(records) -> bool:
    """Whether ``records`` begin with a transactional v2 batch (read from its header's magic and
    attributes bytes, as Kafka's ProduceRequest.hasTransactionalRecords)."""
    return records is not None and len(records) >= HEADER_SIZE and records[16] == 2 and records[22] & TRANSACTIONAL


def mixed_producers(records_of) -> bool:
    """Whether the transactional batches among ``records_of`` (the records of the partitions
    the request may write, each read as one batch) are of more than one (producer id, epoch):
    Kafka then fails the whole request with INVALID_PRODUCER_ID_MAPPING."""
    seen = set()
    for records in records_of:
        if transactional(records):
            header = read_header(records)
            if header.producer_id >= 0:
                seen.add((header.producer_id, header.producer_epoch))
    return len(seen) > 1
