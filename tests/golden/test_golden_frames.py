"""Request frames captured from real clients decode to what the client meant.

The .hex files next to this module were written by scripts/capture_golden.py
(one frame per client, API and version, without the size prefix). Each must
decode with protocol.header / protocol.messages, carry the client's id and
the names the capture used, and re-encode to exactly the captured bytes.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kipper.protocol import compression
from kipper.protocol import records as rec
from kipper.protocol.header import REQUEST_HEADERS
from kipper.protocol.messages import APIS
from kipper.protocol.primitives import ZERO_UUID

HERE = Path(__file__).resolve().parent
CLIENTS = ("confluent-kafka", "aiokafka", "kafka-python")
BY_NAME = {api.name: api for api in APIS.values()}
# What the capture drives every client through.
REQUIRED = {"ApiVersions", "Metadata", "CreateTopics", "Produce", "Fetch", "FindCoordinator",
            "JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "OffsetFetch", "LeaveGroup",
            "ListOffsets"}
SOFTWARE_NAME = {"confluent-kafka": "confluent-kafka-python", "kafka-python": "kafka-python",
                 "aiokafka": "aiokafka"}
PARTITIONS = 2
RECORDS_PER_CODEC = 3


class Names:
    """The names scripts/capture_golden.py used for one client."""

    def __init__(self, client: str):
        self.client = client
        self.client_id = f"golden-{client}"
        self.topic = f"golden-{client}"
        self.group = f"golden-group-{client}"
        self.codecs = len(list((HERE / "batches").glob(f"{client}_*.hex")))


def golden_files():
    return sorted(p for client in CLIENTS for p in (HERE / client).glob("*.hex"))


def load(path: Path):
    name, version = path.stem.rsplit("_v", 1)
    return BY_NAME[name], int(version), bytes.fromhex(path.read_text().strip())


# --- per-API spot checks ------------------------------------------------------------

def _topic_names(topics) -> list[str]:
    return [t.get("name", t.get("topic")) for t in topics]


def check_api_versions(body, version, n):
    if version >= 3:
        assert body.client_software_name == SOFTWARE_NAME[n.client]
        assert body.client_software_version


def check_metadata(body, version, n):
    assert _topic_names(body.topics) == [n.topic]
    if version >= 4:
        assert body.allow_auto_topic_creation in (True, False)


def check_create_topics(body, version, n):
    assert [(t.name, t.num_partitions, t.replication_factor) for t in body.topics] == [
        (n.topic, PARTITIONS, 1)]
    assert body.timeout_ms > 0
    assert body.validate_only is False


def check_produce(body, version, n):
    assert body.acks == -1
    assert body.transactional_id is None
    assert body.timeout_ms > 0
    assert _topic_names(body.topic_data) == [n.topic]
    [part] = body.topic_data[0].partition_data
    assert part.index == 0
    [batch] = rec.decode_all(part.records)
    assert batch.header.compression == compression.GZIP
    assert [r.key for r in batch.records] == [b"key-0", b"key-1", b"key-2"]
    assert batch.records[0].value.startswith(f"{n.client}-gzip-0:".encode())


def check_fetch(body, version, n):
    if version < 15:
        assert body.replica_id == -1
    assert body.max_wait_ms > 0 and body.min_bytes >= 0
    [topic] = body.topics
    if version >= 13:
        assert topic.topic_id != ZERO_UUID
    else:
        assert topic.topic == n.topic
    assert sorted(p.partition for p in topic.partitions) == list(range(PARTITIONS))
    assert all(p.fetch_offset >= 0 and p.partition_max_bytes > 0 for p in topic.partitions)


def check_find_coordinator(body, version, n):
    assert body.key_type == 0
    if version >= 4:
        assert body.coordinator_keys == [n.group]
    else:
        assert body.key == n.group


def check_join_group(body, version, n):
    assert body.group_id == n.group
    assert body.protocol_type == "consumer"
    assert body.session_timeout_ms == 10000
    assert body.protocols
    for protocol in body.protocols:
        assert protocol.name in ("range", "roundrobin", "sticky", "cooperative-sticky")
        assert n.topic.encode() in protocol.metadata  # the subscription names the topic


def check_sync_group(body, version, n):
    assert body.group_id == n.group
    assert body.generation_id >= 1
    assert body.member_id
    assert body.member_id in [a.member_id for a in body.assignments]


def check_heartbeat(body, version, n):
    assert body.group_id == n.group
    assert body.generation_id >= 1
    assert body.member_id


def check_offset_commit(body, version, n):
    assert body.group_id == n.group
    assert body.member_id
    assert _topic_names(body.topics) == [n.topic]
    committed = {p.partition_index: p.committed_offset for p in body.topics[0].partitions}
    # everything went to partition 0, and the consumer read all of it
    assert committed[0] == RECORDS_PER_CODEC * n.codecs
    assert all(v == 0 for k, v in committed.items() if k != 0)


def check_offset_fetch(body, version, n):
    if version >= 8:
        [group] = body.groups
        assert group.group_id == n.group
        topics = group.topics
    else:
        assert body.group_id == n.group
        topics = body.topics
    assert _topic_names(topics) == [n.topic]
    assert set(topics[0].partition_indexes) <= set(range(PARTITIONS))


def check_leave_group(body, version, n):
    assert body.group_id == n.group
    if version >= 3:
        assert [m.member_id for m in body.members] and all(m.member_id for m in body.members)
    else:
        assert body.member_id


def check_list_offsets(body, version, n):
    assert body.replica_id == -1
    assert _topic_names(body.topics) == [n.topic]
    for p in body.topics[0].partitions:
        assert p.partition_index in range(PARTITIONS)
        assert p.timestamp in (-1, -2) or p.timestamp >= 0


def check_init_producer_id(body, version, n):
    assert body.transactional_id is None
    assert body.producer_id == -1


EXPECT = {
    "ApiVersions": check_api_versions, "Metadata": check_metadata,
    "CreateTopics": check_create_topics, "Produce": check_produce, "Fetch": check_fetch,
    "FindCoordinator": check_find_coordinator, "JoinGroup": check_join_group,
    "SyncGroup": check_sync_group, "Heartbeat": check_heartbeat,
    "OffsetCommit": check_offset_commit, "OffsetFetch": check_offset_fetch,
    "LeaveGroup": check_leave_group, "ListOffsets": check_list_offsets,
    "InitProducerId": check_init_producer_id,
}


# --- tests ----------------------------------------------------------------------------

@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_has_a_frame_for_each_driven_api(client):
    captured = {load(p)[0].name for p in (HERE / client).glob("*.hex")}
    assert REQUIRED <= captured, f"missing: {sorted(REQUIRED - captured)}"


def test_every_captured_api_has_spot_checks():
    assert {load(p)[0].name for p in golden_files()} <= set(EXPECT)


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_request_decodes_to_expected_fields_and_reencodes_exactly(path):
    api, version, frame = load(path)
    n = Names(path.parent.name)
    assert api.valid_range.lo <= version <= api.valid_range.hi

    stream = io.BytesIO(frame)
    header_schema = REQUEST_HEADERS[api.request_header_version(version)]
    header = header_schema.parse_stream(stream)
    assert header.request_api_key == api.key
    assert header.request_api_version == version
    assert isinstance(header.correlation_id, int) and header.correlation_id >= 0
    assert header.client_id == n.client_id
    header_end = stream.tell()

    schema = api.request_schema(version)
    body = schema.parse_stream(stream)
    assert stream.tell() == len(frame), "bytes left after the body"
    assert schema.struct.parse(frame[header_end:]) == body, "interpreted parse disagrees"

    EXPECT[api.name](body, version, n)

    assert header_schema.build(header) == frame[:header_end]
    assert schema.build(body) == frame[header_end:]
