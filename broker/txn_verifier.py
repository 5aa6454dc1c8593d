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

import structlog

from kipper.broker.peers import PeerUnavailable, PeerWork
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.add_partitions_to_txn import ADD_PARTITIONS_TO_TXN

log = structlog.get_logger(__name__)

BROKER_VERSIONS_SINCE = 4  # AddPartitionsToTxn v4+: the brokers' batched form
REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms, which its AddPartitionsToTxnManager uses


class TxnVerifier(PeerWork):
    client_name = "txn-verifier"

    queue_name = "verifications"

    async def work(self, ask) -> None:
        try:
            answer = await self._send(ask.coordinator, ask.body)
        except PeerUnavailable as exc:
            log.info("txn_verification_not_delivered", coordinator=ask.coordinator, error=str(exc))
            answer = ErrorCode.NETWORK_EXCEPTION
        ask.answered(answer)

    async def _send(self, coordinator: int, body: dict):
        link = await self.link(coordinator)
        theirs = link.versions.get(ADD_PARTITIONS_TO_TXN.key)
        if theirs is None or theirs[1] < BROKER_VERSIONS_SINCE:
            log.warning("txn_verification_unsupported", coordinator=coordinator)
            return None
        version = max(link.version_for(ADD_PARTITIONS_TO_TXN), BROKER_VERSIONS_SINCE)
        return await link.request(ADD_PARTITIONS_TO_TXN, body, version=version,
                                  timeout=REQUEST_TIMEOUT_S)
