"""The log cleaner: compaction of topics with ``cleanup.policy=compact`` (Kafka's LogCleaner)."""
