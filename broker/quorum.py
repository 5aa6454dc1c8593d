"""Who leads what: the KRaft quorum of the cluster's metadata log (DescribeQuorum) and the
leaders of the topics' partitions (ElectLeaders), from one place.

This broker is a cluster of one node: the only voter of the quorum, its leader at epoch
1, and the leader of every partition, which is always its preferred leader, so no
election is ever needed (ELECTION_NOT_NEEDED, as a one-node Kafka answers). kipper has no
metadata log: its high watermark is 0. A cluster's controller supplies its own ``Quorum``
with the same two questions (broker/cluster/controller_quorum.py).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Callable

from kipper.protocol.errors import ErrorCode

METADATA_TOPIC = "__cluster_metadata"  # the name Kafka's DescribeQuorum asks about
PREFERRED, UNCLEAN = 0, 1  # ElectLeaders' election types (KIP-460)
NOT_NEEDED = "Leader election not needed for topic partition."  # Kafka's ELECTION_NOT_NEEDED message


@dataclass(frozen=True)
class Voter:
    node_id: int
    directory_id: uuid.UUID
    log_end_offset: int
    last_fetch_timestamp: int  # the leader's clock for the leader itself
    last_caught_up_timestamp: int
    endpoints: tuple[tuple[str, str, int], ...]  # (listener name, host, port)


@dataclass(frozen=True)
class QuorumState:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[Voter, ...]
    observers: tuple[Voter, ...] = ()


def directory_id(cluster_id: str, node_id: int) -> uuid.UUID:
    """A directory id that stays the same for this node of this cluster."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"kipper:{cluster_id}:{node_id}")


class Quorum:
    def __init__(self, node_id: int, cluster_id: str, topics, endpoints: Callable[[], dict]):
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.topics = topics
        self.endpoints = endpoints  # listener name -> (host, port), once bound
        self.directory_id = directory_id(cluster_id, node_id)

    def listeners(self) -> tuple[tuple[str, str, int], ...]:
        return tuple((name, host, port) for name, (host, port) in sorted(self.endpoints().items()))

    def state(self, now: int) -> QuorumState:
        me = Voter(self.node_id, self.directory_id, 0, now, now, self.listeners())
        return QuorumState(leader_id=self.node_id, leader_epoch=1, high_watermark=0, voters=(me,))

    def elect(self, election_type: int, wanted: list[tuple[str, list[int]]] | None
              ) -> list[tuple[str, list[tuple[int, ErrorCode, str | None]]]]:
        """(topic, [(partition, error, message)]) in Kafka's words. ``wanted`` None: every
        partition, where Kafka answers each topic with the partitions that needed an
        election (none here)."""
        if wanted is None:
            return [(t.name, []) for t in self.topics.all()]
        out = []
        for name, partitions in wanted:
            topic = self.topics.get(name)
            rows = []
            for p in partitions:
                if election_type not in (PREFERRED, UNCLEAN):
                    rows.append((p, ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}"))
                elif topic is None:
                    rows.append((p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}"))
                elif not 0 <= p < len(topic.partitions):
                    rows.append((p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{p}"))
                else:
                    rows.append((p, ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED))
            out.append((name, rows))
        return out
