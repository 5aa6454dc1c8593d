"""kipper's client library: the pipelined Producer, a small Consumer, and the
blocking connection the command-line tools use."""

from kipper.client.batch import RecordMetadata  # noqa: E402
from kipper.client.producer import BufferExhausted, Producer  # noqa: E402

__all__ = ["Producer", "RecordMetadata", "BufferExhausted"]
from kipper.client.share_consumer import AcknowledgeType, ShareConsumer  # noqa: E402,F401
