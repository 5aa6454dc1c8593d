"""KIP-848 consumer groups (ConsumerGroupHeartbeat) under a manual clock.

``Client`` plays a well-behaved consumer: it takes every assignment it is given
at once (revoking what is gone, adding what is new) and reports what it owns in
its next heartbeat, as librdkafka and the Java consumer do.
"""

from __future__ import annotations

from construct import Container

from kipper.broker.groups.consumer import ConsumerGroupCoordinator, ConsumerGroupSettings
from kipper.broker.log.topics import TopicManager
from kipper.protocol.errors import ErrorCode

SESSION, INTERVAL, REBALANCE = 10_000, 1_000, 30_000


def make(partitions=4, **settings):
    topics = TopicManager(num_partitions=1, auto_create=False)
    topics.create("t", partitions)
    s = ConsumerGroupSettings(session_timeout_ms=SESSION, heartbeat_interval_ms=INTERVAL, **settings)
    return ConsumerGroupCoordinator(s, topics), topics


def request(group="g", member="m1", epoch=0, topics=("t",), regex=None, owned="auto",
            rebalance_timeout=REBALANCE, instance=None, assignor=None):
    if owned == "auto":  # a join reports an empty list, later heartbeats nothing
        owned = {} if epoch == 0 else None
    return Container(
        group_id=group, member_id=member, member_epoch=epoch, instance_id=instance, rack_id=None,
        rebalance_timeout_ms=rebalance_timeout,
        subscribed_topic_names=None if topics is None else list(topics),
        subscribed_topic_regex=regex, server_assignor=assignor,
        topic_partitions=None if owned is None else [
            Container(topic_id=tid, partitions=sorted(ps)) for tid, ps in owned.items()])


class Client:
    def __init__(self, coordinator, member_id, topics=("t",), group="g", instance=None):
        self.c, self.member_id, self.topics, self.group = coordinator, member_id, topics, group
        self.instance = instance
        self.epoch = 0
        self.owned: dict = {}
        self.report = True  # send TopicPartitions on the next heartbeat
        self.last: dict = {}

    def beat(self, now=0, **kw):
        joining = self.epoch == 0
        req = request(self.group, self.member_id, self.epoch,
                      topics=self.topics if joining else None,
                      owned={} if joining else (self.owned if self.report else None),
                      rebalance_timeout=REBALANCE if joining else -1,
                      instance=self.instance if joining else None, **kw)
        resp = self.c.heartbeat(req, version=1, client_id="cid", client_host="/127.0.0.1", now=now)
        self.last = resp
        self.report = False
        if resp["error_code"] == 0:
            self.epoch = resp["member_epoch"]
            if resp["assignment"] is not None:
                self.owned = {tp["topic_id"]: set(tp["partitions"])
                              for tp in resp["assignment"]["topic_partitions"] if tp["partitions"]}
                self.report = True
        return resp

    def partitions(self) -> set:
        return {p for parts in self.owned.values() for p in parts}

    def leave(self, now=0, epoch=-1):
        req = request(self.group, self.member_id, epoch, topics=None, rebalance_timeout=-1,
                      instance=self.instance)
        return self.c.heartbeat(req, version=1, client_id="cid", client_host="/127.0.0.1", now=now)


def no_overlap(*clients):
    seen: set = set()
    for cl in clients:
        mine = {(tid, p) for tid, ps in cl.owned.items() for p in ps}
        assert not seen & mine, "a partition is owned by two members"
        seen |= mine


def settle(clients, now=0, rounds=6):
    for _ in range(rounds):
        for cl in clients:
            cl.beat(now)
            no_overlap(*clients)


# --- joining ------------------------------------------------------------------------------

def test_first_member_joins_with_epoch_zero_and_gets_every_partition_at_epoch_one():
    c, _ = make()
    a = Client(c, "a")
    resp = a.beat()
    assert resp["error_code"] == 0 and resp["member_id"] == "a"
    assert resp["member_epoch"] == 1
    assert resp["heartbeat_interval_ms"] == INTERVAL
    assert a.partitions() == {0, 1, 2, 3}
    assert c.groups["g"].state == "Stable"


def test_steady_heartbeat_keeps_the_epoch_and_sends_no_assignment():
    c, _ = make()
    a = Client(c, "a")
    a.beat()
    a.beat()
    resp = a.beat()
    assert resp["error_code"] == 0 and resp["member_epoch"] == 1 and resp["assignment"] is None


def test_version_zero_join_without_a_member_id_gets_one_from_the_coordinator():
    c, _ = make()
    resp = c.heartbeat(request(member=""), version=0, client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == 0 and resp["member_id"]
    assert resp["member_id"] in c.groups["g"].members


def test_version_one_requires_the_client_generated_member_id():
    c, _ = make()
    resp = c.heartbeat(request(member=""), version=1, client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.INVALID_REQUEST


def test_two_members_split_four_partitions_two_and_two():
    c, _ = make()
    a, b = Client(c, "a"), Client(c, "b")
    settle([a, b])
    assert len(a.partitions()) == 2 and len(b.partitions()) == 2
    assert a.partitions() | b.partitions() == {0, 1, 2, 3}
    assert a.epoch == b.epoch == c.groups["g"].group_epoch == 2
    assert c.groups["g"].state == "Stable"


# --- revocation before assignment ---------------------------------------------------------

def test_a_partition_goes_to_its_new_owner_only_after_the_old_owner_revoked_it():
    c, topics = make()
    tid = topics.get("t").topic_id
    a, b = Client(c, "a"), Client(c, "b")
    a.beat()
    assert a.partitions() == {0, 1, 2, 3}

    b.beat()  # joins: group epoch 2, target a={0,1} b={2,3}; a still holds 2 and 3
    assert b.epoch == 2 and b.partitions() == set()
    assert c.groups["g"].members["b"].state == "UNRELEASED_PARTITIONS"

    resp = a.beat()  # a is asked to give 2 and 3 up and stays at epoch 1 meanwhile
    assert resp["member_epoch"] == 1 and a.partitions() == {0, 1}
    assert c.groups["g"].members["a"].state == "UNREVOKED_PARTITIONS"
    assert c.groups["g"].state == "Reconciling"

    b.beat()  # a has not confirmed yet: b still gets nothing
    assert b.partitions() == set()
    assert c.groups["g"].holder(tid, 2) == "a"

    a.beat()  # a reports owning {0,1}: revocation done, a moves to epoch 2
    assert a.epoch == 2 and c.groups["g"].holder(tid, 2) is None
    b.beat()
    assert b.partitions() == {2, 3}
    assert c.groups["g"].members["b"].state == "STABLE"
    assert c.groups["g"].state == "Stable"


def test_a_heartbeat_without_topic_partitions_does_not_count_as_revocation():
    c, topics = make()
    tid = topics.get("t").topic_id
    a, b = Client(c, "a"), Client(c, "b")
    a.beat()
    b.beat()
    a.beat()  # told to revoke 2 and 3
    a.report = False  # its next heartbeat says nothing about what it owns
    resp = a.beat()
    assert resp["member_epoch"] == 1
    assert c.groups["g"].holder(tid, 3) == "a"


# --- leaving, sessions and rebalance timeouts ---------------------------------------------

def test_a_member_leaving_with_epoch_minus_one_frees_its_partitions_for_the_others():
    c, _ = make()
    a, b = Client(c, "a"), Client(c, "b")
    settle([a, b])
    epoch = c.groups["g"].group_epoch
    resp = b.leave()
    assert resp["error_code"] == 0 and resp["member_epoch"] == -1
    assert "b" not in c.groups["g"].members and c.groups["g"].group_epoch == epoch + 1
    assert c.groups["g"].state == "Assigning"
    a.beat()
    assert a.partitions() == {0, 1, 2, 3} and a.epoch == epoch + 1


def test_leave_of_an_unknown_member_is_refused():
    c, _ = make()
    Client(c, "a").beat()
    assert Client(c, "zz").leave()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_without_heartbeats_is_evicted_after_the_session_timeout():
    c, _ = make()
    a, b = Client(c, "a"), Client(c, "b")
    settle([a, b], now=0)
    c.tick(SESSION - 1)
    assert set(c.groups["g"].members) == {"a", "b"}
    a.beat(now=SESSION - 1)  # a keeps its session alive, b does not
    c.tick(SESSION)
    assert set(c.groups["g"].members) == {"a"}
    a.beat(now=SESSION)
    assert a.partitions() == {0, 1, 2, 3}
    assert b.beat(now=SESSION)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced():
    c, topics = make()
    tid = topics.get("t").topic_id
    a, b = Client(c, "a"), Client(c, "b")
    a.beat(now=0)
    b.beat(now=0)
    a.report = False
    a.beat(now=0)  # asked to revoke; keeps "owning" 2 and 3
    for now in range(1_000, REBALANCE, 5_000):  # heartbeats keep the session alive
        a.report = False
        a.beat(now=now)
        b.beat(now=now)
    assert c.groups["g"].holder(tid, 3) == "a"
    c.tick(REBALANCE)
    assert "a" not in c.groups["g"].members
    b.beat(now=REBALANCE)
    assert b.partitions() == {0, 1, 2, 3}


# --- epochs ---------------------------------------------------------------------------------

def test_a_greater_member_epoch_is_fenced():
    c, _ = make()
    a = Client(c, "a")
    a.beat()
    resp = c.heartbeat(request(member="a", epoch=5, topics=None, rebalance_timeout=-1), version=1,
                       client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert "greater member epoch (5)" in resp["error_message"]


def test_a_smaller_member_epoch_is_fenced_unless_it_is_the_previous_one_with_a_subset():
    c, topics = make()
    tid = topics.get("t").topic_id
    a, b = Client(c, "a"), Client(c, "b")
    settle([a, b])  # a: epoch 2, previous epoch 1, owns two partitions
    mine = {tid: a.partitions()}
    ok = c.heartbeat(request(member="a", epoch=1, topics=None, rebalance_timeout=-1, owned=mine),
                     version=1, client_id="x", client_host="/h", now=0)
    assert ok["error_code"] == 0 and ok["member_epoch"] == 2  # the bumping answer was lost
    without = c.heartbeat(request(member="a", epoch=1, topics=None, rebalance_timeout=-1),
                          version=1, client_id="x", client_host="/h", now=0)
    assert without["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    more = c.heartbeat(request(member="a", epoch=1, topics=None, rebalance_timeout=-1,
                               owned={tid: {0, 1, 2, 3}}), version=1, client_id="x", client_host="/h", now=0)
    assert more["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    old = c.heartbeat(request(member="a", epoch=0), version=1,
                      client_id="x", client_host="/h", now=0)
    assert old["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH


def test_an_unknown_member_with_a_nonzero_epoch_gets_unknown_member_id():
    c, _ = make()
    Client(c, "a").beat()
    resp = c.heartbeat(request(member="ghost", epoch=3, topics=None, rebalance_timeout=-1), version=1,
                       client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_heartbeat_to_a_group_that_does_not_exist_asks_the_member_to_rejoin():
    c, _ = make()
    resp = c.heartbeat(request(group="nope", member="a", epoch=4, topics=None, rebalance_timeout=-1),
                       version=1, client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert "nope" not in c.groups


# --- limits and validation ------------------------------------------------------------------

def test_group_max_size_refuses_a_new_member_but_not_the_existing_ones():
    c, _ = make(max_size=2)
    a, b, d = Client(c, "a"), Client(c, "b"), Client(c, "d")
    settle([a, b])
    resp = d.beat()
    assert resp["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert "maximum capacity of 2" in resp["error_message"]
    assert a.beat()["error_code"] == 0 and "d" not in c.groups["g"].members


def test_an_unknown_server_assignor_is_refused():
    c, _ = make()
    resp = c.heartbeat(request(assignor="sticky"), version=1, client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert "uniform, range" in resp["error_message"]


def test_members_asking_for_the_range_assignor_get_contiguous_ranges():
    c, topics = make(partitions=6)
    a, b = Client(c, "a"), Client(c, "b")
    for cl in (a, b):
        cl.beat(assignor="range")
    settle([a, b])
    assert a.partitions() == {0, 1, 2} and b.partitions() == {3, 4, 5}
    assert c.groups["g"].assignor == "range"


def test_invalid_requests_are_refused_with_invalid_request():
    c, topics = make()
    tid = topics.get("t").topic_id
    cases = {
        "GroupId can't be empty.": request(group=""),
        "RebalanceTimeoutMs must be provided in first request.": request(rebalance_timeout=-1),
        "TopicPartitions must be empty when (re-)joining.": request(owned={tid: {0}}),
        "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.": request(topics=None),
        "MemberEpoch is invalid.": request(epoch=-3, topics=None),
        "InstanceId can't be null.": request(epoch=-2, topics=None, rebalance_timeout=-1),
        "InstanceId can't be empty.": request(instance=""),
    }
    for message, req in cases.items():
        resp = c.heartbeat(req, version=1, client_id="x", client_host="/h", now=0)
        assert (resp["error_code"], resp["error_message"]) == (ErrorCode.INVALID_REQUEST, message)
    assert not c.groups


def test_a_regular_expression_that_is_not_re2_is_refused():
    c, _ = make()
    for pattern in ("[unclosed", "(?=t)t", r"(t)\1"):
        resp = c.heartbeat(request(topics=[], regex=pattern), version=1, client_id="x",
                           client_host="/h", now=0)
        assert resp["error_code"] == ErrorCode.INVALID_REGULAR_EXPRESSION, pattern
        assert pattern in resp["error_message"]


def test_transactional_commits_into_a_consumer_group_check_the_member_epoch():
    """TxnOffsetCommit (KIP-447) into a KIP-848 group: a stale member epoch is
    an illegal generation; a client that does not name its member passes."""
    c, _ = make()
    member = Client(c, "m1")
    member.beat()
    epoch = member.epoch
    assert c.validate_commit("g", "m1", epoch, api_version=-1, transactional=True) == ErrorCode.NONE
    assert c.validate_commit("g", "m1", epoch + 7, api_version=-1,
                             transactional=True) == ErrorCode.ILLEGAL_GENERATION
    assert c.validate_commit("g", "", -1, api_version=-1, transactional=True) == ErrorCode.NONE
    assert c.validate_commit("g", "nobody", epoch, api_version=-1,
                             transactional=True) == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.validate_commit("g", "m1", epoch, api_version=8) == ErrorCode.UNSUPPORTED_VERSION
