"""Topic-partitions as their leader holds them, over storage/:

- ``partition``: the Partition and its one write path (``append``), owning its log storage,
  producer state (producer_state/) and transaction index (``txn_index``);
- ``partitions``: the factories of a topic's partitions (in memory, in log.dirs);
  ``recovery``: opening log.dirs at start;
- ``topics``: the topic registry; ``topic_configs``, ``effective``: Kafka's topic config
  table and a topic's values in effect;
- ``validate``: what a Produce's batch is checked against and rewritten to before the
  append (Kafka's LogValidator).
"""
