"""A cluster's transaction coordinator delivering markers to other brokers: WriteTxnMarkers.

The coordinator's engine (broker/txn/service.py) queues a ``MarkerJob`` for the partitions
it does not lead (and the groups it does not coordinate, by their `__consumer_offsets`
partition). Here each job's partitions go, grouped by their leader in the metadata, in one
WriteTxnMarkers per leader (Kafka's TransactionMarkerChannelManager); a partition answered
NOT_LEADER_OR_FOLLOWER, or whose leader cannot be reached, is tried again after a pause
against whoever leads it then. A partition that no longer exists counts as written. Once
every one is written the job's ``done`` completes the transaction.
"""

from __future__ import annotations

import asyncio

import structlog

from kipper.broker.peers import PeerUnavailable, PeerWork
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.write_txn_markers import WRITE_TXN_MARKERS

log = structlog.get_logger(__name__)

RETRY_S = 0.1
# done with a partition: written, deleted since, or fenced by a marker of a later coordinator
# (Kafka's marker handler stops sending then)
WRITTEN = (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.TRANSACTION_COORDINATOR_FENCED)


class TxnMarkerSender(PeerWork):
    client_name = "txn-markers"

    queue_name = "markers"

    async def work(self, job) -> None:
        left = set(job.partitions)
        while left:
            cluster, txn = self.engines.cluster, self.engines.txn
            by_leader: dict[int, list] = {}
            for topic, partition in left:
                by_leader.setdefault(cluster.leader_of(topic, partition), []).append((topic, partition))
            for leader, parts in by_leader.items():
                if leader == cluster.node_id:  # it leads them now: written here
                    now = self.engines.clock()
                    for topic, partition in parts:
                        if txn.write_markers(job.producer_id, job.producer_epoch, job.committed,
                                             job.coordinator_epoch, topic, partition, now) in WRITTEN:
                            left.discard((topic, partition))
                elif leader >= 0:
                    left -= await self._send(leader, job, parts)
            if left:
                await asyncio.sleep(RETRY_S)
        job.done(self.engines.clock())

    async def _send(self, leader: int, job, parts: list) -> set:
        """WriteTxnMarkers to ``leader``; the partitions it wrote."""
        try:
            link = await self.link(leader)
            by_topic: dict[str, list[int]] = {}
            for topic, partition in parts:
                by_topic.setdefault(topic, []).append(partition)
            answer = await link.request(WRITE_TXN_MARKERS, {"markers": [{
                "producer_id": job.producer_id, "producer_epoch": job.producer_epoch,
                "transaction_result": job.committed, "coordinator_epoch": job.coordinator_epoch,
                "transaction_version": 0,
                "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]}]})
        except PeerUnavailable as exc:
            log.info("txn_markers_not_delivered", leader=leader, error=str(exc))
            return set()
        written = set()
        for marker in answer.markers:
            for t in marker.topics:
                for p in t.partitions:
                    if p.error_code in WRITTEN:
                        written.add((t.name, p.partition_index))
                    else:
                        log.info("txn_marker_refused", leader=leader, topic=t.name, partition=p.partition_index,
                                 error=ErrorCode(p.error_code).name)
        return written
