"""Capture the admin request frames real clients send, as golden test data.

Usage: .venv/bin/python scripts/capture_golden_admin.py [--client NAME ...] [--out tests/golden/admin]

The same recording proxy as scripts/capture_golden.py: the broker advertises the
proxy, and each client's admin client creates a topic, grows it, changes and
describes its configs, commits and deletes a group's offsets, deletes the group,
describes the cluster, and (kafka-python) the log dirs, the producers and the
transactions of an open transaction. The frames of the admin APIs (``ADMIN_APIS``)
go to <out>/<client>/<ApiName>_v<version>.hex, replacing what was there;
tests/golden/test_golden_admin_frames.py reads them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.capture_golden import RecordingProxy, decode  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

CLIENTS = ("confluent-kafka", "aiokafka", "kafka-python")
ADMIN_APIS = {"AlterConfigs", "DescribeLogDirs", "CreatePartitions", "DeleteGroups", "OffsetDelete",
              "DescribeCluster", "DescribeProducers", "DescribeTransactions", "ListTransactions"}
PARTITIONS, GROWN = 1, 3


def names(client: str) -> dict:
    """Deterministic names, shared with the tests' expectations."""
    return {"client_id": f"golden-{client}", "topic": f"golden-admin-{client}",
            "group": f"golden-admin-group-{client}", "txn": f"golden-admin-txn-{client}"}


def _commit(bootstrap: str, group: str, topic: str) -> None:
    """Offsets for the group, committed by kipper's own builder (not captured)."""
    from kipper.client.blocking import connect_any
    from kipper.client.consumer_requests import offset_commit

    with connect_any(bootstrap) as conn:
        offset_commit(conn, group, {(topic, 0): 0})


def drive_confluent_kafka(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

    n = names("confluent-kafka")
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": n["client_id"]})
    admin.create_topics([NewTopic(n["topic"], PARTITIONS, 1)])[n["topic"]].result(15)
    admin.create_partitions([NewPartitions(n["topic"], GROWN)])[n["topic"]].result(15)
    resource = ConfigResource(ConfigResource.Type.TOPIC, n["topic"], set_config={"retention.ms": "60000"})
    admin.alter_configs([resource])[resource].result(15)
    _commit(bootstrap, n["group"], n["topic"])  # (its Python API has no OffsetDelete)
    admin.delete_consumer_groups([n["group"]])[n["group"]].result(15)
    admin.describe_cluster(include_authorized_operations=True).result(15)


def drive_kafka_python(bootstrap: str) -> None:
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    n = names("kafka-python")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=n["client_id"])
    admin.create_topics([NewTopic(n["topic"], PARTITIONS, 1)])
    admin.create_partitions({n["topic"]: GROWN})
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, n["topic"],
                                        configs={"retention.ms": "60000"})], incremental=False)
    _commit(bootstrap, n["group"], n["topic"])
    admin.delete_group_offsets(n["group"], [TopicPartition(n["topic"], 0)])
    admin.delete_groups([n["group"]])
    admin.describe_cluster()
    admin.describe_log_dirs({n["topic"]: [0]})
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=n["txn"])
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(n["topic"], b"x", partition=0).get(10)
    admin.describe_producers([TopicPartition(n["topic"], 0)])
    admin.describe_transactions([n["txn"]])
    admin.list_transactions(state_filters=["Ongoing"])
    producer.abort_transaction()
    producer.close()
    admin.close()


def drive_aiokafka(bootstrap: str) -> None:
    asyncio.run(_drive_aiokafka(bootstrap))


async def _drive_aiokafka(bootstrap: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    n = names("aiokafka")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id=n["client_id"])
    await admin.start()
    try:
        await admin.create_topics([NewTopic(n["topic"], PARTITIONS, 1)])
        await admin.create_partitions({n["topic"]: NewPartitions(GROWN)})
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, n["topic"],
                                                  configs={"retention.ms": "60000"})])
    finally:
        await admin.close()


DRIVERS = {"confluent-kafka": drive_confluent_kafka, "aiokafka": drive_aiokafka,
           "kafka-python": drive_kafka_python}


def choose(client: str, frames: list[bytes]) -> dict:
    """One frame per admin (api, version) the client sent, the largest."""
    client_id = names(client)["client_id"]
    chosen: dict[tuple[str, int], bytes] = {}
    for frame in frames:
        decoded = decode(frame)
        if decoded is None:
            continue
        api, version, header, _ = decoded
        if api.name in ADMIN_APIS and header.get("client_id") == client_id:
            if len(frame) > len(chosen.get((api.name, version), b"")):
                chosen[(api.name, version)] = frame
    return chosen


def write(out: Path, client: str, chosen: dict) -> None:
    folder = out / client
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.hex"):
        old.unlink()
    for (name, version), frame in sorted(chosen.items()):
        (folder / f"{name}_v{version}.hex").write_text(frame.hex() + "\n")
    print(f"{client}: {', '.join(f'{n}_v{v}' for n, v in sorted(chosen))}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", action="append", choices=CLIENTS,
                        help="capture only this client (repeatable); default: all")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden" / "admin")
    args = parser.parse_args(argv)
    proxy = RecordingProxy().start()
    broker = BrokerProcess(advertise=("127.0.0.1", proxy.port))
    proxy.upstream = ("127.0.0.1", broker.port)
    broker.start()
    try:
        for client in args.client or CLIENTS:
            proxy.take()
            DRIVERS[client](f"127.0.0.1:{proxy.port}")
            time.sleep(0.5)  # let the last frames of closing connections arrive
            write(args.out, client, choose(client, proxy.take()))
    finally:
        broker.stop()
        proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
