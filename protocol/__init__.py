"""kipper's sans-I/O Kafka protocol layer: bytes in, typed messages out.

Nothing here touches sockets or event loops; the broker, the client and the
tests all share it.
"""
