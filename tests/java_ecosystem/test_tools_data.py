"""kafka-console-producer/-consumer, kafka-get-offsets, kafka-delete-records, kafka-log-dirs,
and the perf-test tools against Kafka and kipper (issue 30); kafka-features is in
test_tools_telemetry.py."""

from __future__ import annotations

import json
import re

from tests.java_ecosystem.tool_pair import listed_difference, sorted_lines, without_lines

# keyed records with headers; the console producer reads them as "headers|key:value"
LINES = "h1:v1,h2:v2|k1:value-1\nh1:x|k2:value-2\nh3:y|k1:value-3\n|k3:no-headers\n"
READER = ("--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
          "--reader-property", "parse.headers=true", "--reader-property", "headers.delimiter=|",
          "--reader-property", "null.marker=")
SHOW = ("--formatter-property", "print.key=true", "--formatter-property", "print.headers=true",
        "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true")


def test_console_producer_and_consumer_with_keys_headers_and_groups(tools):
    topic, group = tools.name("console"), tools.name("console-group")
    bs = "{bootstrap}"
    tools.create_topic(topic, 2)
    tools.same("kafka-console-producer", "--bootstrap-server", bs, "--topic", topic, *READER, stdin=LINES)
    # a line the reader cannot parse ends the producer with an error, the same on both
    tools.same("kafka-console-producer", "--bootstrap-server", bs, "--topic", topic, *READER,
               stdin="no-separator-here\n", exit=1)
    out = tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--from-beginning",
                     "--max-messages", "4", "--timeout-ms", "20000", *SHOW,
                     normalisers=(sorted_by_partition_and_offset,))
    assert "h1:v1,h2:v2\tk1\tvalue-1" in out.stdout and "Processed a total of 4 messages" in out.stderr
    # a group reads everything once, commits, and a second run of the group reads nothing more
    out = tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--group", group,
                     "--from-beginning", "--max-messages", "4", "--timeout-ms", "20000",
                     "--formatter-property", "print.timestamp=true", "--formatter-property", "print.key=true",
                     normalisers=(sorted_lines_of_stdout,))
    assert out.stdout.count("CreateTime:<ts>") == 4
    tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--group", group,
               "--timeout-ms", "3000")
    tools.same("kafka-console-producer", "--bootstrap-server", bs, "--topic", topic, "--command-property", "acks=all",
               "--command-property", "compression.type=zstd", stdin="late-1\nlate-2\n")
    out = tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--group", group,
                     "--max-messages", "2", "--timeout-ms", "20000", normalisers=(sorted_lines_of_stdout,))
    assert out.stdout.split() == ["late-1", "late-2"]
    # one partition from an offset, and a regex subscription (--include)
    tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--partition", "1",
               "--offset", "1", "--max-messages", "1", "--timeout-ms", "20000", *SHOW)
    tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--include", re.escape(topic) + "$",
               "--from-beginning", "--max-messages", "6", "--timeout-ms", "20000",
               normalisers=(sorted_lines_of_stdout,))
    tools.same("kafka-console-consumer", "--bootstrap-server", bs, "--topic", topic, "--partition", "9",
               "--offset", "0", "--timeout-ms", "2000", exit=None)


def sorted_by_partition_and_offset(text: str) -> str:
    lines = text.splitlines()
    rows = sorted(line for line in lines if line.startswith("Partition:"))
    return "\n".join(rows + [line for line in lines if not line.startswith("Partition:")])


def sorted_lines_of_stdout(text: str) -> str:
    """Records of several partitions interleave as fetches return them."""
    if "Processed a total" in text:
        return text  # stderr
    return "\n".join(sorted(text.splitlines()))


def test_get_offsets_delete_records_and_log_dirs(tools):
    topic = tools.name("offsets")
    bs = "{bootstrap}"
    tools.create_topic(topic, 2)
    # batches with set timestamps (the largest twice: max-timestamp finds the first of them)
    base = tools.base_ms
    tools.produce(topic, 0, [[(b"k", b"v0", base), (b"k", b"v1", base + 5)], [(b"k", b"v2", base + 9)],
                             [(b"k", b"v3", base + 9), (b"k", b"v4", base + 2)]])
    tools.produce(topic, 1, [[(b"k", f"w{i}".encode(), base + 100 + i) for i in range(7)]])
    offsets = ("kafka-get-offsets", "--bootstrap-server", bs)
    for time in ("-1", "-2", "-3", "-4", "-5", "latest", "earliest", "max-timestamp", "earliest-local",
                 "latest-tiered", "0", str(base + 3), str(base + 9), str(base + 103), "99999999999999"):
        tools.same(*offsets, "--topic", topic, "--time", time)
    tools.same(*offsets, "--topic-partitions", f"{topic}:0,{topic}:1")
    tools.same(*offsets, "--topic-partitions", f"{topic}:1-")
    tools.same(*offsets, "--topic", tools.name("nothing-here"), exit=1)
    tools.same(*offsets, "--topic", topic, "--time", "sometime", exit=1, normalisers=(first_line,))
    tools.same(*offsets, "--topic", topic, "--exclude-internal-topics")

    # kipper_reference keeps its log in memory: one directory, "memory:" (docs/ADMIN.md); the
    # sizes are the stored batches', the same bytes on both
    out = tools.same("kafka-log-dirs", "--bootstrap-server", bs, "--describe", "--topic-list", topic,
                     normalisers=(log_dir_named,))
    report = json.loads(out.stdout.splitlines()[-1])
    partitions = report["brokers"][0]["logDirs"][0]["partitions"]
    assert sorted((p["partition"], p["size"] > 0) for p in partitions) == [(f"{topic}-0", True), (f"{topic}-1", True)]
    tools.same("kafka-log-dirs", "--bootstrap-server", bs, "--describe", "--broker-list", "7",
               "--topic-list", topic, exit=1)

    plan = tools.log_dir / f"delete-{topic}.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": 1},
                                                             {"topic": topic, "partition": 1, "offset": 99}]}))
    out = tools.same("kafka-delete-records", "--bootstrap-server", bs, "--offset-json-file", str(plan),
                     normalisers=(sorted_lines,))  # the partitions come in a hash map's order
    assert "OffsetOutOfRangeException" in out.stdout and "low_watermark: 1" in out.stdout
    tools.same(*offsets, "--topic", topic, "--time", "-2")
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": -1}]}))
    tools.same("kafka-delete-records", "--bootstrap-server", bs, "--offset-json-file", str(plan))
    tools.same(*offsets, "--topic", topic)
    tools.same(*offsets, "--topic", topic, "--time", "earliest")
    # Kafka keeps the deleted records' bytes in its active segment until it rolls; kipper's
    # memory log lets them go (KAFKA_DIFFERENCES.md log-dir-size-after-delete-records)
    assert listed_difference("log-dir-size-after-delete-records") is not None
    tools.same("kafka-log-dirs", "--bootstrap-server", bs, "--describe", "--topic-list", topic,
               normalisers=(log_dir_named, lambda t: re.sub(r'"size":\d+', '"size":<n>', t)))


def first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def log_dir_named(text: str) -> str:
    return re.sub(r'"logDir":"[^"]*"', '"logDir":"<dir>"', text)


def test_producer_and_consumer_perf_tests_run(tools):
    # the figures (kipper beside Kafka, several rounds) come from benchmarks/kafka_perf_tools.py
    topic = tools.name("perf")
    tools.create_topic(topic, 1)
    figures = re.compile(r"[\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency"
                         r"(, \d+ ms \d+(\.\d+)?th)*")
    out = tools.same("kafka-producer-perf-test", "--topic", topic, "--num-records", "20000", "--record-size", "100",
                     "--throughput", "-1", "--bootstrap-server", "{bootstrap}",
                     "--command-property", "acks=all",
                     normalisers=(without_lines(r"max latency\.$"), lambda t: figures.sub("<figures>", t)))
    assert out.stdout.startswith("20000 records sent, <figures>")
    out = tools.same("kafka-consumer-perf-test", "--bootstrap-server", "{bootstrap}", "--topic", topic,
                     "--num-records", "20000", "--timeout", "60000", normalisers=(consumer_figures,))
    assert out.stdout.splitlines()[-1] == "<time>, <time>, 1.9073, <n>, 20000, <n>, <n>, <n>, <n>, <n>"


def consumer_figures(text: str) -> str:
    """start, end, MB, MB/s, records, records/s, rebalance ms, fetch ms, fetch MB/s, fetch records/s:
    keep the amounts, blank the rates and times."""
    def blank(m: re.Match) -> str:
        cells = m.group(0).split(", ")
        return ", ".join(c if i in (0, 1, 2, 4) else "<n>" for i, c in enumerate(cells))
    return re.sub(r"^<time>, <time>, .*$", blank, text, flags=re.M)
