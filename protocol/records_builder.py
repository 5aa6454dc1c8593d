"""Whole batches of records encoded at once from tables: the producer's send
thread seals a batch here (seed 001: the send thread serializes).

A batch's records differ from one another only in a few fields (offset delta,
the timestamp delta of their run, the key and value lengths), so each record
is cut into parts that come from tables indexed by those fields, filled by
slice assignment and ``map`` (in C), and ``bytes.join`` puts the batch
together: no Python code runs per record. The bytes are exactly those of
``records.encode_record`` for each record, joined (property-tested).
"""

from __future__ import annotations

import operator

from kipper.protocol.records import VARINT_CACHE, _varint, encode_record

# For each (value length, timestamp delta) a batch has used, the bytes of a
# record before its value, for every offset delta (see _prefixes).
_PREFIXES: dict[tuple[int, int], list[bytes]] = {}
_PREFIXES_LIMIT = 1 << 16  # prefixes remembered in all (about 3 MB), then the tables start again


def _prefixes(vl: int, td: int, n: int) -> list[bytes]:
    """For a record with no key or headers, a value of ``vl`` bytes and
    timestamp delta ``td``: its bytes before the value (length, attributes 0,
    timestamp delta, offset delta, key length -1, value length), with the
    previous record's header count (0) in front, for offset deltas 0..n-1 at
    least. Built once per (vl, td), doubling as batches grow; shared by every
    producer in the process (a table is never changed once built)."""
    table = _PREFIXES.get((vl, td))
    if table is not None and len(table) >= n:
        return table
    size = max(16, 1 << (n - 1).bit_length())
    if sum(map(len, _PREFIXES.values())) + size > _PREFIXES_LIMIT:
        _PREFIXES.clear()
    V = VARINT_CACHE
    t = V[td + 1]
    tail = b"\x01" + V[vl + 1]
    fixed = 1 + len(t) + len(tail) + vl + 1  # attributes .. header count, all but the offset delta
    table = _PREFIXES[(vl, td)] = [b"\x00" + V[len(od) + fixed + 1] + b"\x00" + t + od + tail
                                   for od in _VARINTS[:size]]
    return table


# For records whose values differ in length (_encode_sizes, _encode_keyed):
# per (timestamp delta, offset delta's length, index), the bytes of a record
# before its offset delta, and per value length the bytes after it.
_HEADS: dict[tuple[int, int, bool], list[bytes]] = {}
_TAILS: list[bytes] = []


def _heads(td: int, od_width: int, top: int, by_rest: bool = False) -> list[bytes]:
    """The previous record's header count (0), then length, attributes 0 and
    timestamp delta ``td`` of a record whose offset delta takes ``od_width``
    bytes, for indexes 0..top-1 at least. The index is the value length of a
    record without a key, or with ``by_rest`` the bytes between the offset
    delta and the header count (key and value, with their lengths).
    Tables are replaced, never changed, so a send thread can read one while
    another producer's thread builds a longer one."""
    table = _HEADS.get((td, od_width, by_rest))
    if table is not None and len(table) >= top:
        return table
    size = max(64, 1 << (top - 1).bit_length())
    if not by_rest:
        size = min(size, PLAIN_SIZES_MAX + 1)
    if sum(map(len, _HEADS.values())) + size > _PREFIXES_LIMIT:
        _HEADS.clear()
        table = None
    have = len(table) if table is not None else 0
    t = VARINT_CACHE[td + 1]
    fixed = 1 + len(t) + od_width + 1  # attributes, timestamp and offset deltas, header count
    rests = range(have, size) if by_rest else (1 + len(_VARINTS[vl]) + vl for vl in range(have, size))
    table = _HEADS[(td, od_width, by_rest)] = (table or []) + [
        b"\x00" + _varint(fixed + rest) + b"\x00" + t for rest in rests]
    return table


def _tails(top: int) -> list[bytes]:
    """Key length -1 and the value length, for value lengths 0..top-1 at least."""
    global _TAILS
    if len(_TAILS) < top:
        size = min(max(64, 1 << (top - 1).bit_length()), PLAIN_SIZES_MAX + 1)
        _TAILS = _TAILS + [b"\x01" + _VARINTS[vl] for vl in range(len(_TAILS), size)]
    return _TAILS


PLAIN_SIZES_MAX = 8000  # the longest value (or key) the tables cover (its length fits a 2-byte varint)
_VARINTS = VARINT_CACHE[1:]  # the varint of 0..8190: a length, or an offset delta
_FIELD_SIZES = [len(_VARINTS[n]) + n for n in range(PLAIN_SIZES_MAX + 1)]  # a field of n bytes, length included


def encode_plain_records(values: list, timestamp_deltas: list, value_size: int | None = None) -> bytes:
    """Records 0..n-1 of a batch with no keys and no headers, length prefixes
    included: the same bytes as ``encode_record`` for each, joined. One
    timestamp delta per record; ``encode_plain_runs`` takes them as runs."""
    run_starts, run_deltas = [], []
    for i, td in enumerate(timestamp_deltas):
        if not run_deltas or run_deltas[-1] != td:
            run_starts.append(i)
            run_deltas.append(td)
    return encode_plain_runs(values, run_starts, run_deltas, value_size)


def expand_runs(run_starts: list, run_deltas: list, n: int) -> list[int]:
    """One timestamp delta per record of ``n``, from runs (see ``encode_plain_runs``)."""
    deltas: list[int] = []
    for start, end, td in zip(run_starts, [*run_starts[1:], n], run_deltas):
        deltas += [td] * (end - start)
    return deltas


def encode_plain_runs(values: list, run_starts: list, run_deltas: list, value_size: int | None = None) -> bytes:
    """``encode_plain_records`` with the timestamp deltas given as runs: record
    ``run_starts[j]`` and those after it, up to the next run, have timestamp
    delta ``run_deltas[j]`` (``run_starts[0]`` is 0).

    The producer's send thread encodes a whole batch here, once, instead of the
    caller's thread encoding each record as it is sent. A producer's batch
    holds a few runs (its records change timestamp once a millisecond), and
    when every value has the same length (fixed-size events, and the
    benchmarks) a record differs from its neighbours only in its offset delta
    and its run's timestamp delta, so the per-record pieces come from
    tables (_prefixes), copied by slice assignment, and
    ``bytes.join`` does the rest in C: no Python code runs per record.
    Values of differing lengths take tables indexed by length instead
    (_encode_sizes), also without Python code per record.

    ``value_size``: the length every value has (-1: they differ), when the
    caller knows it (the producer's batch keeps count as records arrive);
    otherwise it is found here, which costs more than the rest of the work."""
    n = len(values)
    if not n:
        return b""
    if n > 8190 or min(run_deltas) < -1 or max(run_deltas) > 8190:
        return _encode_each(values, run_starts, run_deltas)
    if value_size is None or not 0 <= value_size <= PLAIN_SIZES_MAX:
        try:
            lens = list(map(len, values))
        except TypeError:  # a null value
            return _encode_each(values, run_starts, run_deltas)
        if value_size is None and lens.count(lens[0]) == n:
            value_size = lens[0]
    if value_size is not None and 0 <= value_size <= PLAIN_SIZES_MAX:
        return _encode_same_size(values, value_size, run_starts, run_deltas)
    if max(lens) > PLAIN_SIZES_MAX:
        return _encode_each(values, run_starts, run_deltas)
    return _encode_sizes(values, lens, run_starts, run_deltas)


def _encode_same_size(values: list, vl: int, run_starts: list, run_deltas: list) -> bytes:
    """Every value is ``vl`` bytes long. A record: its prefix (_prefixes: it
    depends on the value length, the run's timestamp delta and the offset
    delta), value, header count 0. The header count of each record is put in
    front of the next one's prefix, so each record is two parts, and the last
    count is a part of its own."""
    n = len(values)
    parts = [b"\x00"] * (2 * n + 1)
    for start, end, td in zip(run_starts, [*run_starts[1:], n], run_deltas):
        parts[2 * start:2 * end:2] = _prefixes(vl, td, end)[start:end]
    parts[0] = parts[0][1:]
    parts[1:-1:2] = values
    return b"".join(parts)


def _encode_sizes(values: list, lens: list, run_starts: list, run_deltas: list) -> bytes:
    """Values of differing lengths ``lens`` (none over PLAIN_SIZES_MAX). A
    record is four parts: its head (_heads, by the run's timestamp delta,
    the offset delta's length and the value length), offset delta, tail
    (_tails, by the value length) and value. The tables are indexed with the
    lengths by ``map``, in C, so this too runs no Python code per record:
    about a fifth of _encode_each's time."""
    n = len(values)
    top = max(lens) + 1
    parts = _with_heads(4, lens, top, False, run_starts, run_deltas)
    parts[1:-1:4] = _VARINTS[:n]
    parts[2:-1:4] = map(_tails(top).__getitem__, lens)
    parts[3:-1:4] = values
    return b"".join(parts)


def encode_keyed_runs(keys: list, values: list, run_starts: list, run_deltas: list) -> bytes:
    """Records that each have a key and a value (bytes) and no headers, with
    timestamp deltas as runs (see ``encode_plain_runs``): the same bytes as
    ``encode_record`` for each, joined. Six parts a record (head, offset
    delta, key length, key, value length, value), from tables indexed with
    the lengths by ``map``, so no Python code runs per record."""
    n = len(values)
    if not n:
        return b""
    klens = vlens = None
    if (n <= 8190 and min(run_deltas) >= -1 and max(run_deltas) <= 8190
            and None not in keys and None not in values):
        klens = list(map(len, keys))
        vlens = list(map(len, values))
    if klens is None or max(klens) > PLAIN_SIZES_MAX or max(vlens) > PLAIN_SIZES_MAX:
        return _encode_each(values, run_starts, run_deltas, keys)
    field = _FIELD_SIZES.__getitem__
    rests = list(map(operator.add, map(field, klens), map(field, vlens)))
    parts = _with_heads(6, rests, max(rests) + 1, True, run_starts, run_deltas)
    varint = _VARINTS.__getitem__
    parts[1:-1:6] = _VARINTS[:n]
    parts[2:-1:6] = map(varint, klens)
    parts[3:-1:6] = keys
    parts[4:-1:6] = map(varint, vlens)
    parts[5:-1:6] = values
    return b"".join(parts)


def _with_heads(stride: int, index: list, top: int, by_rest: bool, run_starts: list, run_deltas: list) -> list:
    """The parts of a batch of ``stride`` parts a record: each record's first
    part is its head (_heads, looked up by ``index``, in C); the others are
    placeholders for the caller to fill, but for the last part, the last
    record's header count (0)."""
    n = len(index)
    parts = [b"\x00"] * (stride * n + 1)
    for start, end, td in zip(run_starts, [*run_starts[1:], n], run_deltas):
        if start < 64:  # offset deltas below 64 take one byte
            cut = min(end, 64)
            parts[stride * start:stride * cut:stride] = map(_heads(td, 1, top, by_rest).__getitem__,
                                                            index[start:cut])
            start = cut
        if start < end:
            parts[stride * start:stride * end:stride] = map(_heads(td, 2, top, by_rest).__getitem__,
                                                            index[start:end])
    parts[0] = parts[0][1:]  # the first record has no record before it
    return parts


def _encode_each(values: list, run_starts: list, run_deltas: list, keys: list | None = None) -> bytes:
    """Record by record: null values (or keys), fields longer than the tables
    cover, and deltas out of their range."""
    deltas = expand_runs(run_starts, run_deltas, len(values))
    keys = keys or [None] * len(values)
    return b"".join([encode_record(i, td, k, v) for i, (td, k, v) in enumerate(zip(deltas, keys, values))])
