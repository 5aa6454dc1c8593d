"""A hypothesis state machine over the SharePartition engine, as a read_committed share
group sees the log: members acquire (batch-optimized or record-limit), acknowledge
ACCEPT / RELEASE / REJECT, let locks expire and close their share sessions with
acknowledgements still pending, while transactions open, commit and abort.

Invariants: no record is acknowledged twice; a record acknowledged ACCEPT or REJECT is
never delivered again; nothing past the last stable offset and nothing of an aborted
transaction is ever delivered.
"""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kipper.broker.share.partition import SharePartition
from kipper.broker.share.states import ACCEPT, ACQUIRED, REJECT, RELEASE, TERMINAL
from kipper.protocol.errors import ErrorCode

LOCK = 1000
MEMBERS = ("a", "b", "c")


class TxnLog:
    """Batches (first, last, producer id or None, control) with the read_committed view
    the engine reads: up to the LSO, aborted transactional batches left out."""

    def __init__(self):
        self.batches: list[tuple[int, int, int | None, bool]] = []
        self.end = 0
        self.open: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted: set[tuple[int, int]] = set()  # (first, last) of aborted batches
        self.log_start_offset = 0

    def append(self, n: int, producer_id: int | None = None, control: bool = False) -> None:
        self.batches.append((self.end, self.end + n - 1, producer_id, control))
        if producer_id is not None and not control:
            self.open.setdefault(producer_id, self.end)
        self.end += n

    def finish(self, producer_id: int, commit: bool) -> None:
        start = self.open.pop(producer_id)
        if not commit:
            self.aborted |= {(f, last) for f, last, pid, control in self.batches
                             if pid == producer_id and not control and f >= start}
        self.append(1, producer_id, control=True)

    @property
    def lso(self) -> int:
        return min(self.open.values(), default=self.end)

    @property
    def log_end_offset(self) -> int:
        return self.lso

    def data_spans(self, start, end=None):
        stop = self.lso if end is None else min(end, self.lso)
        for first, last, _, control in self.batches:
            if first >= stop:
                return
            if last >= start and not control and (first, last) not in self.aborted:
                yield first, last, 100

    def aborted_offsets(self) -> set[int]:
        return {o for f, last in self.aborted for o in range(f, last + 1)}


class ShareAcks(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.log = TxnLog()
        self.sp = SharePartition("g", "t", 0, start_offset=0, delivery_count_limit=3,
                                 lock_duration_ms=LOCK, max_in_flight_records=100)
        self.now = 0
        self.acked: set[int] = set()  # acknowledged ACCEPT/RELEASE/REJECT, each once
        self.final: set[int] = set()  # ACCEPT or REJECT: never to be delivered again
        self.next_pid = 1

    def held(self, member: str) -> list[int]:
        return [o for r in self.sp.runs if r.state == ACQUIRED and r.member == member
                for o in range(r.first, r.last + 1)]

    # --- the log ----------------------------------------------------------------------------

    @rule(n=st.integers(1, 5))
    def produce(self, n):
        self.log.append(n)

    @rule(n=st.integers(1, 4))
    def produce_in_a_transaction(self, n):
        pid = next(iter(self.log.open), None)
        if pid is None:
            pid, self.next_pid = self.next_pid, self.next_pid + 1
        self.log.append(n, pid)

    @precondition(lambda self: self.log.open)
    @rule(commit=st.booleans())
    def end_transaction(self, commit):
        self.log.finish(next(iter(self.log.open)), commit)

    # --- members ----------------------------------------------------------------------------

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 8), whole=st.booleans())
    def acquire(self, member, max_records, whole):
        ranges = self.sp.acquire(member, self.now, self.log, max_records=max_records,
                                 batch_optimized=whole)
        got = {o for first, last, _ in ranges for o in range(first, last + 1)}
        assert not got & self.final, f"delivered again after ACCEPT/REJECT: {sorted(got & self.final)}"
        assert not got & self.log.aborted_offsets(), "an aborted record was delivered"
        assert all(o < self.log.lso for o in got), "delivered past the last stable offset"
        if not whole:
            assert len(got) <= max_records

    def _ack(self, member, kind, data):
        held = self.held(member)
        if not held:
            return
        offsets = sorted(data.draw(st.sets(st.sampled_from(held), min_size=1)))
        batches = [(o, o, [kind]) for o in offsets]
        errors, _ = self.sp.acknowledge(member, batches, self.now)
        for o, error in zip(offsets, errors):
            assert error == ErrorCode.NONE, f"{member} holds {o} but its acknowledgement failed"
            assert o not in self.acked, f"{o} acknowledged twice"
            self.acked.add(o)
            if kind in (ACCEPT, REJECT):
                self.final.add(o)
            else:
                self.acked.discard(o)  # a released record may be delivered and acknowledged again

    @rule(member=st.sampled_from(MEMBERS), kind=st.sampled_from([ACCEPT, RELEASE, REJECT]),
          data=st.data())
    def acknowledge(self, member, kind, data):
        self._ack(member, kind, data)

    @rule(member=st.sampled_from(MEMBERS), kind=st.sampled_from([ACCEPT, REJECT]), data=st.data())
    def close_session_with_pending_acknowledgements(self, member, kind, data):
        """The final request carries acknowledgements; the session's end releases the rest."""
        self._ack(member, kind, data)
        self.sp.release_member(member)
        assert self.held(member) == []

    @rule(member=st.sampled_from(MEMBERS))
    def stale_acknowledgement_is_refused(self, member):
        done = sorted(self.final & set(range(self.sp.spso, self.sp.speo)))
        if done:
            errors, changes = self.sp.acknowledge(member, [(done[0], done[0], [ACCEPT])], self.now)
            assert errors == [ErrorCode.INVALID_RECORD_STATE] and changes == []

    @rule(ms=st.integers(1, 2 * LOCK))
    def time_passes(self, ms):
        self.now += ms
        self.sp.expire(self.now)

    @invariant()
    def finished_records_are_never_in_flight_again(self):
        live = {o for r in self.sp.runs if r.state not in TERMINAL for o in range(r.first, r.last + 1)}
        assert not live & self.final


TestShareAcks = ShareAcks.TestCase
TestShareAcks.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
