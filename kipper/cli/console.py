"""``kipper produce`` and ``kipper consume``: console tools for people.

produce reads lines from stdin (optionally "key<sep>value"); consume prints
records to stdout, like kafka-console-producer/consumer, or in a kcat-style
``--format`` (-f). With ``--group`` consume is a member of a consumer group
(KIP-848: the broker assigns the partitions) and commits what it printed.
"""

from __future__ import annotations

import argparse
import sys
import time

from kipper.cli.common import ToolError, UsageError, add_bootstrap, add_command, check_reachable
from kipper.cli.perf import parse_props
from kipper.client.consumer import EARLIEST, LATEST, Consumer
from kipper.client.group_consumer import GroupConsumer
from kipper.client.producer import Producer

FORMAT_HELP = ("print each record with this format, as kcat -f: %%t topic, %%p partition, %%o offset, "
               "%%T timestamp (ms), %%k key, %%s value, %%K key length, %%S value length, %%h headers "
               "(k=v,...), %%%% a percent sign; \\n \\t \\r escapes. Example: '%%p:%%o %%k=%%s\\n'")


def add_parsers(sub) -> None:
    p = add_command(sub, "produce", "send lines from stdin as records",
                    "Send each line of stdin as one record, like kafka-console-producer.sh. The exit "
                    "code is 1 if a record was not delivered or a line had no key separator.")
    add_bootstrap(p)
    p.add_argument("--topic", required=True, help="the topic to write to")
    p.add_argument("--key-separator", default=None,
                   help="split each line into key and value at this separator (no key without it)")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="with --key-separator: report and skip a line without the separator, "
                        "instead of stopping with exit code 1")
    p.add_argument("--producer-prop", action="append", default=[], metavar="KEY=VALUE",
                   help="a producer property (Kafka's names), repeatable")
    p.set_defaults(func=run_produce)

    c = add_command(sub, "consume", "print records of a topic to stdout",
                    "Print the records of a topic, like kafka-console-consumer.sh (or kcat -C with "
                    "--format). Without --group it reads the partitions itself; with --group it joins "
                    "that consumer group and commits what it printed.")
    add_bootstrap(c)
    c.add_argument("--topic", required=True, help="the topic to read")
    c.add_argument("--group", help="consume as a member of this consumer group (KIP-848), committing "
                                   "offsets; partitions without a committed offset start at --offset")
    c.add_argument("--partition", type=int, action="append", default=None,
                   help="only this partition, repeatable (not with --group)")
    c.add_argument("--offset", default=None, metavar="beginning|end|N|-N",
                   help="where to start: the log start, the log end, offset N, or N before the end")
    c.add_argument("--from-beginning", action="store_true", help="same as --offset beginning")
    c.add_argument("--max-messages", type=int, default=-1, help="exit after this many records (-1: no limit)")
    c.add_argument("--timeout-ms", type=int, default=-1,
                   help="exit after this long without a record (-1: never)")
    c.add_argument("--print-key", action="store_true", help="print the key before the value")
    c.add_argument("--key-separator", default="\t",
                   help="what --print-key puts between key and value (default: %(default)r)")
    c.add_argument("-f", "--format", default=None, help=FORMAT_HELP)
    c.set_defaults(func=run_consume)


def run_produce(args: argparse.Namespace) -> int:
    failures = []
    check_reachable(args.bootstrap_server)  # not a silent max.block.ms wait for a broker that is down
    sep = args.key_separator.encode() if args.key_separator is not None else None
    bad_lines = 0
    with Producer({"bootstrap.servers": args.bootstrap_server, **parse_props(args.producer_prop)}) as p:
        for number, line in enumerate(sys.stdin.buffer, 1):
            line = line.rstrip(b"\r\n")
            key = None
            if sep is not None:
                if sep not in line:
                    bad_lines += 1
                    print(f"kipper produce: topic '{args.topic}': line {number} has no key separator "
                          f"{args.key_separator!r}: {line[:80]!r}", file=sys.stderr)
                    if args.skip_bad_lines:
                        continue
                    break
                key, line = line.split(sep, 1)
            p.send(args.topic, line, key=key,
                   on_delivery=lambda err, meta: err is not None and failures.append(err))
        left = p.flush(60)
    reasons: dict[str, int] = {}
    for err in failures:
        reasons[str(err)] = reasons.get(str(err), 0) + 1
    for reason, count in reasons.items():
        print(f"kipper produce: topic '{args.topic}': {count} record(s) not delivered: {reason}",
              file=sys.stderr)
    if left:
        print(f"kipper produce: topic '{args.topic}': {left} record(s) still unsent after 60 s",
              file=sys.stderr)
    return 1 if failures or left or (bad_lines and not args.skip_bad_lines) else 0


def _escape(fmt: str) -> str:
    return fmt.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")


def render(fmt: str, topic: str, partition: int, r) -> bytes:
    """One record in kcat's -f format."""
    out = bytearray()
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%" or i + 1 == len(fmt):
            out += c.encode()
            i += 1
            continue
        code = fmt[i + 1]
        i += 2
        if code == "t":
            out += topic.encode()
        elif code == "p":
            out += str(partition).encode()
        elif code == "o":
            out += str(r.offset).encode()
        elif code == "T":
            out += str(r.timestamp).encode()
        elif code == "k":
            out += r.key or b""
        elif code == "s":
            out += r.value or b""
        elif code == "K":
            out += str(-1 if r.key is None else len(r.key)).encode()
        elif code == "S":
            out += str(-1 if r.value is None else len(r.value)).encode()
        elif code == "h":
            out += b",".join((k.encode() if isinstance(k, str) else k) + b"=" + (v or b"")
                             for k, v in r.headers)
        elif code == "%":
            out += b"%"
        else:
            out += b"%" + code.encode()
    return bytes(out)


def _start(args) -> tuple[int, int | None]:
    """(EARLIEST or LATEST to open at, an offset to seek to: N >= 0, or -N from the end)."""
    offset = "beginning" if args.from_beginning and args.offset is None else (args.offset or "end")
    if offset in ("beginning", "earliest"):
        return EARLIEST, None
    if offset in ("end", "latest"):
        return LATEST, None
    try:
        n = int(offset)
    except ValueError:
        raise UsageError(f"--offset '{offset}' is not beginning, end, N or -N") from None
    return (EARLIEST, n) if n >= 0 else (LATEST, n)


def _open(args):
    start, seek = _start(args)
    if args.group:
        if args.partition:
            raise UsageError("--partition and --group do not go together: the group assigns partitions")
        if seek is not None:
            raise UsageError("--offset N with --group: reset the group's offsets with "
                             "kipper groups reset-offsets instead")
        return GroupConsumer(args.bootstrap_server, args.topic, args.group, start=start)
    consumer = Consumer(args.bootstrap_server, args.topic, partitions=args.partition, start=start)
    if seek is not None:
        for partition, position in list(consumer.positions.items()):
            consumer.seek(partition, seek if seek >= 0 else max(position + seek, 0))
    return consumer


def _rewind(consumer, unprinted) -> None:
    """Records fetched but not printed are read (and committed, in a group) again next time."""
    first: dict[int, int] = {}
    for partition, r in unprinted:
        first.setdefault(partition, r.offset)
    for partition, offset in first.items():
        consumer.seek(partition, offset)


def run_consume(args: argparse.Namespace) -> int:
    seen = 0
    out = sys.stdout.buffer
    fmt = _escape(args.format) if args.format is not None else None
    try:
        consumer = _open(args)
    except ValueError as exc:
        raise ToolError(f"topic '{args.topic}': {exc}") from None
    with consumer as c:
        last = time.monotonic()
        try:
            while args.max_messages < 0 or seen < args.max_messages:
                batch = c.poll(500)
                if batch:
                    last = time.monotonic()
                elif args.timeout_ms >= 0 and (time.monotonic() - last) * 1000 > args.timeout_ms:
                    break
                for i, (partition, r) in enumerate(batch):
                    if fmt is not None:
                        out.write(render(fmt, args.topic, partition, r))
                    else:
                        if args.print_key:
                            out.write((r.key or b"null") + args.key_separator.encode())
                        out.write((r.value if r.value is not None else b"null") + b"\n")
                    seen += 1
                    if seen == args.max_messages:
                        _rewind(c, batch[i + 1:])
                        break
                out.flush()
        except KeyboardInterrupt:
            pass
    print(f"Processed a total of {seen} messages", file=sys.stderr)
    return 0
