"""kafka-transactions against Kafka and kipper, with a transaction left open by a
transactional KafkaProducer in each broker's tool JVM (tests/java/kipper/ecosystem/
OpenTransaction.java): list, describe, describe-producers, find-hanging, abort (issue 30)."""

from __future__ import annotations

import re

from tests.java_ecosystem.tool_pair import column, only


def test_kafka_transactions_list_describe_find_hanging_and_abort(tools, tmp_path):
    topic, txn = tools.name("txn"), tools.name("txn-id")
    tx = ("kafka-transactions", "--bootstrap-server", "{bootstrap}")
    tools.create_topic(topic, 2)
    mine = only(txn)
    with tools.open_transaction(txn, topic, 3, tmp_path):
        # TransactionalId, Coordinator, ProducerId, TransactionState
        out = tools.same(*tx, "list", normalisers=(mine, column(2, "<pid>")), settle=10)
        assert re.search(rf"^{txn}\s+1\s+<pid>\s+Ongoing$", out.stdout, re.M), out.stdout
        tools.same(*tx, "list", "--transactional-id-pattern", re.escape(txn), normalisers=(column(2, "<pid>"),))
        tools.same(*tx, "list", "--duration-filter", "86400000", normalisers=(mine,))
        tools.same(*tx, "list", "--duration-filter", "0", normalisers=(mine, column(2, "<pid>")))
        # CoordinatorId, TransactionalId, ProducerId, ProducerEpoch, TransactionState, TransactionTimeoutMs,
        # CurrentTransactionStartTimeMs, TransactionDurationMs, TopicPartitions
        out = tools.same(*tx, "describe", "--transactional-id", txn,
                         normalisers=(column(2, "<pid>"), column(6, "<ms>"), column(7, "<ms>")))
        assert re.search(rf"Ongoing\s+600000\s+<ms>\s*<ms>\s*{topic}-0", out.stdout), out.stdout
        # ProducerId, ProducerEpoch, LatestCoordinatorEpoch, LastSequence, LastTimestamp,
        # CurrentTransactionStartOffset (describe-producers-timestamps is fixed: only ids and times vary)
        producers = (column(0, "<pid>"), column(4, "<ts>"))
        tools.same(*tx, "describe-producers", "--topic", topic, "--partition", "0", normalisers=producers)
        tools.same(*tx, "describe-producers", "--topic", topic, "--partition", "1")
        # Topic, Partition, ProducerId, ProducerEpoch, CoordinatorEpoch, StartOffset, LastTimestamp, Duration(min)
        tools.same(*tx, "find-hanging", "--broker-id", "1", normalisers=(only(topic),))
        tools.same(*tx, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0",
                   normalisers=(column(2, "<pid>"), column(6, "<ts>")))
        tools.same(*tx, "abort", "--topic", topic, "--partition", "1", "--start-offset", "0", exit=1)
        # an admin abort of the open transaction's partition: markers written by the tool
        tools.same(*tx, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
        tools.same(*tx, "describe-producers", "--topic", topic, "--partition", "0", normalisers=producers)
    tools.same(*tx, "describe", "--transactional-id", tools.name("nobody"), exit=1)
    tools.same(*tx, "list", "--transactional-id-pattern", re.escape(txn), normalisers=(column(2, "<pid>"),),
               settle=10)
    # what read_committed readers see: the aborted records are gone on both
    tools.same("kafka-console-consumer", "--bootstrap-server", "{bootstrap}", "--topic", topic, "--from-beginning",
               "--isolation-level", "read_committed", "--timeout-ms", "3000")
