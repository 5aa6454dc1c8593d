"""Stateful property test of a share-partition: members acquire, accept, release,
reject, let locks expire, join and leave, while data, SHARE_* control records
and DeleteRecords interleave in the real in-memory log.

Invariants: no record is held by two members at once; delivery counts never
exceed the limit; the SPSO never moves back; recovering from the log always
gives the live state with acquisitions dropped.
"""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kipper.broker.log.topics import TopicManager
from kipper.broker.share.log_view import PartitionLogView
from kipper.broker.share.settings import ShareSettings
from kipper.broker.share.states import ACCEPT, ACQUIRED, AVAILABLE, GAP, REJECT, RELEASE
from kipper.broker.share.store import ShareStore
from kipper.protocol import records

LOCK = 1000
MEMBERS = ("m1", "m2", "m3")


class SharePartitionMachine(RuleBasedStateMachine):
    @initialize(limit=st.integers(2, 4), lock_limit=st.sampled_from([100, 12, 5]),
                max_deltas=st.sampled_from([1, 3, 1000]), first=st.integers(1, 6))
    def setup(self, limit, lock_limit, max_deltas, first):
        self.topics = TopicManager(num_partitions=1, auto_create=False)
        _, _, self.topic = self.topics.create("t", 1)
        self.plog = self.topic.partitions[0]
        self.view = PartitionLogView(self.plog)
        self.limit = limit
        settings_ = ShareSettings(delivery_count_limit=limit, record_lock_duration_ms=LOCK,
                                  checkpoint_max_deltas=max_deltas, auto_offset_reset="earliest")
        self.store = ShareStore(settings_, self.topics)
        self.now = 0
        self._produce(first)
        self.sp = self.store.get("g", self.topic, 0, self.now)
        self.sp.max_in_flight_records = lock_limit
        self.held: dict[int, str] = {}  # model: offset -> member holding it
        self.members = {"m1"}
        self.last_spso = self.sp.spso

    def _produce(self, n):
        self.plog.append_batch(records.build_batch([(None, b"v")] * n), self.now)

    def _persist(self, changes):
        self.store.persist(self.sp, changes, self.now)
        for first, last, _, _ in changes:
            for o in range(first, last + 1):
                self.held.pop(o, None)

    # --- rules -----------------------------------------------------------------------------

    @rule(n=st.integers(1, 5))
    def produce(self, n):
        self._produce(n)

    @rule(member=st.sampled_from(MEMBERS), n=st.integers(1, 8))
    def acquire(self, member, n):
        if member not in self.members:
            return
        got = self.sp.acquire(member, self.now, self.view, max_records=n)
        for first, last, count in got:
            assert 1 <= count <= self.limit
            for o in range(first, last + 1):
                assert o not in self.held, f"{o} acquired by {member} while {self.held[o]} holds it"
                self.held[o] = member

    @precondition(lambda self: self.held)
    @rule(data=st.data(), kind=st.sampled_from([ACCEPT, RELEASE, REJECT, GAP]))
    def acknowledge_own(self, data, kind):
        offset = data.draw(st.sampled_from(sorted(self.held)))
        member = self.held[offset]
        last = offset
        while last + 1 in self.held and self.held[last + 1] == member and last - offset < 3:
            last += 1
        errors, changes = self.sp.acknowledge(member, [(offset, last, [kind])], self.now)
        assert errors == [0]
        self._persist(changes)

    @rule(member=st.sampled_from(MEMBERS), first=st.integers(0, 60), span=st.integers(0, 3))
    def acknowledge_anything(self, member, first, span):
        """Any range: it applies only if this member holds every record of it; a range below
        the share-partition start was acknowledged already, and is answered NONE with nothing
        changed (Kafka's SharePartition)."""
        before = [(r.first, r.last, r.state, r.count, r.member) for r in self.sp.runs]
        spso = self.sp.spso
        errors, changes = self.sp.acknowledge(member, [(first, first + span, [ACCEPT])], self.now)
        holds = all(self.held.get(o) == member for o in range(first, first + span + 1)
                    if self.sp.spso <= o < self.sp.speo and self._is_data(o))
        in_window = self.last_spso <= first and first + span < self.sp.speo
        if errors == [0] and first < spso:
            assert [(r.first, r.last, r.state, r.count, r.member) for r in self.sp.runs] == before
        elif errors == [0]:
            assert holds and in_window
            self._persist(changes)
        else:
            assert [(r.first, r.last, r.state, r.count, r.member) for r in self.sp.runs] == before

    def _is_data(self, offset):
        return any(f <= offset <= last for f, last, _ in self.view.data_spans(offset, offset + 1))

    @rule(dt=st.integers(1, 2 * LOCK))
    def time_passes(self, dt):
        self.now += dt
        self._persist(self.sp.expire(self.now))

    @rule(member=st.sampled_from(MEMBERS))
    def join(self, member):
        self.members.add(member)

    @precondition(lambda self: len(self.members) > 0)
    @rule(member=st.sampled_from(MEMBERS))
    def leave(self, member):
        if member in self.members:
            self.members.discard(member)
            self._persist(self.sp.release_member(member))

    @rule(ahead=st.integers(0, 10))
    def delete_records(self, ahead):
        """DeleteRecords (or retention) up to the ESO floor."""
        target = min(self.plog.log_start_offset + ahead, self.plog.log_end_offset)
        floor = self.store.floor("t", 0)
        if floor is not None:
            target = min(target, floor)
        self.plog.delete_records_before(target)
        if self.sp.move_start(self.plog.log_start_offset):
            self.store.checkpoint(self.sp, self.now)
            self.held = {o: m for o, m in self.held.items() if o >= self.sp.spso}

    @rule()
    def checkpoint(self):
        self.store.checkpoint(self.sp, self.now)

    @rule()
    def drop_and_recover(self):
        """Unload the in-memory state; the next use recovers it from the log."""
        self.store.unload(("g", "t", 0), self.now, checkpoint=False)
        self.sp = self.store.get("g", self.topic, 0, self.now)
        self.held = {}  # acquisitions are not durable

    # --- invariants ------------------------------------------------------------------------

    @invariant()
    def no_record_is_held_twice_and_counts_stay_within_the_limit(self):
        runs = self.sp.runs
        for a, b in zip(runs, runs[1:]):
            assert a.last < b.first
        for r in runs:
            assert self.sp.spso <= r.first <= r.last < self.sp.speo
            assert 0 <= r.count <= self.limit
            if r.state == ACQUIRED:
                for o in range(r.first, r.last + 1):
                    assert self.held.get(o) == r.member

    @invariant()
    def counts_match_the_runs_and_the_window_stays_near_its_cap(self):
        runs = self.sp.runs
        assert self.sp.window_records == sum(r.last - r.first + 1 for r in runs)
        assert self.sp.available_records == sum(r.last - r.first + 1 for r in runs
                                                if r.state == AVAILABLE)
        # the window grows only below the cap, by at most one batch past it (batches <= 6)
        assert self.sp.window_records <= self.sp.max_in_flight_records + 5

    @invariant()
    def spso_never_moves_back(self):
        assert self.sp.spso >= self.last_spso
        self.last_spso = self.sp.spso

    @invariant()
    def recovery_equals_the_live_state_without_acquisitions(self):
        durable = self.store.index[("t", 0)]["g"]
        recovered = self.store.recover("g", "t", self.plog, durable)
        assert recovered.durable_view(self.view) == self.sp.durable_view(self.view)

    @invariant()
    def the_latest_checkpoint_and_its_deltas_survive_log_cleaning(self):
        durable = self.store.index[("t", 0)]["g"]
        assert self.plog.log_start_offset <= durable.checkpoint_offset


TestSharePartition = SharePartitionMachine.TestCase
TestSharePartition.settings = settings(max_examples=120, stateful_step_count=40, deadline=None)
