"""kafka-consumer-groups (classic and consumer-protocol groups) and kafka-share-groups against
Kafka and kipper, with live members: a KafkaConsumer or KafkaShareConsumer in each broker's
tool JVM (tests/java/kipper/ecosystem/GroupMember.java) (issue 30)."""

from __future__ import annotations

import re

import pytest

from tests.java_ecosystem.tool_pair import (columns_blank, listed_difference, member_epochs_blank, only, sorted_lines,
                                            usage_error)

def _topic_with_records(tools, name: str) -> str:
    topic = tools.name(name)
    base = tools.base_ms
    tools.create_topic(topic, 2)
    tools.produce(topic, 0, [[(b"a", f"a{i}".encode(), base + i * 1000) for i in range(4)]])
    tools.produce(topic, 1, [[(b"b", f"b{i}".encode(), base + i * 1000) for i in range(6)]])
    return topic


def rows_sorted(text: str) -> str:
    """Tables whose rows come in a hash map's order: header first, rows sorted."""
    out = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        if len(lines) > 2 and lines[0].startswith("GROUP"):
            block = "\n".join([lines[0], *sorted(lines[1:])])
        out.append(block)
    return "\n\n".join(out)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_kafka_consumer_groups_with_a_live_member_then_resets_and_deletes(tools, tmp_path, protocol):
    topic = _topic_with_records(tools, f"cg-{protocol}")
    group = tools.name(f"cg-{protocol}")
    cg = ("kafka-consumer-groups", "--bootstrap-server", "{bootstrap}")
    tables = (rows_sorted,)
    with tools.member(group, topic, protocol, "member-1", tmp_path):
        listed = tools.same(*cg, "--list", normalisers=(only(group),))
        assert group in listed.stdout
        tools.same(*cg, "--list", "--state", "stable", normalisers=(only(group),), settle=10)
        tools.same(*cg, "--list", "--type", protocol, normalisers=(only(group),))
        # the member reads and commits all 10 records: no lag
        out = tools.same(*cg, "--describe", "--group", group, normalisers=tables, settle=20)
        assert re.search(r"\b4 +4 +0 ", out.stdout) and re.search(r"\b6 +6 +0 ", out.stdout), out.stdout
        tools.same(*cg, "--describe", "--group", group, "--members", normalisers=tables, settle=10)
        assert listed_difference("group-assignment-off-the-heartbeat") is not None
        tools.same(*cg, "--describe", "--group", group, "--members", "--verbose",
                   normalisers=(rows_sorted, member_epochs_blank), settle=10)
        tools.same(*cg, "--describe", "--group", group, "--state", settle=10)
        tools.same(*cg, "--describe", "--group", group, "--state", "--verbose", normalisers=(member_epochs_blank,),
                   settle=10)
        tools.same(*cg, "--describe", "--group", group, "--offsets", "--verbose", normalisers=tables, settle=10)
        # offsets of a group with members cannot be reset, nor the group deleted
        tools.same(*cg, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute",
                   exit=None)
        tools.same(*cg, "--delete", "--group", group, exit=None)
        tools.same(*cg, "--delete-offsets", "--group", group, "--topic", topic, exit=None)
    # the member has left: the group is empty, its offsets stay; a record produced now is lag
    # (produced while the member lived, whether it read and committed it before leaving was a
    # race of its 200 ms poll against the stop file, which Kafka's member won and kipper's lost once)
    tools.produce(topic, 0, [[(b"a", b"late", tools.base_ms + 10_000)]])
    tools.same(*cg, "--describe", "--group", group, "--state", settle=15)
    out = tools.same(*cg, "--describe", "--group", group, normalisers=tables)
    assert "has no active members" in out.stderr
    reset = (*cg, "--reset-offsets", "--group", group)
    tools.same(*reset, "--topic", topic, "--to-earliest", "--dry-run", normalisers=tables)
    tools.same(*reset, "--topic", topic, "--to-earliest", "--execute", normalisers=tables)
    tools.same(*reset, "--topic", topic, "--to-latest", "--execute", normalisers=tables)
    tools.same(*reset, "--topic", f"{topic}:0", "--shift-by", "-2", "--execute", normalisers=tables)
    tools.same(*reset, "--topic", f"{topic}:1", "--shift-by", "100", "--execute", normalisers=tables)
    tools.same(*reset, "--all-topics", "--to-offset", "3", "--execute", normalisers=tables)
    tools.same(*reset, "--topic", topic, "--to-datetime", tools.iso(tools.base_ms + 2000), "--execute",
               normalisers=tables)
    tools.same(*reset, "--topic", topic, "--to-datetime", "2000-01-01T00:00:00.000", "--execute", normalisers=tables)
    tools.same(*reset, "--topic", topic, "--by-duration", "PT1H", "--execute", normalisers=tables)
    export = tools.same(*reset, "--topic", topic, "--to-current", "--export", "--dry-run", normalisers=(sorted_lines,))
    plan = tmp_path / "reset.csv"
    plan.write_text(f"{topic},0,1\n{topic},1,2\n")
    tools.same(*reset, "--from-file", str(plan), "--execute", normalisers=tables)
    tools.same(*cg, "--describe", "--group", group, "--offsets", normalisers=tables)
    assert export.stdout.count(topic) == 2
    tools.same(*reset, "--topic", topic, "--to-offset", "1", exit=None, normalisers=(usage_error,))  # neither --execute nor --dry-run
    tools.same(*reset, "--topic", topic, exit=1, normalisers=(usage_error,))
    tools.same(*cg, "--delete-offsets", "--group", group, "--topic", f"{topic}:1", normalisers=tables)
    tools.same(*cg, "--describe", "--group", group, "--offsets", normalisers=tables)
    tools.same(*cg, "--delete-offsets", "--group", group, "--topic", tools.name("not-a-topic"), exit=None,
               normalisers=tables)
    tools.same(*cg, "--delete", "--group", group)
    tools.same(*cg, "--describe", "--group", group, exit=None)
    tools.same(*cg, "--delete", "--group", group, exit=None)


def share_log_end_blank(text: str) -> str:
    """NEW-OFFSET and START-OFFSET at the log end: seed 004 keeps share-partition state as
    control records in the partition itself, so kipper's log ends later than Kafka's
    (KAFKA_DIFFERENCES.md share-state-in-the-partition). LAG is compared."""
    return columns_blank(text, "OFFSET", lambda name: name in ("NEW-OFFSET", "START-OFFSET"), "<log-end>")


def _share_group(tools, name: str) -> tuple[str, str]:
    topic = _topic_with_records(tools, name)
    group = tools.name(name)
    # read from the start (share.auto.offset.reset is a group config)
    tools.same("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "groups", "--entity-name", group,
               "--alter", "--add-config", "share.auto.offset.reset=earliest")
    return topic, group


def test_kafka_share_groups_with_a_live_member(tools, tmp_path):
    topic, group = _share_group(tools, "sg")
    sg = ("kafka-share-groups", "--bootstrap-server", "{bootstrap}")
    with tools.member(group, topic, "share", "share-member-1", tmp_path):
        tools.same(*sg, "--list", normalisers=(only(group),), settle=10)
        tools.same(*sg, "--list", "--state", "stable", normalisers=(only(group),), settle=10)
        tools.same(*sg, "--describe", "--group", group, "--members", normalisers=(rows_sorted,), settle=10)
        tools.same(*sg, "--describe", "--group", group, "--members", "--verbose",
                   normalisers=(rows_sorted, member_epochs_blank), settle=10)
        tools.same(*sg, "--describe", "--group", group, "--state", settle=10)
        tools.same(*sg, "--describe", "--group", group, "--state", "--verbose", normalisers=(member_epochs_blank,),
                   settle=10)
        tools.same(*sg, "--delete", "--group", group, exit=None)
    tools.same(*sg, "--describe", "--group", group, "--state", settle=15)
    tools.same(*sg, "--list", "--state", "empty", normalisers=(only(group),), settle=10)
    tools.same(*sg, "--delete", "--group", group)
    tools.same(*sg, "--describe", "--group", group, "--state", exit=None)
    tools.same(*sg, "--delete", "--group", group, exit=None)


def test_kafka_share_groups_offsets(tools, tmp_path):
    topic, group = _share_group(tools, "sg-offsets")
    sg = ("kafka-share-groups", "--bootstrap-server", "{bootstrap}")
    with tools.member(group, topic, "share", "share-member-1", tmp_path):
        pass  # it polls (and accepts what it gets) until it leaves
    tools.same(*sg, "--describe", "--group", group, normalisers=(rows_sorted,), settle=10)
    tools.same(*sg, "--describe", "--group", group, "--offsets", "--verbose", normalisers=(rows_sorted,))
    reset = (*sg, "--reset-offsets", "--group", group, "--topic", topic)
    tools.same(*reset, "--to-earliest", "--dry-run", normalisers=(rows_sorted,))
    tools.same(*reset, "--to-earliest", "--execute", normalisers=(rows_sorted,))
    tools.same(*reset, "--to-latest", "--execute", normalisers=(rows_sorted, share_log_end_blank))
    tools.same(*sg, "--describe", "--group", group, "--offsets", normalisers=(rows_sorted, share_log_end_blank))
    tools.same(*reset, "--to-datetime", tools.iso(tools.base_ms + 2000), "--execute", normalisers=(rows_sorted,))
    tools.same(*sg, "--describe", "--group", group, "--offsets", normalisers=(rows_sorted,))
    tools.same(*sg, "--delete-offsets", "--group", group, "--topic", topic, normalisers=(rows_sorted,))
    tools.same(*sg, "--describe", "--group", group, "--offsets", normalisers=(rows_sorted,))


def test_share_consumers_closing_in_implicit_mode(tools):
    # Kafka 4.4's KafkaShareConsumer, implicit acknowledgement (its default): what one poll
    # returned is accepted by the next poll, and released by a close that comes first (the
    # client sends no acknowledgement for it), so the group delivers it again, on Kafka as on
    # kipper (issue 36, item 19)
    topic, group = tools.name("sg-close"), tools.name("sg-close")
    tools.create_topic(topic, 1)
    tools.same("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "groups", "--entity-name", group,
               "--alter", "--add-config", "share.auto.offset.reset=earliest")
    tools.produce(topic, 0, [[(b"k", f"v{i}".encode(), tools.base_ms + i) for i in range(20)]])
    read = ("kipper.ecosystem.ShareReadThenClose", "{bootstrap}", group, topic)
    out = tools.same(*read, "20", normalisers=(rows_sorted,))
    assert out.stdout == "partition 0 delivery 1: 20"
    sg = ("kafka-share-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", group)
    tools.same(*sg, normalisers=(rows_sorted,), settle=10)  # released by the close: a lag of 20
    out = tools.same(*read, "20", "poll-again", normalisers=(rows_sorted,))
    assert out.stdout == "partition 0 delivery 2: 20\npolled again, records: 0"
    out = tools.same(*sg, normalisers=(rows_sorted,), settle=10)  # accepted by the second poll: no lag
    assert re.search(r"\b0\s*$", out.stdout.splitlines()[-1]), out.stdout
