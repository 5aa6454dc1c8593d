"""Share groups (KIP-932 as seed 004 drafts it): queues on top of topics.

- ``partition``: the SharePartition engine (record states, locks, SPSO/SPEO), sans-I/O.
- ``durable``, ``recovery``, ``store``: SHARE_CHECKPOINT/SHARE_DELTA control records in the
  topic-partition itself, the checkpoint index, recovery and the log-start floor.
- ``coordinator``, ``sessions``: share-group membership and share sessions.
- ``service``: the facade the handlers and the shell's timer use.
"""
