"""The generator (issue 36): property-based differential testing against Apache Kafka.

Hypothesis draws sequences of requests, each of any API kipper advertises at any version it
supports, with bodies walked from kipper's own declarations in protocol/messages (which mirror
Kafka's JSON schemas) and values from a small table of interesting ones per field name
(values.py). A value that must be one broker's own (a producer id it issued, a member's epoch,
a fetch session) is a symbol, resolved on each broker from what that broker answered before
(symbols.py). Each step goes to both brokers and their answers are compared with the
conformance suite's normaliser and allowed differences (machine.py); a difference shrinks to
its shortest sequence and is written out as steps a named scenario replays (findings.py,
tests/conformance/scenarios/generated.py). ``python -m tests.conformance.fuzz`` is the long run.
"""
