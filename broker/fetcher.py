"""A broker's replica fetchers: follower Fetch, as Kafka's ReplicaFetcherThread runs it.

One task per leader broker keeps one Fetch in flight carrying every partition this broker
follows from that leader (``ClusterNode.followed()``): replica_state with this broker's id
and epoch, and per partition its log end, the leader epoch it follows and the epoch of its
last batch. The answer's batches are appended at the leader's offsets (``Partition.
append_replica``), its high watermark and log start are taken; a diverging epoch truncates
the log first (KIP-595's Fetch-based truncation, which Kafka's followers use since 3.x); an
offset out of range starts over from the leader's log start. A leader that cannot be
reached is tried again after replica.fetch.backoff.ms; the plan is looked at again whenever
the metadata changes it.
"""

from __future__ import annotations

import asyncio

import structlog

from kipper.broker.peers import PeerLink, PeerUnavailable
from kipper.protocol import batch as b
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.fetch import FETCH
from kipper.protocol.messages.list_offsets import LIST_OFFSETS

log = structlog.get_logger(__name__)

EARLIEST, LATEST = -2, -1


class ReplicaFetchers:
    def __init__(self, server):
        self.server = server
        self.config = server.config
        self.tasks: dict[int, asyncio.Task] = {}
        self.plan: dict[int, list] = {}

    @property
    def node(self):
        return self.server.engines.cluster

    def update(self) -> None:
        """Start a fetcher for each leader followed, stop those no longer needed."""
        node = self.node
        if not node.followed_changed:
            return
        self.plan = node.followed()
        for leader_id, task in list(self.tasks.items()):
            if leader_id not in self.plan or task.done():
                task.cancel()
                del self.tasks[leader_id]
        for leader_id in self.plan:
            if leader_id not in self.tasks:
                self.tasks[leader_id] = asyncio.get_running_loop().create_task(self._fetch_from(leader_id))

    def stop(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()

    async def _fetch_from(self, leader_id: int) -> None:
        node = self.node
        backoff = self.config["replica.fetch.backoff.ms"] / 1000
        listener = self.config["listeners"][0].name
        link = None
        try:
            while leader_id in self.plan:
                if link is None or link.closed:
                    endpoint = node.endpoint(leader_id, listener)
                    if endpoint is None:
                        await asyncio.sleep(backoff)
                        continue
                    try:
                        link = await PeerLink(*endpoint, client_id=f"replica-fetcher-{node.node_id}").connect()
                    except PeerUnavailable:
                        await asyncio.sleep(backoff)
                        continue
                try:
                    if not await self._fetch_once(link, leader_id):
                        await asyncio.sleep(backoff)
                except PeerUnavailable as exc:
                    log.info("replica_fetch_failed", leader=leader_id, error=str(exc))
                    link.close()
                    await asyncio.sleep(backoff)
        finally:
            if link is not None:
                link.close()

    async def _fetch_once(self, link: PeerLink, leader_id: int) -> bool:
        """One Fetch and what it brought; False when the leader refused every partition."""
        node = self.node
        config = self.config
        partitions = [p for p in self.plan.get(leader_id, ()) if p.replica is not None
                      and p.replica.leader_id == leader_id]
        if not partitions:
            await asyncio.sleep(0.05)
            return True
        by_topic: dict = {}
        for p in partitions:
            by_topic.setdefault(p.replica.topic_id, []).append(p)
        names = {p.replica.topic_id: p.topic for p in partitions}
        body = {"cluster_id": None, "replica_id": node.node_id,
                "replica_state": {"replica_id": node.node_id, "replica_epoch": node.broker_epoch},
                "max_wait_ms": config["replica.fetch.wait.max.ms"], "min_bytes": 1,
                "max_bytes": config["replica.fetch.response.max.bytes"], "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                "topics": [{"topic": names[tid], "topic_id": tid, "partitions": [{
                    "partition": p.partition, "current_leader_epoch": p.replica.leader_epoch,
                    "fetch_offset": p.log_end_offset, "last_fetched_epoch": p.replica.epochs.latest_epoch,
                    "log_start_offset": p.log_start_offset,
                    "partition_max_bytes": config["replica.fetch.max.bytes"]} for p in ps]}
                    for tid, ps in by_topic.items()]}
        answer = await link.request(FETCH, body, timeout=config["replica.fetch.wait.max.ms"] / 1000 + 30)
        if answer.error_code != 0:
            return False
        progressed = False
        for t in answer.responses:
            ps = {p.partition: p for p in by_topic.get(t.get("topic_id"), [])} if t.get("topic_id") \
                else {p.partition: p for p in partitions if p.topic == t.topic}
            for row in t.partitions:
                partition = ps.get(row.partition_index)
                if partition is None or partition.replica.leader_id != leader_id:
                    continue  # (the plan moved while the Fetch was out)
                progressed |= await self._take(link, partition, row)
        return progressed

    async def _take(self, link: PeerLink, partition, row) -> bool:
        replica = partition.replica
        now = self.server.engines.clock()
        code = row.error_code
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            await self._out_of_range(link, partition)
            return True
        if code != 0:
            log.debug("replica_fetch_refused", topic=partition.topic, partition=partition.partition,
                      error=ErrorCode(code).name)
            return False
        diverging = row.get("diverging_epoch") or {}
        if diverging.get("end_offset", -1) >= 0 and diverging.get("epoch", -1) >= -1:
            epoch, end = diverging["epoch"], diverging["end_offset"]
            ours = replica.epochs.end_offset_for(epoch, partition.log_end_offset)[1] if epoch >= 0 else end
            target = min(end, ours) if ours >= 0 else end
            log.info("replica_truncated", topic=partition.topic, partition=partition.partition,
                     to=target, log_end_offset=partition.log_end_offset, diverging_epoch=epoch)
            replica.truncated(partition.truncate_to(target))
            return True
        data = row.records
        if data:
            spans = [s for s in b.split_batches(data) if s[2].base_offset + s[2].last_offset_delta >= partition.log_end_offset]
            if spans:
                partition.append_replica(data, spans, now)
                replica.appended_as_follower([(h.base_offset, h) for _, _, h in spans])
        replica.leader_high_watermark(row.high_watermark)
        if row.log_start_offset > partition.log_start_offset:
            partition.delete_records_before(row.log_start_offset)
            replica.epochs.truncate_from_start(partition.log_start_offset)
        return True

    async def _out_of_range(self, link: PeerLink, partition) -> None:
        """Kafka's handleOutOfRangeError: a follower past the leader's log end truncates to
        it; one before the leader's log start starts over there."""
        earliest, latest = await self._leader_offsets(link, partition)
        if earliest is None:
            return
        end = partition.log_end_offset
        if end > latest:
            log.warning("replica_truncated_to_leader_end", topic=partition.topic, partition=partition.partition,
                        leader_end=latest, log_end_offset=end)
            partition.replica.truncated(partition.truncate_to(latest))
        elif end < earliest:
            log.warning("replica_restarted_at_leader_start", topic=partition.topic, partition=partition.partition,
                        leader_start=earliest, log_end_offset=end)
            partition.restart_at(earliest)
            partition.replica.truncated(earliest)

    async def _leader_offsets(self, link: PeerLink, partition) -> tuple[int | None, int | None]:
        """(log start, log end) of the leader's partition (ListOffsets as a replica)."""
        answer = await link.request(LIST_OFFSETS, {
            "replica_id": self.node.node_id, "isolation_level": 0, "timeout_ms": 30000,
            "topics": [{"name": partition.topic, "partitions": [
                {"partition_index": partition.partition, "current_leader_epoch": partition.replica.leader_epoch,
                 "timestamp": ts, "max_num_offsets": 1} for ts in (EARLIEST, LATEST)]}]})
        rows = answer.topics[0].partitions
        if len(rows) != 2 or any(r.error_code != 0 for r in rows):
            return None, None
        return rows[0].offset, rows[1].offset
