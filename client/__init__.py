"""kipper's client library: the pipelined Producer, a small Consumer, and the
blocking connection the command-line tools use."""
