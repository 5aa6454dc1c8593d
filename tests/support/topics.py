"""Create topics for a test through confluent-kafka's admin client, which any
of the brokers under test (kipper, Tansu, a proxy in front of either) serves."""

from __future__ import annotations


def create_topics(bootstrap: str, *topics: str, partitions: int = 3) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the results are in
    futures = admin.create_topics([NewTopic(t, num_partitions=partitions, replication_factor=1)
                                   for t in topics])
    for f in futures.values():
        f.result(15)
