"""Where a partition's bytes live, the floor under the log: the ``LogStorage`` interface
a Partition writes through (log_storage.py), its in-memory implementation (memory_log.py,
the default), ``LogConfig`` (a topic's storage settings over the broker's), and durable
storage with ``log.dirs``: Kafka's on-disk layout, segments, indexes, checkpoints, the
metadata store. Nothing here knows of partitions, producers or groups."""
