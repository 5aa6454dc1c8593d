"""Stateful property test of a streams group (KIP-1071): members of two processes join,
heartbeat (reporting what they own or not), leave, crash, and time passes, in any order,
with one standby per stateful task. A member still runs what it is told to give up until the
heartbeat that reports it gone.

Members behave as Kafka Streams does: they take what an answer gives at once and drop
everything when fenced. Invariants, on the members' side and in the coordinator's books: no
task is active on two members; no process holds a task twice (active and standby, or twice
the same role); once members keep heartbeating, every task is active on exactly one member and
the group is Stable. A member whose session ran out is counted as owning nothing from the
moment it is evicted (it learns it on its next heartbeat, as in Kafka).
"""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kipper.protocol.errors import ErrorCode
from tests.support.streams_member import INTERVAL, REBALANCE, SESSION, Member, make

IDS = ("a1", "a2", "b1")  # the letter is the process
ALL_TASKS = {(sid, p) for sid in ("0", "1") for p in range(3)}
LOST = (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH)


class StreamsGroupMachine(RuleBasedStateMachine):
    @initialize()
    def start(self):
        self.c, _ = make(num_standby_replicas=1, session_timeout_ms=SESSION)
        self.now = 0
        self.members: dict[str, Member] = {}
        self.revoking: dict[str, set] = {}  # member -> tasks it was told to give up and still runs

    def _beat(self, member: Member, report: bool) -> None:
        """A heartbeat; a report of what the member owns comes once it finished revoking."""
        pending = member.report  # it holds tasks it has not reported yet
        member.report = (pending and report) or member.epoch == 0
        if member.report:
            self.revoking[member.member_id] = set()
        before = set(member.active)
        resp = member.beat(self.now)
        member.report = member.report or (pending and not report)
        # what it was told to give up it still runs until the heartbeat that reports it gone
        self.revoking[member.member_id] = self.revoking.get(member.member_id, set()) | (before - member.active)
        if resp["error_code"] in LOST:  # fenced or evicted: drop everything and rejoin later
            member.epoch, member.active, member.standby, member.warmup, member.report = 0, set(), set(), set(), True
            self.revoking[member.member_id] = set()
        else:
            assert resp["error_code"] == 0, resp

    @rule(member_id=st.sampled_from(IDS), report=st.booleans())
    def heartbeat(self, member_id, report):
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = Member(self.c, member_id, process=f"process-{member_id[0]}")
        self._beat(member, report)

    @rule(member_id=st.sampled_from(IDS))
    def leave(self, member_id):
        member = self.members.pop(member_id, None)
        if member is not None and member.epoch > 0:
            member.leave(self.now)

    @rule(member_id=st.sampled_from(IDS))
    def crash(self, member_id):
        self.members.pop(member_id, None)  # it just stops: its session will run out

    @rule(ms=st.sampled_from((100, 1_000, SESSION)))
    def time_passes(self, ms):
        self.now += ms
        self.c.tick(self.now)

    def _live(self):
        group = self.c.groups.get("app")
        known = group.members if group is not None else {}
        return [m for m in self.members.values() if m.member_id in known]

    @invariant()
    def no_task_runs_twice(self):
        active: dict = {}
        held: set = set()
        for m in self._live():
            for task in m.active | self.revoking.get(m.member_id, set()):
                assert task not in active, f"{task} active on {active[task]} and {m.member_id}"
                active[task] = m.member_id
            for task in m.active | m.standby:
                assert (m.process, task) not in held, f"process {m.process} holds {task} twice"
                held.add((m.process, task))
        group = self.c.groups.get("app")
        if group is not None:
            books: dict = {}
            for m in group.members.values():
                for sid, ps in list(m.assigned.active.items()) + list(m.pending_revocation.active.items()):
                    for p in ps:
                        assert (sid, p) not in books, f"the books give {(sid, p)} to two members"
                        books[(sid, p)] = m.member_id

    @rule()
    def members_settle(self):
        """Every member keeps heartbeating, reporting what it owns, as time passes. A member
        that missed the answer telling it to revoke learns nothing more until its rebalance
        timeout fences it (so in Kafka too); then it rejoins."""
        group = self.c.groups.get("app")
        live = self._live()
        if not live or len(live) != len(self.members) or set(group.members) != {m.member_id for m in live}:
            return  # a crashed member's session has not run out yet, or one has not joined
        for _ in range(2 * REBALANCE // INTERVAL):
            for m in live:
                m.report = True
                self._beat(m, True)
                self.no_task_runs_twice()
            self.now += INTERVAL
            self.c.tick(self.now)
            if (self.c.groups["app"].state == "Stable"
                    and sorted(t for m in live for t in m.active) == sorted(ALL_TASKS)):
                return
        raise AssertionError(f"the group did not settle: {self.c.groups['app'].state}, "
                             f"{[(m.member_id, sorted(m.active)) for m in live]}")


TestStreamsGroupMachine = StreamsGroupMachine.TestCase
TestStreamsGroupMachine.settings = settings(max_examples=100, stateful_step_count=20, deadline=None)
