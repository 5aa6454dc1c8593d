"""The broker config keys of a kipper cluster (docs/CLUSTER.md): Kafka's names and defaults,
as (name, parse, default, doc) rows that ``config.KEYS`` declares in its "cluster" section."""

from __future__ import annotations

from kipper.broker.config_values import boolean, choice, int_in, string

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"  # replica.selector.class
_INT32 = 2**31 - 1
_INT64 = 2**63 - 1

CLUSTER_KEYS = (
    ("process.roles", choice("", "broker", "controller"), "",
     "Empty: one node that is the whole cluster. broker or controller: a node of a kipper "
     "cluster (`kipper cluster`), whose metadata comes from the controller."),
    ("controller.quorum.bootstrap.servers", string, "",
     "host:port of the controller (process.roles=broker)."),
    ("broker.session.timeout.ms", int_in(1, _INT32), 9000,
     "A broker without a heartbeat for this long is fenced: its leaderships move."),
    ("broker.heartbeat.interval.ms", int_in(1, _INT32), 2000,
     "How often a broker heartbeats to the controller."),
    ("replica.lag.time.max.ms", int_in(1, _INT64), 30000,
     "A follower that has not caught up for this long leaves the ISR."),
    ("replica.fetch.wait.max.ms", int_in(0, _INT32), 500,
     "Longest a follower's (and the metadata) Fetch waits at the leader."),
    ("replica.fetch.max.bytes", int_in(0, _INT32), 1048576,
     "Bytes a follower's Fetch asks for per partition."),
    ("replica.fetch.response.max.bytes", int_in(0, _INT32), 10485760,
     "Bytes a follower's Fetch asks for in all."),
    ("replica.fetch.backoff.ms", int_in(0, _INT32), 1000,
     "Pause of a follower after a failed Fetch."),
    ("default.replication.factor", int_in(1, 32767), 1,
     "Replicas of a topic created with replication factor -1 (and auto-created ones)."),
    ("offsets.topic.replication.factor", int_in(1, 32767), 3,
     "Replicas of __consumer_offsets, made when a group coordinator is first looked up."),
    ("transaction.state.log.replication.factor", int_in(1, 32767), 3,
     "Replicas of __transaction_state, made when a transaction coordinator is first looked up."),
    ("broker.rack", string, "",
     "This broker's rack: registered with the controller and named in Metadata; a consumer "
     "that names the same rack reads from a replica here when replica.selector.class says so."),
    ("replica.selector.class", choice("", RACK_AWARE), "",
     "Empty: consumers read from the leader (or the follower they choose). Kafka's "
     "RackAwareReplicaSelector: the leader points a consumer that names its rack (client.rack) "
     "to an in-sync replica in that rack (KIP-392's preferred read replica)."),
    ("auto.leader.rebalance.enable", boolean, True,
     "The controller moves leadership back to the preferred replica every "
     "leader.imbalance.check.interval.seconds."),
    ("leader.imbalance.check.interval.seconds", int_in(1, _INT64), 300,
     "How often the controller looks for partitions led by another than the preferred replica."),
)
