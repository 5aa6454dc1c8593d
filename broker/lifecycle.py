"""A cluster broker's loops toward its controller (docs/CLUSTER.md), as a KRaft broker runs them.

Register (BrokerRegistration with this process's incarnation id and advertised listeners;
retried while the controller refuses it, for instance while an earlier incarnation's session
lasts), then at once: heartbeats (every broker.heartbeat.interval.ms, quicker while fenced)
carrying the metadata offset applied; the metadata log fetched with long polls and applied
to the ClusterNode; and the node's outbox (AlterPartition, AllocateProducerIds, forwarded
admin requests) sent in order. A broken connection is opened again; a heartbeat the
controller no longer knows (STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED) registers again.
Stopping is Kafka's controlled shutdown: heartbeats ask to shut down until the controller
has moved the leaderships away (or a few seconds pass).
"""

from __future__ import annotations

import asyncio
import uuid

import structlog

from kipper.broker.peers import PeerLink, PeerUnavailable
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.broker_heartbeat import BROKER_HEARTBEAT
from kipper.protocol.messages.broker_registration import BROKER_REGISTRATION
from kipper.protocol.messages.fetch import FETCH

log = structlog.get_logger(__name__)

SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
FENCED_HEARTBEAT_S = 0.05  # while fenced, heartbeats go this often, to be unfenced soon
RETRY_S = 0.2
SHUTDOWN_WAIT_S = 5.0
METADATA_TOPIC_ID = mr.METADATA_TOPIC_ID


async def together(*coroutines) -> None:
    """Run the loops until one ends or fails; the others are cancelled (its error is raised)."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in done:
        if task.exception() is not None:
            raise task.exception()


class Reregister(Exception):
    """The controller no longer knows this registration."""


class BrokerLifecycle:
    def __init__(self, server):
        self.server = server  # broker/server.py's BrokerServer (its engines may be looked up again)
        config = server.config
        self.config = config
        host, _, port = config["controller.quorum.bootstrap.servers"].split(",")[0].strip().rpartition(":")
        self.controller = (host, int(port))
        self.incarnation = uuid.uuid4()
        self.stopping = False
        self.link: PeerLink | None = None
        self._task: asyncio.Task | None = None
        self.last_epoch = -1  # the epoch of the last metadata batch applied
        self.serving = False

    @property
    def node(self):
        return self.server.engines.cluster

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _connect(self) -> PeerLink:
        while True:
            try:
                return await PeerLink(*self.controller, client_id=f"broker-{self.node.node_id}").connect()
            except PeerUnavailable as exc:
                log.debug("controller_unreachable", error=str(exc))
                await asyncio.sleep(RETRY_S)

    async def _run(self) -> None:
        registered = False
        while not self.stopping:
            self.link = link = await self._connect()
            try:
                if not registered:
                    await self._register(link)
                    registered = True
                await together(self._heartbeats(link), self._metadata(link), self._outbox(link))
            except Reregister:
                registered = False
            except PeerUnavailable as exc:
                log.warning("controller_connection_lost", error=str(exc))
            except asyncio.CancelledError:
                link.close()
                raise
            link.close()
            await asyncio.sleep(RETRY_S)

    async def _register(self, link: PeerLink) -> None:
        node = self.node
        advertised = self.server.engines.advertised
        pmap = self.config["listener.security.protocol.map"]
        body = {"broker_id": node.node_id, "cluster_id": self.server.engines.cluster_id,
                "incarnation_id": self.incarnation, "rack": self.config["broker.rack"] or None,
                "listeners": [{"name": name, "host": h, "port": p, "security_protocol": SECURITY_PROTOCOLS[pmap[name]]}
                              for name, (h, p) in advertised.items()],
                "features": [{"name": "metadata.version", "min_supported_version": 7,
                              "max_supported_version": mr.METADATA_VERSION_LEVEL}],
                "is_migrating_zk_broker": False, "log_dirs": [], "previous_broker_epoch": -1}
        while not self.stopping:
            answer = await link.request(BROKER_REGISTRATION, body)
            if answer.error_code == 0:
                node.registered(answer.broker_epoch)
                log.info("broker_registered", broker_id=node.node_id, epoch=answer.broker_epoch)
                return
            log.info("broker_registration_refused", error=ErrorCode(answer.error_code).name)
            await asyncio.sleep(RETRY_S)

    async def _heartbeats(self, link: PeerLink) -> None:
        node = self.node
        interval = self.config["broker.heartbeat.interval.ms"] / 1000
        while True:
            answer = await link.request(BROKER_HEARTBEAT, {
                "broker_id": node.node_id, "broker_epoch": node.broker_epoch,
                "current_metadata_offset": node.metadata_offset, "want_fence": False,
                "want_shut_down": self.stopping})
            if answer.error_code in (ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED):
                log.warning("broker_registration_lost", error=ErrorCode(answer.error_code).name)
                raise Reregister()
            if answer.should_shut_down:
                return
            node.fenced = answer.is_fenced
            await asyncio.sleep(FENCED_HEARTBEAT_S if answer.is_fenced or self.stopping else interval)

    async def _metadata(self, link: PeerLink) -> None:
        """KRaft's observer: Fetch the metadata log from the controller, long polling."""
        node = self.node
        wait_ms = self.config["replica.fetch.wait.max.ms"]
        while True:
            answer = await link.request(FETCH, {
                "cluster_id": None, "replica_id": node.node_id,
                "replica_state": {"replica_id": node.node_id, "replica_epoch": node.broker_epoch},
                "max_wait_ms": wait_ms, "min_bytes": 1, "max_bytes": 8 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1,
                "topics": [{"topic": mr.METADATA_TOPIC, "topic_id": METADATA_TOPIC_ID, "partitions": [{
                    "partition": 0, "current_leader_epoch": -1, "fetch_offset": node.metadata_offset + 1,
                    "last_fetched_epoch": self.last_epoch, "log_start_offset": -1,
                    "partition_max_bytes": 8 << 20}]}],
                "forgotten_topics_data": [], "rack_id": ""}, timeout=wait_ms / 1000 + 30)
            part = answer.responses[0].partitions[0]
            if part.error_code != 0:
                log.warning("metadata_fetch_failed", error=ErrorCode(part.error_code).name)
                await asyncio.sleep(RETRY_S)
                continue
            records = part.records
            if records:
                node.apply(records, self.server.engines.clock(), part.high_watermark)
                self.last_epoch = mr.last_batch_epoch(records)
                self.server.engines.appends.notify(mr.METADATA_TOPIC, 0)
                self.server.cluster_changed()
            elif not node.caught_up and node.metadata_offset + 1 >= part.high_watermark:
                node.apply(b"", self.server.engines.clock(), part.high_watermark)
            if node.caught_up and not self.serving:
                self.serving = True
                await self.server.serve()  # clients are answered from now (Kafka's RUNNING state)

    async def _outbox(self, link: PeerLink) -> None:
        outbox = self.node.to_controller
        while True:
            item = await outbox.next()
            try:
                answer = await link.request(item.api, item.body, item.version)
            except PeerUnavailable:
                item.on_answer(None)
                raise
            item.on_answer(answer)

    async def stop(self) -> None:
        """Controlled shutdown, then the loops end."""
        self.stopping = True
        if self._task is None:
            return
        node = self.node
        if node.broker_epoch >= 0 and self.link is not None and not self.link.closed:
            try:
                await asyncio.wait_for(self._shut_down(self.link), SHUTDOWN_WAIT_S)
            except (asyncio.TimeoutError, PeerUnavailable):
                log.warning("controlled_shutdown_incomplete")
        self._task.cancel()
        node.to_controller.fail_all()

    async def _shut_down(self, link: PeerLink) -> None:
        node = self.node
        while True:
            answer = await link.request(BROKER_HEARTBEAT, {
                "broker_id": node.node_id, "broker_epoch": node.broker_epoch,
                "current_metadata_offset": node.metadata_offset, "want_fence": False, "want_shut_down": True})
            if answer.error_code != 0 or answer.should_shut_down:
                log.info("controlled_shutdown_done", broker_id=node.node_id)
                return
            await asyncio.sleep(FENCED_HEARTBEAT_S)
