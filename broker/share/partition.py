"""SharePartition: the in-flight records of one topic-partition in one share group (sans-I/O).

Between the share-partition start offset (SPSO) and end offset (SPEO) every
delivered data offset sits in a *run*: a range of offsets with one state, one
delivery count and, while ACQUIRED, one owner and lock deadline. Offsets of
the window that are in no run are gaps (control batches, deleted data); they
are never handed out. Moves between states follow ``states.TRANSITIONS``.
Methods take ``now`` (ms) and return the durable changes they made, as
``(first, last, state, delivery_count)``, for the caller to persist.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Iterator, Protocol

from kipper.broker.share import ack_check
from kipper.broker.share.states import (
    ACCEPT, ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, RELEASE, RENEW, TERMINAL, check_move,
)
from kipper.protocol.errors import ErrorCode

NO_DEADLINE = 1 << 62
INT32_MAX = 2**31 - 1


class LogView(Protocol):
    """What the engine needs to know about the topic-partition it shares."""

    log_start_offset: int
    log_end_offset: int

    def data_spans(self, start: int, end: int | None = None) -> Iterator[tuple[int, int, int]]:
        """(first, last, size) of each data (non-control) batch that ends at or
        after ``start`` and begins before ``end``, oldest first."""


class Run:
    __slots__ = ("first", "last", "state", "count", "member", "deadline")

    def __init__(self, first: int, last: int, state: int, count: int,
                 member: str | None = None, deadline: int = NO_DEADLINE):
        self.first = first
        self.last = last
        self.state = state
        self.count = count
        self.member = member
        self.deadline = deadline

    def same_as(self, other: "Run") -> bool:
        return (self.state == other.state and self.count == other.count
                and self.member == other.member and self.deadline == other.deadline)

    def __repr__(self) -> str:
        owner = f" {self.member}@{self.deadline}" if self.state == ACQUIRED else ""
        return f"Run({self.first}-{self.last} s={self.state} n={self.count}{owner})"


def _first(run: Run) -> int:
    return run.first


def _first_of(batch: tuple[int, int]) -> int:
    return batch[0]


def merge_entries(entries: Iterable[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Sort durable entries and join neighbours that touch and agree."""
    out: list[list[int]] = []
    for first, last, state, count in sorted(entries):
        if out and out[-1][1] + 1 == first and out[-1][2] == state and out[-1][3] == count:
            out[-1][1] = last
        else:
            out.append([first, last, state, count])
    return [tuple(e) for e in out]


class SharePartition:
    def __init__(self, group_id: str, topic: str, partition: int, *, start_offset: int,
                 delivery_count_limit: int, lock_duration_ms: int, max_in_flight_records: int):
        self.group_id = group_id
        self.topic = topic
        self.partition = partition
        self.spso = start_offset
        self.speo = start_offset
        self.delivery_count_limit = delivery_count_limit
        self.lock_duration_ms = lock_duration_ms
        # share.partition.max.record.locks: the window grows no further once it holds this many
        self.max_in_flight_records = max_in_flight_records
        self.runs: list[Run] = []
        self.available_records = 0
        self.window_records = 0  # data records in [SPSO, SPEO): what the cap counts
        self.lock_expiries = 0  # records whose acquisition lock ran out (metrics)
        self._next_deadline = NO_DEADLINE
        # what Kafka's share coordinator holds for ReadShareGroupStateSummary: (SPSO, records
        # delivered for good past it) as the last state write carried them, None before any
        self.summary: tuple[int, int] | None = None
        # (first, last) of the log batches acquired from their first offset, from the one the
        # SPSO is in: where Kafka's cache of in-flight batches starts, which decides how it
        # answers an acknowledgement reaching below the SPSO
        self.batches: list[tuple[int, int]] = []
        # False until a ShareFetch has read it: Kafka loads a share-partition's state when the
        # first ShareFetch names it, and fetches pass it over while that load runs
        self.fetch_ready = False
        self.inflight = ack_check.InFlight()  # how Kafka's cache words a refusal

    # --- run bookkeeping ---------------------------------------------------------------

    def _split_at(self, offset: int) -> int:
        """Make ``offset`` start a run if a run covers it; index of the first run at or after it."""
        runs = self.runs
        i = bisect_right(runs, offset, key=_first) - 1
        if i < 0:
            return 0
        r = runs[i]
        if r.last < offset:
            return i + 1
        if r.first == offset:
            return i
        runs.insert(i + 1, Run(offset, r.last, r.state, r.count, r.member, r.deadline))
        r.last = offset - 1
        return i + 1

    def _slice(self, first: int, last: int) -> tuple[int, int]:
        i = self._split_at(first)
        j = self._split_at(last + 1)
        return i, j

    def _coalesce(self, i: int, j: int) -> None:
        """Join touching equal runs in runs[i-1:j+1]."""
        runs = self.runs
        k = max(i - 1, 0)
        end = min(j + 1, len(runs))
        while k < end - 1:
            a, b = runs[k], runs[k + 1]
            if a.last + 1 == b.first and a.same_as(b):
                a.last = b.last
                del runs[k + 1]
                end -= 1
            else:
                k += 1

    def _set(self, run: Run, state: int, now: int = 0) -> None:
        check_move(run.state, state)
        if run.state == AVAILABLE:
            self.available_records -= run.last - run.first + 1
        if state == AVAILABLE:
            self.available_records += run.last - run.first + 1
        run.state = state
        if state != ACQUIRED:
            run.member = None
            run.deadline = NO_DEADLINE

    def _written(self) -> None:
        """A state write (acknowledgement or release): Kafka's SharePartition writes its SPSO
        as it was before the write's own changes move it, and moves it after the write
        succeeded without writing again, so its share coordinator keeps the older SPSO (and
        counts the records acknowledged past it) until the next write."""
        self.summary = (self.spso, sum(r.last - r.first + 1 for r in self.runs if r.state in TERMINAL))

    def _advance(self) -> None:
        """Move the SPSO over terminal runs and gaps."""
        runs = self.runs
        k = 0
        spso = self.speo
        while k < len(runs):
            r = runs[k]
            if r.state not in TERMINAL:
                spso = r.first
                break
            k += 1
        if k:
            self.window_records -= sum(r.last - r.first + 1 for r in runs[:k])
            del runs[:k]
        self.spso = max(self.spso, spso)
        gone = 0
        while gone < len(self.batches) and self.batches[gone][1] < self.spso:
            gone += 1
        del self.batches[:gone]
        self.inflight.drop_below(self.spso)

    def batch_start(self, offset: int) -> int:
        """The first offset of the acquired batch ``offset`` is in (``offset`` when unknown)."""
        i = bisect_right(self.batches, offset, key=_first_of) - 1
        return self.batches[i][0] if i >= 0 and self.batches[i][1] >= offset else offset

    # --- acquisition -----------------------------------------------------------------------

    def acquire(self, member: str, now: int, log: LogView, *, max_records: int,
                max_bytes: int = INT32_MAX, batch_optimized: bool = False
                ) -> list[tuple[int, int, int]]:
        """Lock up to ``max_records`` records for ``member`` as Kafka's SharePartition
        does: released records of the window first, then new ones from the SPEO, with
        one budget of min(max_records, max_in_flight_records - records in the window).
        At the cap the window grows no further and only its released records are handed
        out. ``batch_optimized`` (KIP-1206's default ShareAcquireMode) takes whole batches
        and whole released runs, so the batch that crosses the budget is taken whole;
        record_limit cuts at the record and leaves the rest of that batch in the window,
        AVAILABLE, as Kafka does. Returns (first, last, delivery_count) ranges."""
        if log.log_start_offset > self.spso:
            raise AssertionError("move_start must run before acquiring past the log start")
        if max_records <= 0:
            return []
        budget = min(max_records, self.max_in_flight_records - self.window_records)
        grow = budget > 0
        if not grow:
            if not self.available_records:
                return []
            budget = max_records
        deadline = now + self.lock_duration_ms
        taken = 0
        out: list[tuple[int, int, int]] = []
        runs = self.runs
        if self.available_records:
            i = 0
            while i < len(runs) and taken < budget:
                r = runs[i]
                if r.state == AVAILABLE:
                    size = r.last - r.first + 1
                    if size > budget - taken and not batch_optimized:
                        self._split_at(r.first + budget - taken)
                        size = budget - taken
                    self._set(r, ACQUIRED)
                    self.inflight.changed(r.first, r.last)
                    r.count += 1
                    r.member = member
                    r.deadline = deadline
                    taken += size
                    out.append((r.first, r.last, r.count))
                i += 1
            self._coalesce(0, len(runs))
        if grow and taken < budget:
            taken += self._acquire_new(member, deadline, log, budget - taken, max_bytes,
                                       batch_optimized, out)
        if out:
            self._next_deadline = min(self._next_deadline, deadline)
        self._advance()
        return _join_ranges(out)

    def _acquire_new(self, member: str, deadline: int, log: LogView, budget: int, max_bytes: int,
                     batch_optimized: bool, out: list) -> int:
        """Grow the window over new batches from the SPEO; how many records were taken."""
        taken = used = 0
        runs = self.runs
        start_speo, cut = self.speo, False
        for first, last, size in log.data_spans(self.speo):
            start = max(first, self.speo)
            if start > last:
                continue
            if used and used + size > max_bytes:
                break
            if start == first:
                self.batches.append((first, last))
            n = last - start + 1
            take = n if batch_optimized else min(n, budget - taken)
            run = Run(start, start + take - 1, ACQUIRED, 1, member, deadline)
            prev = runs[-1] if runs else None
            if prev is not None and prev.last + 1 == start and prev.same_as(run):
                prev.last = run.last
            else:
                runs.append(run)
            if take < n:  # record_limit: the rest of the batch waits in the window
                runs.append(Run(start + take, last, AVAILABLE, 0))
                self.available_records += n - take
                cut = True
            self.speo = last + 1
            self.window_records += n
            taken += take
            used += size
            out.append((start, start + take - 1, 1))
            if taken >= budget:
                break
        if self.speo > start_speo:
            self.inflight.added(start_speo, self.speo - 1, by_offset=cut)
        return taken

    # --- acknowledgement ---------------------------------------------------------------

    def acknowledge(self, member: str, batches, now: int, *, allow_renew: bool = False,
                    renew_enabled: bool = True, messages: list | None = None
                    ) -> tuple[list[ErrorCode], list[tuple[int, int, int, int]]]:
        """Apply acknowledgement batches (first, last, [types]). A batch that is
        malformed or names a record this member does not hold fails whole and
        changes nothing; the others still apply (ack_check.py). A RENEW in a group with
        share.renew.acknowledge.enable=false is INVALID_RECORD_STATE (Kafka). Each
        batch's error text, Kafka's, goes to ``messages`` when given."""
        errors = []
        changes: list[tuple[int, int, int, int]] = []
        for first, last, types in batches:
            error, text = ack_check.check(self, member, first, last, types, allow_renew)
            if error == ErrorCode.NONE and not renew_enabled and RENEW in types:
                error, text = ErrorCode.INVALID_RECORD_STATE, ack_check.RENEW_DISABLED
            errors.append(error)
            if messages is not None:
                messages.append(text)
            if error != ErrorCode.NONE or first < self.spso:
                continue  # (a batch reaching below the start: already acknowledged, ignored)
            self.inflight.changed(first, last, by_offset=len(types) > 1)
            if len(types) == 1:
                self._apply(first, last, types[0], now, changes)
                continue
            start = first
            for k in range(1, len(types) + 1):
                if k == len(types) or types[k] != types[k - 1]:
                    self._apply(start, first + k - 1, types[k - 1], now, changes)
                    start = first + k
        if changes:
            self._written()
            self._advance()
        return errors, changes

    def _apply(self, first: int, last: int, ack_type: int, now: int, changes: list) -> None:
        i, j = self._slice(first, last)
        for r in self.runs[i:j]:
            if ack_type == RENEW:
                check_move(r.state, ACQUIRED)
                r.deadline = now + self.lock_duration_ms
                self._next_deadline = min(self._next_deadline, r.deadline)
                continue
            if ack_type == ACCEPT:
                self._set(r, ACKNOWLEDGED)
            elif ack_type == RELEASE:
                self._release(r)
            else:  # REJECT, GAP
                self._set(r, ARCHIVED)
            changes.append((r.first, r.last, r.state, r.count))
        self._coalesce(i, j)

    def _release(self, run: Run) -> None:
        self._set(run, ARCHIVED if run.count >= self.delivery_count_limit else AVAILABLE)

    # --- releases without an acknowledgement ----------------------------------------------

    def expire(self, now: int) -> list[tuple[int, int, int, int]]:
        """Release every record whose acquisition lock ran out."""
        if now < self._next_deadline:
            return []
        changes = self._release_where(lambda r: r.deadline <= now)
        self.lock_expiries += sum(last - first + 1 for first, last, _, _ in changes)
        return changes

    def release_member(self, member: str) -> list[tuple[int, int, int, int]]:
        """Release what ``member`` holds (it left, was fenced or closed its session)."""
        return self._release_where(lambda r: r.member == member)

    def _release_where(self, predicate) -> list[tuple[int, int, int, int]]:
        changes = []
        next_deadline = NO_DEADLINE
        for r in self.runs:
            if r.state != ACQUIRED:
                continue
            if predicate(r):
                self._release(r)
                changes.append((r.first, r.last, r.state, r.count))
            else:
                next_deadline = min(next_deadline, r.deadline)
        self._next_deadline = next_deadline
        if changes:
            self._coalesce(0, len(self.runs))
            self._written()
            self._advance()
        return changes

    def move_start(self, log_start: int) -> bool:
        """The log start passed the SPSO (retention, DeleteRecords): records
        below it are gone. True if the window changed."""
        if log_start <= self.spso:
            return False
        i = self._split_at(log_start)
        for r in self.runs[:i]:
            if r.state == AVAILABLE:
                self.available_records -= r.last - r.first + 1
            self.window_records -= r.last - r.first + 1
        del self.runs[:i]
        self.spso = log_start
        self.speo = max(self.speo, log_start)
        self._advance()
        return True

    # --- views -----------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Offsets between SPSO and SPEO (KIP-1103's InFlightMessageCount)."""
        return self.speo - self.spso

    def at_cap(self) -> bool:
        """The window may not grow: only released records can be acquired."""
        return self.window_records >= self.max_in_flight_records

    def acquired_by(self, member: str) -> int:
        return sum(r.last - r.first + 1 for r in self.runs if r.member == member)

    def durable_runs(self, start: int | None = None, end: int | None = None
                     ) -> list[tuple[int, int, int, int]]:
        """Runs as they are written down: an ACQUIRED record with delivery count
        n is AVAILABLE with n - 1 (seed 004: the acquisition is transient)."""
        out = []
        for r in self.runs:
            if end is not None and r.first >= end:
                break
            if start is not None and r.last < start:
                continue
            first = r.first if start is None else max(r.first, start)
            last = r.last if end is None else min(r.last, end - 1)
            if r.state == ACQUIRED:
                out.append((first, last, AVAILABLE, r.count - 1))
            else:
                out.append((first, last, r.state, r.count))
        return merge_entries(out)

    def checkpoint_view(self) -> tuple[int, int, list[tuple[int, int, int, int]]]:
        """(start, end, states) of a SHARE_CHECKPOINT of this state. Trailing
        records in their first delivery (AVAILABLE, 0) are left out: the SPEO
        may safely go back over them."""
        states = self.durable_runs()
        while states and states[-1][2] == AVAILABLE and states[-1][3] == 0:
            states.pop()
        end = states[-1][1] + 1 if states else self.spso
        return self.spso, end, states

    def durable_view(self, log: LogView) -> tuple[int, int, list[tuple[int, int, int, int]]]:
        """``checkpoint_view`` with an empty window moved over leading gaps, so
        two states that differ only in which gaps they have seen compare equal."""
        start, end, states = self.checkpoint_view()
        if not states:
            nxt = next((max(f, start) for f, last, _ in log.data_spans(start) if last >= start),
                       log.log_end_offset)
            start = end = max(start, nxt)
        return start, end, states

    # --- recovery --------------------------------------------------------------------------

    def restore(self, start: int, end: int, entries_in_order: list[list[tuple[int, int, int, int]]],
                log: LogView) -> None:
        """Rebuild from a checkpoint window and the entries of the checkpoint and
        each later delta, oldest first. Data offsets of the window that no entry
        names are records in their first delivery: AVAILABLE, count 0."""
        hi = end
        for entries in entries_in_order:
            for _, last, _, _ in entries:
                hi = max(hi, last + 1)
        self.spso = start
        self.speo = hi
        self.runs = [Run(max(f, start), min(last, hi - 1), AVAILABLE, 0)
                     for f, last, _ in log.data_spans(start, hi)
                     if max(f, start) <= min(last, hi - 1)]
        for entries in entries_in_order:
            for first, last, state, count in entries:
                first = max(first, start)
                if first > last:
                    continue
                i, j = self._slice(first, last)
                for r in self.runs[i:j]:
                    r.state = state
                    r.count = count
                self._coalesce(i, j)
        self.available_records = sum(r.last - r.first + 1 for r in self.runs if r.state == AVAILABLE)
        self.window_records = sum(r.last - r.first + 1 for r in self.runs)
        self._next_deadline = NO_DEADLINE
        self._advance()
        if self.spso == self.speo:
            # nothing in flight: start at the next data offset, past control batches,
            # which the live state may already have stepped over
            nxt = next((max(f, self.spso) for f, _, _ in log.data_spans(self.spso)),
                       max(self.spso, log.log_end_offset))
            self.spso = self.speo = nxt


def _join_ranges(ranges: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[list[int]] = []
    for first, last, count in ranges:
        if out and out[-1][1] + 1 == first and out[-1][2] == count:
            out[-1][1] = last
        else:
            out.append([first, last, count])
    return [tuple(r) for r in out]
