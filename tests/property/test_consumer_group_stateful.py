"""Stateful property test of a KIP-848 consumer group: members join, heartbeat
(acknowledging or not), lose answers, leave, crash, change their subscription,
topics appear, and time passes, in any order.

Members are modelled as real consumers: they take an assignment as soon as an
answer brings it and drop everything when fenced. Invariants: no partition is
owned by two members at once (on the members' side and in the coordinator's
books); once members stop changing and keep heartbeating, every subscribed
partition is owned by exactly one member that subscribes to it, and the group is
Stable. A member whose session ran out is a zombie until its next heartbeat
tells it so, in Kafka as here; it is counted as owning nothing from the moment
it is evicted.
"""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kipper.broker.groups.consumer import ConsumerGroupCoordinator, ConsumerGroupSettings
from kipper.broker.log.topics import TopicManager
from kipper.protocol.errors import ErrorCode
from tests.unit.test_consumer_group_coordinator import request

SESSION, REBALANCE = 10_000, 60_000
IDS = ("m1", "m2", "m3", "m4")
LOST = (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH)


class Member:
    def __init__(self, member_id: str, subscription: tuple[str, ...]):
        self.member_id = member_id
        self.subscription = subscription
        self.epoch = 0
        self.owned: dict = {}
        self.full = True       # the next heartbeat sends everything (join, after a lost answer)
        self.unacked = False   # holds an assignment it has not reported yet

    def beat(self, c, now: int, *, report: bool, lose: bool = False) -> dict:
        full = self.full
        send_owned = full or (report and self.unacked)
        req = request("g", self.member_id, self.epoch, topics=list(self.subscription) if full else None,
                      owned=self.owned if send_owned else None, rebalance_timeout=REBALANCE if full else -1)
        resp = c.heartbeat(req, version=1, client_id="c", client_host="/h", now=now)
        if resp["error_code"] in LOST:
            self.epoch, self.owned, self.full, self.unacked = 0, {}, True, False
            return resp
        assert resp["error_code"] == 0, resp
        if lose:  # the coordinator acted, the member never heard
            self.full = True
            return resp
        self.full = False
        if send_owned:
            self.unacked = False
        self.epoch = resp["member_epoch"]
        if resp["assignment"] is not None:
            self.owned = {tp["topic_id"]: set(tp["partitions"])
                          for tp in resp["assignment"]["topic_partitions"] if tp["partitions"]}
            self.unacked = True
        return resp

    def held(self):
        return {(tid, p) for tid, parts in self.owned.items() for p in parts}


class ConsumerGroupMachine(RuleBasedStateMachine):
    @initialize(partitions=st.integers(1, 6), assignor=st.sampled_from(["uniform", "range"]))
    def setup(self, partitions, assignor):
        self.topics = TopicManager(num_partitions=1, auto_create=False)
        self.topics.create("t", partitions)
        self.c = ConsumerGroupCoordinator(
            ConsumerGroupSettings(session_timeout_ms=SESSION, heartbeat_interval_ms=1000,
                                  assignors=(assignor, "uniform" if assignor == "range" else "range")),
            self.topics)
        self.now = 0
        self.members: dict[str, Member] = {}

    # --- what members do -----------------------------------------------------------------

    @precondition(lambda self: len(self.members) < len(IDS))
    @rule(data=st.data(), both=st.booleans())
    def join(self, data, both):
        member_id = data.draw(st.sampled_from([m for m in IDS if m not in self.members]))
        self.members[member_id] = m = Member(member_id, ("t", "u") if both else ("t",))
        m.beat(self.c, self.now, report=True)

    @precondition(lambda self: self.members)
    @rule(data=st.data(), report=st.booleans(), lose=st.booleans())
    def heartbeat(self, data, report, lose):
        m = self.members[data.draw(st.sampled_from(sorted(self.members)))]
        m.beat(self.c, self.now, report=report, lose=lose and data.draw(st.integers(0, 3)) == 0)

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def leave(self, data):
        member_id = data.draw(st.sampled_from(sorted(self.members)))
        m = self.members.pop(member_id)
        req = request("g", member_id, -1, topics=None, rebalance_timeout=-1)
        resp = self.c.heartbeat(req, version=1, client_id="c", client_host="/h", now=self.now)
        assert resp["error_code"] in (0, ErrorCode.UNKNOWN_MEMBER_ID) or m.epoch == 0

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def crash(self, data):
        # gone without a word; the coordinator finds out when its session ends
        self.members.pop(data.draw(st.sampled_from(sorted(self.members))))

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def resubscribe(self, data):
        m = self.members[data.draw(st.sampled_from(sorted(self.members)))]
        m.subscription = ("t",) if "u" in m.subscription else ("t", "u")
        m.full = True

    @precondition(lambda self: "u" not in self.topics)
    @rule(partitions=st.integers(1, 4))
    def create_topic(self, partitions):
        self.topics.create("u", partitions)

    @rule(ms=st.integers(0, SESSION // 3))
    def time_passes(self, ms):
        self.now += ms
        self.tick()

    def tick(self):
        self.c.tick(self.now)
        group = self.c.groups.get("g")
        for m in self.members.values():
            if m.epoch != 0 and (group is None or m.member_id not in group.members):
                m.owned = {}  # evicted: a zombie, whatever it still believes

    # --- convergence --------------------------------------------------------------------------

    @rule()
    def members_settle(self):
        live = list(self.members.values())
        for step in range(4):  # outlive the sessions of crashed or fenced members
            self.now += SESSION // 2 + 1
            for m in live:
                m.beat(self.c, self.now, report=True)
            self.tick()
        for _ in range(3 * len(IDS) + 2):
            for m in live:
                m.beat(self.c, self.now, report=True)
                self.check_no_partition_has_two_owners()
        group = self.c.groups.get("g")
        if group is None or not live:
            return
        assert group.state == "Stable", group.state
        owners: dict = {}
        for m in live:
            assert m.epoch == group.assignment_epoch
            for tp in m.held():
                owners[tp] = m
        for name in {n for m in live for n in m.subscription}:
            topic = self.topics.get(name)
            if topic is None:
                continue
            for p in range(len(topic.partitions)):
                owner = owners.get((topic.topic_id, p))
                assert owner is not None, f"{name}-{p} is assigned to no one"
                assert name in owner.subscription

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def check_no_partition_has_two_owners(self):
        if not hasattr(self, "c"):
            return
        seen: set = set()
        for m in self.members.values():
            mine = m.held()
            assert not seen & mine, f"{sorted(seen & mine)} owned twice"
            seen |= mine
        group = self.c.groups.get("g")
        if group is None:
            return
        books: dict = {}
        for member in group.members.values():
            for tp in member.assignment.held():
                assert tp not in books, f"{tp} held by {books[tp]} and {member.member_id}"
                books[tp] = member.member_id
        assert books == group.holders


ConsumerGroupMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestConsumerGroup = ConsumerGroupMachine.TestCase
