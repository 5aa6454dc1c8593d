"""``kipper share-consume``: read a topic as a member of a share group, like
kafka-console-share-consumer.sh. Records are accepted (or released/rejected
with --ack) and printed, optionally with their offset and delivery count."""

from __future__ import annotations

import argparse
import sys
import time

from kipper.cli.common import ToolError, add_bootstrap, add_command, connect
from kipper.client import admin
from kipper.client.share_acks import AcknowledgeType
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol.errors import KafkaError

ACKS = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE,
        "reject": AcknowledgeType.REJECT}


def add_parser(sub) -> None:
    p = add_command(sub, "share-consume", "consume a topic in a share group (queue semantics)",
                    "Read topics as a member of a share group (KIP-932), like "
                    "kafka-console-share-consumer.sh. A new share group starts at the log end "
                    "unless share.auto.offset.reset says earliest.")
    add_bootstrap(p)
    p.add_argument("--group", required=True, help="share group id")
    p.add_argument("--topic", required=True, action="append", help="topic, repeatable")
    p.add_argument("--ack", choices=sorted(ACKS), default="accept",
                   help="how every record is acknowledged")
    p.add_argument("--max-messages", type=int, default=-1, help="exit after this many records (-1: no limit)")
    p.add_argument("--timeout-ms", type=int, default=-1,
                   help="exit after this long without a record (-1: never)")
    p.add_argument("--print-offset", action="store_true", help="prefix partition:offset")
    p.add_argument("--print-delivery-count", action="store_true",
                   help="prefix the record's delivery count")
    p.set_defaults(func=run)


def _check_topics(bootstrap: str, topics: list[str]) -> None:
    """A share consumer of a topic that does not exist waits forever; say so at once."""
    with connect(bootstrap) as conn:
        for t in admin.metadata(conn, topics).topics:
            if t.error_code:
                raise ToolError(f"topic '{t.name}': {KafkaError(t.error_code, 'it does not exist')}")


def run(args: argparse.Namespace) -> int:
    _check_topics(args.bootstrap_server, args.topic)
    seen = 0
    out = sys.stdout.buffer
    ack = ACKS[args.ack]
    # explicit mode, so records past --max-messages go back to the group unprinted
    config = {"bootstrap.servers": args.bootstrap_server, "group.id": args.group,
              "client.id": "kipper-share-consume", "share.acknowledgement.mode": "explicit"}
    with ShareConsumer(config) as consumer:
        consumer.subscribe(args.topic)
        last = time.monotonic()
        try:
            while args.max_messages < 0 or seen < args.max_messages:
                batch = consumer.poll(0.5)
                if batch:
                    last = time.monotonic()
                elif args.timeout_ms >= 0 and (time.monotonic() - last) * 1000 > args.timeout_ms:
                    break
                for record in batch:
                    if 0 <= args.max_messages <= seen:
                        consumer.acknowledge(record, AcknowledgeType.RELEASE)
                        continue
                    prefix = b""
                    if args.print_offset:
                        prefix += f"{record.topic}-{record.partition}:{record.offset}\t".encode()
                    if args.print_delivery_count:
                        prefix += f"{record.delivery_count}\t".encode()
                    out.write(prefix + (record.value if record.value is not None else b"null") + b"\n")
                    consumer.acknowledge(record, ack)
                    seen += 1
                out.flush()
            consumer.commit_sync()
        except KeyboardInterrupt:
            pass
    print(f"Processed a total of {seen} messages", file=sys.stderr)
    return 0
