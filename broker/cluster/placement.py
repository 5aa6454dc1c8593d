"""Where replicas go and who leads: replica placement and Kafka's election rules.

Placement is Kafka's rack-unaware assignment (AdminUtils.assignReplicasToBrokersRackUnaware):
partition p's first replica is broker (start + p) mod n, the others follow at a shift that
moves every n partitions, with a random start and shift per topic, so leaders and followers
spread over the live brokers.

``partition_change`` is Kafka's PartitionChangeBuilder for the classic rule (no eligible
leader replicas): the current leader stays if it is still acceptable and in the target ISR;
otherwise the first replica in assignment order that is; failing that, with unclean election
allowed, the first acceptable replica, whose ISR becomes itself alone; else no leader. An ISR
never becomes empty: a change that would empty it leaves it as it is. A leader change bumps
the leader epoch (the image does, from the record's leader field), and so does a reassignment
that drops a replica.
"""

from __future__ import annotations

import random
from typing import Callable

from kipper.protocol.metadata_records import NO_LEADER, NO_LEADER_CHANGE

ONLINE, UNCLEAN, PREFERRED = "online", "unclean", "preferred"


def assign_replicas(num_partitions: int, replication_factor: int, brokers: list[int],
                    first_partition: int = 0, rng: random.Random | None = None) -> list[list[int]]:
    """Replica lists for partitions first_partition.. of a topic (brokers sorted)."""
    rng = rng or random
    n = len(brokers)
    start = rng.randrange(n)
    shift = rng.randrange(n)
    out = []
    for p in range(first_partition, first_partition + num_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(replicas)
    return out


def elect(part, target_isr, acceptable: Callable[[int], bool], election: str = ONLINE,
          replicas=None) -> tuple[int, bool]:
    """(new leader, unclean) for ``part`` (a PartitionInfo) with ``target_isr``."""
    replicas = part.replicas if replicas is None else replicas
    valid = [r for r in replicas if r in target_isr and acceptable(r)]
    if election == PREFERRED:
        if valid and valid[0] == replicas[0]:
            return replicas[0], False
    if part.leader in target_isr and part.leader in replicas and acceptable(part.leader):
        return part.leader, False
    if valid:
        return valid[0], False
    if election == UNCLEAN:
        for r in replicas:
            if acceptable(r):
                return r, True
    return NO_LEADER, False


def partition_change(topic_id, index: int, part, *, acceptable: Callable[[int], bool],
                     target_isr=None, election: str = ONLINE, target_replicas=None,
                     adding=None, removing=None) -> dict | None:
    """The PartitionChangeRecord (as a dict) that brings ``part`` to the target, or None
    when nothing changes."""
    isr = list(part.isr if target_isr is None else target_isr)
    replicas = list(part.replicas if target_replicas is None else target_replicas)
    record = {"topic_id": topic_id, "partition_id": index, "leader": NO_LEADER_CHANGE,
              "isr": None, "replicas": None, "adding_replicas": None, "removing_replicas": None}
    if part.leader == NO_LEADER or not acceptable(part.leader) or part.leader not in isr \
            or election == PREFERRED or part.leader not in replicas:
        leader, unclean = elect(part, isr, acceptable, election, replicas)
        if leader != part.leader:
            record["leader"] = leader
            if unclean:
                record["isr"] = [leader]
    if record["isr"] is None and isr and tuple(isr) != part.isr:
        record["isr"] = isr
    if tuple(replicas) != part.replicas:
        record["replicas"] = replicas
        if record["leader"] == NO_LEADER_CHANGE and not set(part.replicas) <= set(replicas):
            record["leader"] = part.leader  # a replica is dropped: the leader epoch moves
    if adding is not None and tuple(adding) != part.adding:
        record["adding_replicas"] = list(adding)
    if removing is not None and tuple(removing) != part.removing:
        record["removing_replicas"] = list(removing)
    if all(record[k] is None for k in ("isr", "replicas", "adding_replicas", "removing_replicas")) \
            and record["leader"] == NO_LEADER_CHANGE:
        return None
    return record
