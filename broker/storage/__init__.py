"""Durable storage (``log.dirs``): Kafka's on-disk layout, segments, indexes,
checkpoints and recovery. Without ``log.dirs`` the broker keeps everything in
memory (broker/log/memory.py) and nothing here is used."""
