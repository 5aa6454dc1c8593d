"""A cluster's partition leader asking another broker's transaction coordinator: AddPartitionsToTxn v4+.

The transactions engine (broker/txn/service.py ``ask_coordinator``) queues a
``verification.Ask`` when a transactional Produce, or a TxnOffsetCommit, names a
transactional id another broker coordinates. Here each Ask goes to its coordinator over a
peer link (one per coordinator, several requests in flight), as Kafka's
AddPartitionsToTxnManager sends them, and its answer goes back to the Ask: the parsed answer,
NETWORK_EXCEPTION when the coordinator could not be reached or did not answer in
request.timeout.ms, or None when it serves no AddPartitionsToTxn v4+ (Kafka then goes on
unverified).
"""

from __future__ import annotations

import asyncio

import structlog

from kipper.broker.peers import PeerLink, PeerUnavailable
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.add_partitions_to_txn import ADD_PARTITIONS_TO_TXN

log = structlog.get_logger(__name__)

BROKER_VERSIONS_SINCE = 4  # AddPartitionsToTxn v4+: the brokers' batched form
REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms, which its AddPartitionsToTxnManager uses


class TxnVerifier:
    def __init__(self, server):
        self.server = server
        self.links: dict[int, PeerLink] = {}
        self._connecting: dict[int, asyncio.Future] = {}
        self._task: asyncio.Task | None = None
        self._asks: set[asyncio.Task] = set()

    @property
    def engines(self):
        return self.server.engines

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        for task in [self._task, *self._asks]:
            if task is not None:
                task.cancel()
        for link in self.links.values():
            link.close()

    async def _run(self) -> None:
        queue = self.engines.txn.verifications
        while True:
            ask = await queue.next()
            task = asyncio.get_running_loop().create_task(self._ask(ask))
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)

    async def _ask(self, ask) -> None:
        try:
            answer = await self._send(ask.coordinator, ask.body)
        except PeerUnavailable as exc:
            log.info("txn_verification_not_delivered", coordinator=ask.coordinator, error=str(exc))
            answer = ErrorCode.NETWORK_EXCEPTION
        ask.answered(answer)

    async def _send(self, coordinator: int, body: dict):
        link = await self._link(coordinator)
        theirs = link.versions.get(ADD_PARTITIONS_TO_TXN.key)
        if theirs is None or theirs[1] < BROKER_VERSIONS_SINCE:
            log.warning("txn_verification_unsupported", coordinator=coordinator)
            return None
        version = max(link.version_for(ADD_PARTITIONS_TO_TXN), BROKER_VERSIONS_SINCE)
        return await link.request(ADD_PARTITIONS_TO_TXN, body, version=version,
                                  timeout=REQUEST_TIMEOUT_S)

    async def _link(self, node: int) -> PeerLink:
        """The open link to ``node``, opened once for the requests that wait for it."""
        link = self.links.get(node)
        if link is not None and not link.closed:
            return link
        pending = self._connecting.get(node)
        if pending is not None:
            return await asyncio.shield(pending)
        future = self._connecting[node] = asyncio.get_running_loop().create_future()
        try:
            endpoint = self.engines.cluster.endpoint(node, self.server.config["listeners"][0].name)
            if endpoint is None:
                raise PeerUnavailable(f"broker {node} has no live endpoint")
            link = self.links[node] = await PeerLink(
                *endpoint, client_id=f"txn-verifier-{self.engines.node_id}").connect()
            future.set_result(link)
            return link
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, PeerUnavailable) else PeerUnavailable(str(exc)))
            future.exception()  # (retrieved: the waiters, if any, get it too)
            raise
        finally:
            self._connecting.pop(node, None)
