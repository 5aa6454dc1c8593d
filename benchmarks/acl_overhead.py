"""What the authorizer costs on the ingest path: kipper without an authorizer against kipper
with ``authorizer.class.name=standard`` and 10,000 ACLs (mostly PREFIXED), in one run.

    .venv/bin/python -m benchmarks.acl_overhead [--records 1000000] [--acls 10000] [--rounds 2]

The ACLs are written to ``acls.json`` in the broker's config directory before it
starts (the file the broker keeps them in; see docs/SECURITY.md). The producer
connects over PLAINTEXT as ``User:ANONYMOUS``, which is not a super user: every
Produce is authorized against the full set, through the per-session decision
cache. The rounds alternate off/on so that drift in the machine's load hits both.
Printed: records/s and broker CPU s per million records per pass, and the CPU
ratio on/off (goal: at most 1.05x).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import timeit

from benchmarks.broker_ingest import TOPIC, run_against
from kipper.broker.acl.model import (ALLOW, CLUSTER, CLUSTER_NAME, CREATE, DENY, DESCRIBE, GROUP,
                                     IDEMPOTENT_WRITE, LITERAL, PREFIXED, READ, TOPIC as TOPIC_TYPE,
                                     WRITE)
from kipper.broker.acl.service import Acls
from kipper.broker.config import load as load_config
from kipper.broker.context import Session
from tests.support.broker import BrokerProcess


def acl_rows(count: int) -> list[list]:
    """``count`` ACLs: the producer's own grants plus others' rules, nine in ten PREFIXED,
    some of them on prefixes of the benchmark's topic name so that matching has work to do."""
    me = "User:ANONYMOUS"
    rows = [[TOPIC_TYPE, TOPIC[:3], PREFIXED, me, "*", WRITE, ALLOW],
            [TOPIC_TYPE, TOPIC, LITERAL, me, "*", CREATE, ALLOW],
            [TOPIC_TYPE, TOPIC, LITERAL, me, "*", DESCRIBE, ALLOW],
            [GROUP, "ingest-", PREFIXED, me, "*", READ, ALLOW],
            [CLUSTER, CLUSTER_NAME, LITERAL, me, "*", CREATE, ALLOW],
            [CLUSTER, CLUSTER_NAME, LITERAL, me, "*", IDEMPOTENT_WRITE, ALLOW]]
    i = 0
    while len(rows) < count:
        user = f"User:team{i % 200}"
        if i % 10 == 9:
            rows.append([TOPIC_TYPE, f"team{i}.events", LITERAL, user, "*", READ, ALLOW])
        elif i % 50 == 7:  # rules on prefixes of the topic, for someone else
            rows.append([TOPIC_TYPE, TOPIC[: 1 + i % len(TOPIC)], PREFIXED, user, "*", WRITE, DENY])
        else:
            rows.append([TOPIC_TYPE, f"team{i}.", PREFIXED, user, "*", (READ, WRITE)[i % 2], ALLOW])
        i += 1
    return rows


def decision_costs(count: int) -> tuple[float, float]:
    """Microseconds per WRITE decision on the benchmark's topic with ``count`` ACLs: answered
    from the session's cache (every Produce after the first) and computed afresh."""
    with tempfile.TemporaryDirectory(prefix="kipper-acl-bench-") as config_dir:
        with open(os.path.join(config_dir, "acls.json"), "w") as f:
            json.dump({"version": 1, "acls": acl_rows(count)}, f)
        acls = Acls(load_config(overrides={"authorizer.class.name": "standard"}), config_dir)
    session = Session(listener="PLAINTEXT", peer="127.0.0.1:5000")
    assert acls.authorize(session, WRITE, TOPIC_TYPE, TOPIC)
    n = 100_000
    cached = timeit.timeit(lambda: acls.authorize(session, WRITE, TOPIC_TYPE, TOPIC), number=n) / n
    fresh = timeit.timeit(lambda: acls.authorizer.authorize(session.principal, "127.0.0.1", WRITE,
                                                            TOPIC_TYPE, TOPIC), number=n // 10) / (n // 10)
    return cached * 1e6, fresh * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description="broker ingest CPU with and without the authorizer")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--acls", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    print(f"{args.records:,} records of {args.size} bytes, acks=1, 1 confluent-kafka producer; "
          f"authorizer off vs standard with {args.acls:,} ACLs, {args.rounds} round(s)", flush=True)
    cached, fresh = decision_costs(args.acls)
    print(f"one WRITE decision with {args.acls:,} ACLs: {cached:.2f} us from the session cache, "
          f"{fresh:.2f} us computed", flush=True)
    cpu = {"off": [], "on": []}
    for _ in range(args.rounds):
        for mode in ("off", "on"):
            with tempfile.TemporaryDirectory(prefix="kipper-acl-bench-") as config_dir:
                overrides = {"log.level": "WARNING", "config.dir": config_dir}
                if mode == "on":
                    overrides["authorizer.class.name"] = "standard"
                    with open(os.path.join(config_dir, "acls.json"), "w") as f:
                        json.dump({"version": 1, "acls": acl_rows(args.acls)}, f)
                with BrokerProcess(overrides) as broker:
                    r = run_against(f"acl {mode}", broker, args.records, args.size, 1, 1)
                cpu[mode].append(r["broker_cpu_s_per_million"])
    off, on = sum(cpu["off"]) / len(cpu["off"]), sum(cpu["on"]) / len(cpu["on"])
    print(f"broker CPU per million records: off {off:.3f} s, on {on:.3f} s, on/off {on / off:.3f}x")


if __name__ == "__main__":
    main()
