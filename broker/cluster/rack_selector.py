"""KIP-392's preferred read replica: the replica a consumer in a rack should fetch from, as
Kafka's RackAwareReplicaSelector picks it on the leader (ReplicaManager.findPreferredReadReplica).

The candidates are the leader and the followers in the ISR whose logs hold the fetch offset.
A consumer that names no rack, or a rack none of them is in, reads from the leader; so does
one in the leader's rack. Otherwise the most caught-up candidate of its rack: the largest log
end, then the shortest time since it last caught up. A choice whose broker is not alive is no
choice (Kafka finds no endpoint for it).
"""

from __future__ import annotations

from typing import Callable

from kipper.broker.config_cluster import RACK_AWARE  # noqa: F401  (the selector's class name)


def preferred_read_replica(replica, client_rack: str | None, fetch_offset: int, now: int,
                           rack_of: Callable[[int], str | None]) -> int | None:
    """The broker id a consumer should read ``replica``'s partition from, when not this leader;
    None to read here. ``rack_of``: a live broker's rack (None for a broker that is gone)."""
    if not client_rack:
        return None
    leader = replica.local_id
    if rack_of(leader) == client_rack:
        return None
    best = None
    for broker_id, state in sorted(replica.followers.items()):
        if (broker_id in replica.isr and state.log_end_offset >= fetch_offset
                and state.log_start_offset <= fetch_offset and rack_of(broker_id) == client_rack):
            rank = (state.log_end_offset, -(now - state.last_caught_up_ms))
            if best is None or rank > best[0]:
                best = (rank, broker_id)
    return best[1] if best is not None else None
