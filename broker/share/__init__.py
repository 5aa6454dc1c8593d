"""Share groups (KIP-932 as seed 004 drafts it): queues on top of topics.

- ``partition``, ``states``: the SharePartition engine (record states, locks, SPSO/SPEO),
  sans-I/O, and its table of allowed moves; ``log_view``: the log as it reads it.
- ``durable``, ``recovery``, ``store``, ``index_file``: SHARE_CHECKPOINT/SHARE_DELTA control
  records in the topic-partition itself, the checkpoint index and its snapshot file,
  recovery and the log-start floor.
- ``coordinator``, ``sessions``: share-group membership and share sessions.
- ``settings``, ``group_settings``: the broker's group.share.* keys, and each group's over them.
- ``service``: the facade the handlers and the shell's timer use.
"""
