"""Assertions shared by the per-client interop tests."""

from __future__ import annotations

N_RECORDS = 3000
PARTITIONS = 3


def expected_values() -> set[bytes]:
    return {f"value-{i}".encode() for i in range(N_RECORDS)}


def key_of(i: int) -> bytes:
    return f"key-{i % 101}".encode()


def check_exactly_once(records: list[tuple[int, int, bytes, bytes]], watermarks: dict[int, int]) -> None:
    """records: (partition, offset, key, value)."""
    values = [r[3] for r in records]
    assert len(values) == N_RECORDS, f"read {len(values)} records, expected {N_RECORDS}"
    assert set(values) == expected_values()
    by_partition: dict[int, list[int]] = {}
    for partition, offset, _, _ in records:
        by_partition.setdefault(partition, []).append(offset)
    for partition, offsets in by_partition.items():
        assert sorted(offsets) == list(range(len(offsets))), f"partition {partition} offsets not contiguous from 0"
        assert watermarks[partition] == len(offsets)
    assert sum(watermarks.values()) == N_RECORDS
    # keyed records keep their partition
    part_of_key: dict[bytes, int] = {}
    for partition, _, key, _ in records:
        assert part_of_key.setdefault(key, partition) == partition
