"""Admin request frames captured from real clients decode to what the client meant.

The .hex files under admin/ were written by scripts/capture_golden_admin.py (one
frame per client, API and version). Each must decode with protocol.messages,
carry the names the capture used, and re-encode to exactly the captured bytes.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kipper.protocol.header import REQUEST_HEADERS
from kipper.protocol.messages import APIS

HERE = Path(__file__).resolve().parent / "admin"
CLIENTS = ("confluent-kafka", "aiokafka", "kafka-python")
BY_NAME = {api.name: api for api in APIS.values()}
GROWN = 3
# what each client's admin client can send of the new APIs
REQUIRED = {
    "confluent-kafka": {"CreatePartitions", "AlterConfigs", "DeleteGroups"},
    "aiokafka": {"CreatePartitions", "AlterConfigs"},
    "kafka-python": {"CreatePartitions", "AlterConfigs", "DeleteGroups", "OffsetDelete", "DescribeCluster",
                     "DescribeLogDirs", "DescribeProducers", "DescribeTransactions", "ListTransactions"},
}


class Names:
    def __init__(self, client: str):
        self.client_id = f"golden-{client}"
        self.topic = f"golden-admin-{client}"
        self.group = f"golden-admin-group-{client}"
        self.txn = f"golden-admin-txn-{client}"


def golden_files():
    return sorted(p for client in CLIENTS for p in (HERE / client).glob("*.hex"))


def load(path: Path):
    name, version = path.stem.rsplit("_v", 1)
    return BY_NAME[name], int(version), bytes.fromhex(path.read_text().strip())


def check_create_partitions(body, version, n):
    [t] = body.topics
    assert (t.name, t.count, t.assignments) == (n.topic, GROWN, None)
    assert body.validate_only is False


def check_alter_configs(body, version, n):
    [r] = body.resources
    assert (r.resource_type, r.resource_name) == (2, n.topic)
    assert [(c.name, c.value) for c in r.configs] == [("retention.ms", "60000")]


def check_delete_groups(body, version, n):
    assert body.groups_names == [n.group]


def check_offset_delete(body, version, n):
    assert body.group_id == n.group
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in body.topics] == [(n.topic, [0])]


def check_describe_cluster(body, version, n):
    assert body.include_cluster_authorized_operations is True
    if version >= 1:
        assert body.endpoint_type == 1  # BROKER


def check_describe_log_dirs(body, version, n):
    assert [(t.topic, list(t.partitions)) for t in body.topics] == [(n.topic, [0])]


def check_describe_producers(body, version, n):
    assert [(t.name, list(t.partition_indexes)) for t in body.topics] == [(n.topic, [0])]


def check_describe_transactions(body, version, n):
    assert body.transactional_ids == [n.txn]


def check_list_transactions(body, version, n):
    assert body.state_filters == ["Ongoing"] and body.producer_id_filters == []
    if version >= 1:
        assert body.duration_filter == -1


EXPECT = {
    "CreatePartitions": check_create_partitions, "AlterConfigs": check_alter_configs,
    "DeleteGroups": check_delete_groups, "OffsetDelete": check_offset_delete,
    "DescribeCluster": check_describe_cluster, "DescribeLogDirs": check_describe_log_dirs,
    "DescribeProducers": check_describe_producers, "DescribeTransactions": check_describe_transactions,
    "ListTransactions": check_list_transactions,
}


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_has_a_frame_for_each_admin_api_it_offers(client):
    captured = {load(p)[0].name for p in (HERE / client).glob("*.hex")}
    assert REQUIRED[client] <= captured, f"missing: {sorted(REQUIRED[client] - captured)}"


def test_every_new_admin_api_has_a_captured_frame():
    assert {load(p)[0].name for p in golden_files()} == set(EXPECT)


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_admin_request_decodes_to_expected_fields_and_reencodes_exactly(path):
    api, version, frame = load(path)
    n = Names(path.parent.name)
    assert api.supports(version), f"{api.name} v{version} is sent by a client but not served"
    stream = io.BytesIO(frame)
    header_schema = REQUEST_HEADERS[api.request_header_version(version)]
    header = header_schema.parse_stream(stream)
    assert (header.request_api_key, header.request_api_version) == (api.key, version)
    assert header.client_id == n.client_id
    header_end = stream.tell()
    schema = api.request_schema(version)
    body = schema.parse_stream(stream)
    assert stream.tell() == len(frame), "bytes left after the body"
    EXPECT[api.name](body, version, n)
    assert header_schema.build(header) == frame[:header_end]
    assert schema.build(body) == frame[header_end:]
