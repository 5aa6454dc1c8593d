"""What the tool generator does between commands, unrecorded, over kipper's own protocol
client: waits for both brokers to agree on the sequence's topics, and a sequence's cleanup."""

from __future__ import annotations

import time

from kipper.client.blocking import BlockingConnection

METADATA, DELETE_TOPICS, DELETE_ACLS, DELETE_GROUPS, INCREMENTAL_ALTER_CONFIGS = 3, 20, 31, 42, 44
CLIENT_METRICS, DELETE = 16, 1  # (a config resource type; IncrementalAlterConfigs' operation)
AGREE_WITHIN_S = 5.0


def connection(bootstrap: str) -> BlockingConnection:
    host, port = bootstrap.rsplit(":", 1)
    conn = BlockingConnection(host, int(port))
    conn.negotiate()
    return conn


def _topics(conn: BlockingConnection, token: str) -> dict:
    """The sequence's topics this broker knows: name -> (partitions, every leader known)."""
    answer = conn.request(METADATA, {"topics": None, "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False}, version=12)
    return {t.name: (len(t.partitions), all(p.error_code == 0 and p.leader_id >= 0 for p in t.partitions))
            for t in answer.topics if t.name and t.name.startswith(f"{token}-") and t.error_code == 0}


def topics_agree(run, token: str) -> None:
    """Wait (up to ``AGREE_WITHIN_S``) until both brokers list the same topics of the sequence,
    with the same partition counts and every partition led."""
    conns = [connection(r.bootstrap) for r in (run.kafka, run.kipper)]
    try:
        deadline = time.monotonic() + AGREE_WITHIN_S
        while True:
            kafka, kipper = (_topics(c, token) for c in conns)
            settled = kafka == kipper and all(led for _, led in kafka.values())
            if settled or time.monotonic() > deadline:
                return
            time.sleep(0.2)
    finally:
        for c in conns:
            c.close()


BROKER = 4
THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
             "replica.alter.log.dirs.io.max.bytes.per.second")


def cleanup(run, token: str) -> None:
    """The sequence's topics, groups, ACLs, client-metrics subscription and the replication
    throttles kafka-reassign-partitions set go (a long run makes thousands); best effort."""
    for ref in (run.kafka, run.kipper):
        try:
            conn = connection(ref.bootstrap)
        except OSError:
            continue
        try:
            names = sorted(_topics(conn, token))
            if names:
                conn.request(DELETE_TOPICS, {"topics": [{"name": n, "topic_id": None} for n in names],
                                             "topic_names": names, "timeout_ms": 10000}, version=6)
            conn.request(DELETE_GROUPS, {"groups_names": [f"{token}-g{i}" for i in range(2)]}, version=2)
            conn.request(INCREMENTAL_ALTER_CONFIGS, {"validate_only": False, "resources": [{
                "resource_type": CLIENT_METRICS, "resource_name": f"{token}-m", "configs": [
                    {"name": key, "config_operation": DELETE, "value": None}
                    for key in ("metrics", "interval.ms", "match")]}]}, version=1)
            conn.request(INCREMENTAL_ALTER_CONFIGS, {"validate_only": False, "resources": [{  # (--throttle's)
                "resource_type": BROKER, "resource_name": "1", "configs": [
                    {"name": key, "config_operation": DELETE, "value": None} for key in THROTTLES]}]}, version=1)
            conn.request(DELETE_ACLS, {"filters": [{
                "resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                "principal_filter": f"User:{token}-u0", "host_filter": None, "operation": 1, "permission_type": 1}]},
                version=3)
        except Exception:  # noqa: BLE001 - cleanup is best effort
            pass
        finally:
            conn.close()
