"""A well-behaved Kafka Streams member for driving the streams-group engine under a manual
clock: it takes every assignment it is given at once and reports what it owns in its next
heartbeat, as the Java StreamsMembershipManager does. Requests go through the real
StreamsGroupHeartbeat schema, so the engine sees what the broker would parse."""

from __future__ import annotations

from kipper.broker.groups.streams import StreamsGroupCoordinator, StreamsGroupSettings
from kipper.broker.log.topics import TopicManager
from kipper.protocol.messages import APIS

SESSION, INTERVAL, REBALANCE = 10_000, 1_000, 30_000
HEARTBEAT = APIS[88]


def wire(body: dict, version: int = 1):
    """A heartbeat request as the broker parses it."""
    schema = HEARTBEAT.request_schema(version)
    return schema.parse(schema.build(body))


def info(name: str, partitions: int = 0, configs=()) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": 0,
            "topic_configs": [{"key": k, "value": v} for k, v in configs]}


def word_count(source: str = "words", app: str = "app", epoch: int = 0) -> dict:
    """The topology of tests/java WordCount: source -> repartition -> counts (a changelog)."""
    rep = info(f"{app}-by-word-repartition", configs=(("cleanup.policy", "delete"),))
    chg = info(f"{app}-counts-changelog", configs=(("cleanup.policy", "compact"),))
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [rep["name"]], "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [], "state_changelog_topics": [chg],
         "repartition_sink_topics": [], "repartition_source_topics": [rep], "copartition_groups": []}]}


def make(partitions: int = 3, *, create_internal: bool = True, journal=None, **settings):
    """A coordinator over a topic ``words``; with ``create_internal`` the word count's
    internal topics exist already."""
    topics = TopicManager(num_partitions=partitions, auto_create=False)
    topics.create("words", partitions)
    if create_internal:
        topics.create("app-by-word-repartition", partitions)
        topics.create("app-counts-changelog", partitions)
    s = StreamsGroupSettings(**{"session_timeout_ms": SESSION, "heartbeat_interval_ms": INTERVAL,
                                "initial_rebalance_delay_ms": 0, "assignment_interval_ms": 0, **settings})
    return StreamsGroupCoordinator(s, topics, journal=journal), topics


def tasks_of(listed) -> set:
    return {(t["subtopology_id"], p) for t in listed for p in t["partitions"]}


def listed(tasks: set) -> list[dict]:
    by: dict = {}
    for sid, p in tasks:
        by.setdefault(sid, []).append(p)
    return [{"subtopology_id": sid, "partitions": sorted(ps)} for sid, ps in sorted(by.items())]


class Member:
    def __init__(self, coordinator, member_id: str, *, process: str | None = None, group: str = "app",
                 topology: dict | None = None, instance: str | None = None):
        self.c, self.member_id, self.group = coordinator, member_id, group
        self.process = process or f"process-{member_id}"
        self.topology = topology or word_count()
        self.instance = instance
        self.epoch = 0
        self.active: set = set()
        self.standby: set = set()
        self.warmup: set = set()
        self.report = True
        self.last: dict = {}
        self.result = None

    def body(self, **kw) -> dict:
        joining = self.epoch == 0
        body = {"group_id": self.group, "member_id": self.member_id, "member_epoch": self.epoch,
                "endpoint_information_epoch": -1, "instance_id": self.instance,
                "rebalance_timeout_ms": REBALANCE if joining else -1,
                "topology": self.topology if joining else None,
                "process_id": self.process if joining else None, "client_tags": [] if joining else None}
        if joining or self.report:
            body.update(active_tasks=listed(self.active), standby_tasks=listed(self.standby),
                        warmup_tasks=listed(self.warmup))
        body.update(kw)
        return body

    def beat(self, now: int = 0, version: int = 1, **kw) -> dict:
        self.result = self.c.heartbeat(wire(self.body(**kw), version), version=version, client_id="cid",
                                       client_host="/127.0.0.1", now=now)
        resp = self.last = self.result.body
        self.report = False
        if resp["error_code"] == 0:
            self.epoch = resp["member_epoch"]
            if resp["active_tasks"] is not None:
                self.active = tasks_of(resp["active_tasks"])
                self.standby = tasks_of(resp["standby_tasks"])
                self.warmup = tasks_of(resp["warmup_tasks"])
                self.report = True
        return resp

    def leave(self, now: int = 0, epoch: int = -1) -> dict:
        body = {"group_id": self.group, "member_id": self.member_id, "member_epoch": epoch,
                "endpoint_information_epoch": -1, "instance_id": self.instance}
        return self.c.heartbeat(wire(body), version=1, client_id="cid", client_host="/127.0.0.1", now=now).body

    def statuses(self) -> list[int]:
        return [s["status_code"] for s in self.last["status"]]


def settle(members, now: int = 0, rounds: int = 10) -> int:
    """Heartbeat every member in turn until nothing moves; no task ever has two active owners."""
    for _ in range(rounds):
        before = [(m.epoch, frozenset(m.active), frozenset(m.standby)) for m in members]
        for m in members:
            m.beat(now)
            owners: dict = {}
            for other in members:
                for task in other.active:
                    assert task not in owners, f"task {task} is active on {owners[task]} and {other.member_id}"
                    owners[task] = other.member_id
        now += INTERVAL
        if before == [(m.epoch, frozenset(m.active), frozenset(m.standby)) for m in members]:
            break
    return now
