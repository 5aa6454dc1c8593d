"""``kipper produce`` and ``kipper consume``: console tools for people.

produce reads lines from stdin (optionally "key<sep>value"); consume prints
values (optionally keys) to stdout, like kafka-console-producer/consumer.
"""

from __future__ import annotations

import argparse
import sys
import time

from kipper.client.consumer import EARLIEST, LATEST, Consumer
from kipper.client.producer import Producer
from kipper.cli.perf import parse_props


def add_parsers(sub) -> None:
    p = sub.add_parser("produce", help="send lines from stdin as records")
    p.add_argument("--bootstrap-server", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--key-separator", default=None,
                   help="split each line into key and value at this separator")
    p.add_argument("--producer-prop", action="append", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=run_produce)

    c = sub.add_parser("consume", help="print records of a topic to stdout")
    c.add_argument("--bootstrap-server", required=True)
    c.add_argument("--topic", required=True)
    c.add_argument("--from-beginning", action="store_true")
    c.add_argument("--partition", type=int, action="append", default=None)
    c.add_argument("--max-messages", type=int, default=-1)
    c.add_argument("--timeout-ms", type=int, default=-1,
                   help="exit after this long without a record (-1: never)")
    c.add_argument("--print-key", action="store_true")
    c.add_argument("--key-separator", default="\t")
    c.set_defaults(func=run_consume)


def run_produce(args: argparse.Namespace) -> int:
    failures = []
    with Producer({"bootstrap.servers": args.bootstrap_server, **parse_props(args.producer_prop)}) as p:
        for line in sys.stdin.buffer:
            line = line.rstrip(b"\r\n")
            key = None
            if args.key_separator is not None:
                sep = args.key_separator.encode()
                if sep not in line:
                    print(f"kipper produce: no key separator in line: {line[:80]!r}", file=sys.stderr)
                    continue
                key, line = line.split(sep, 1)
            p.send(args.topic, line, key=key,
                   on_delivery=lambda err, meta: err is not None and failures.append(err))
        left = p.flush(60)
    for err in failures[:5]:
        print(f"kipper produce: delivery failed: {err}", file=sys.stderr)
    return 1 if failures or left else 0


def run_consume(args: argparse.Namespace) -> int:
    seen = 0
    out = sys.stdout.buffer
    with Consumer(args.bootstrap_server, args.topic, partitions=args.partition,
                  start=EARLIEST if args.from_beginning else LATEST) as c:
        last = time.monotonic()
        try:
            while args.max_messages < 0 or seen < args.max_messages:
                batch = c.poll(500)
                if batch:
                    last = time.monotonic()
                elif args.timeout_ms >= 0 and (time.monotonic() - last) * 1000 > args.timeout_ms:
                    break
                for _, r in batch:
                    if args.print_key:
                        out.write((r.key or b"null") + args.key_separator.encode())
                    out.write((r.value if r.value is not None else b"null") + b"\n")
                    seen += 1
                    if seen == args.max_messages:
                        break
                out.flush()
        except KeyboardInterrupt:
            pass
    print(f"Processed a total of {seen} messages", file=sys.stderr)
    return 0
