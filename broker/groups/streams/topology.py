"""A streams group's topology and how it meets the topics (Kafka's StreamsTopology and
InternalTopicManager).

The first member to join brings the topology: subtopologies with their source topics,
the repartition topics they write and read, their state changelogs and the groups of
topics that must be co-partitioned. ``configure`` sets it against the topics as they
are: a missing source topic is the status MISSING_SOURCE_TOPICS; otherwise every
repartition topic gets the partition count of what feeds it (through chains of
repartition topics, in rounds, as Kafka's RepartitionTopics does), co-partitioned
topics are made to agree, and every changelog gets as many partitions as its
subtopology has tasks. Internal topics that do not exist are to be created (status
MISSING_INTERNAL_TOPICS; the handler creates them); one that exists with another
partition count is INCORRECTLY_PARTITIONED_TOPICS. A topology that cannot be resolved
at all is refused with STREAMS_INVALID_TOPOLOGY.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.config_values import java_capacity, java_hash_order

# StreamsGroupHeartbeatResponse.Status codes (KIP-1071)
STALE_TOPOLOGY, MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS = 0, 1, 2
MISSING_INTERNAL_TOPICS, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED, MISSING_CLIENT_TAGS = 3, 4, 5, 6


class InvalidTopology(Exception):
    """STREAMS_INVALID_TOPOLOGY, with Kafka's message."""


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: int = 0          # 0: decided by the coordinator
    replication_factor: int = 0  # 0: the broker's default
    configs: tuple[tuple[str, str], ...] | None = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...] = ()

    def copartitioned(self) -> list[set[str]]:
        """Each co-partition group as topic names (its indexes point into this subtopology)."""
        return [{self.source_topics[i] for i in sources} | {self.repartition_source_topics[i].name for i in repart}
                for sources, _, repart in self.copartition_groups]


@dataclass(frozen=True)
class Topology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]  # in the order the member sent them

    def by_id(self) -> dict[str, Subtopology]:
        return {s.subtopology_id: s for s in self.subtopologies}

    def same_as(self, other: "Topology") -> bool:
        return self.epoch == other.epoch and self.by_id() == other.by_id()

    def required_topics(self) -> set[str]:
        """Every topic the topology reads or keeps state in (its metadata hash covers them)."""
        return {t for s in self.subtopologies
                for t in (*s.source_topics, *(i.name for i in s.repartition_source_topics),
                          *(i.name for i in s.state_changelog_topics))}

    def source_topic_map(self) -> dict[str, str]:
        """topic -> the subtopology that reads it (offset commits are checked against it)."""
        return {t: s.subtopology_id for s in self.subtopologies
                for t in (*s.source_topics, *(i.name for i in s.repartition_source_topics))}

    def all_named_topics(self) -> list[str]:
        """Every topic the request names, as KafkaApis gathers them for its checks."""
        names: list[str] = []
        for s in self.subtopologies:
            for t in (*s.source_topics, *s.repartition_sink_topics,
                      *(i.name for i in s.repartition_source_topics), *(i.name for i in s.state_changelog_topics)):
                if t not in names:
                    names.append(t)
        return names


def _topic_info(t) -> TopicInfo:
    configs = t.get("topic_configs")
    return TopicInfo(t["name"], t["partitions"], t["replication_factor"],
                     None if configs is None else tuple((c["key"], c["value"]) for c in configs))


def from_wire(t) -> Topology:
    """The topology of a StreamsGroupHeartbeat request or a StreamsGroupTopologyValue record
    (the same fields)."""
    return Topology(t["epoch"], tuple(Subtopology(
        s["subtopology_id"], tuple(s["source_topics"]), tuple(s.get("source_topic_regex") or ()),
        tuple(_topic_info(i) for i in s["state_changelog_topics"]), tuple(s["repartition_sink_topics"]),
        tuple(_topic_info(i) for i in s["repartition_source_topics"]),
        tuple((tuple(g["source_topics"]), tuple(g["source_topic_regex"]), tuple(g["repartition_source_topics"]))
              for g in s["copartition_groups"]),
    ) for s in t["subtopologies"]))


def to_wire(topology: Topology) -> dict:
    """The StreamsGroupTopologyValue record's fields."""
    def info(i: TopicInfo) -> dict:
        return {"name": i.name, "partitions": i.partitions, "replication_factor": i.replication_factor,
                "topic_configs": [{"key": k, "value": v} for k, v in (i.configs or ())]}
    return {"epoch": topology.epoch, "subtopologies": [{
        "subtopology_id": s.subtopology_id, "source_topics": list(s.source_topics),
        "source_topic_regex": list(s.source_topic_regex),
        "state_changelog_topics": [info(i) for i in s.state_changelog_topics],
        "repartition_sink_topics": list(s.repartition_sink_topics),
        "repartition_source_topics": [info(i) for i in s.repartition_source_topics],
        "copartition_groups": [{"source_topics": list(a), "source_topic_regex": list(b),
                                "repartition_source_topics": list(c)} for a, b, c in s.copartition_groups],
    } for s in topology.subtopologies]}


# --- configuring against the topics ---------------------------------------------------------------

@dataclass(frozen=True)
class InternalTopic:
    name: str
    partitions: int
    replication_factor: int  # 0: the broker's default
    configs: dict


@dataclass(frozen=True)
class ConfiguredSubtopology:
    tasks: int
    source_topics: frozenset
    repartition_source: dict  # name -> InternalTopic
    repartition_sink: frozenset
    changelogs: dict          # name -> InternalTopic

    @property
    def stateful(self) -> bool:
        return bool(self.changelogs)


@dataclass(frozen=True)
class Configured:
    """The topology set against the topics: ready when ``status`` is None."""

    epoch: int
    subtopologies: dict | None  # sid -> ConfiguredSubtopology, sorted by id; None when it failed
    to_create: dict             # name -> InternalTopic
    status: tuple[int, str] | None

    @property
    def ready(self) -> bool:
        return self.status is None


def _summary(topics) -> str:
    """Kafka's summarizeTopics: up to three names, then a count."""
    topics = list(topics)
    if not topics:
        return "<none>"
    shown = ", ".join(topics[:3])
    return shown + (f" and {len(topics) - 3} additional topics" if len(topics) > 3 else "")


class _Misconfigured(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def configure(topology: Topology, partition_count) -> Configured:
    """``partition_count(name)``: a topic's partitions, or None when it does not exist.
    Raises InvalidTopology when no partition counts can be decided."""
    try:
        missing = sorted({t for s in topology.subtopologies for t in s.source_topics
                          if partition_count(t) is None})
        if missing:
            raise _Misconfigured(MISSING_SOURCE_TOPICS, f"Source topics {_summary(missing)} are missing.")
        decided = _decide(topology, partition_count)

        def count(name: str) -> int:
            n = partition_count(name)
            return n if n is not None else decided[name]

        def internal(i: TopicInfo) -> InternalTopic:
            return InternalTopic(i.name, i.partitions or decided[i.name], i.replication_factor, dict(i.configs or ()))
        subs = {}
        for s in sorted(topology.subtopologies, key=lambda s: s.subtopology_id):
            subs[s.subtopology_id] = ConfiguredSubtopology(
                max(count(t) for t in (*s.source_topics, *(i.name for i in s.repartition_source_topics))),
                frozenset(s.source_topics), {i.name: internal(i) for i in s.repartition_source_topics},
                frozenset(s.repartition_sink_topics), {i.name: internal(i) for i in s.state_changelog_topics})
        to_create = {}
        for s in subs.values():
            to_create.update(s.repartition_source)
            to_create.update(s.changelogs)
        capacity = java_capacity(len(to_create))
        for name in topology.required_topics():
            existing = partition_count(name)
            expected = to_create.get(name)
            if existing is not None and expected is not None:
                del to_create[name]
                if existing != expected.partitions:
                    raise _Misconfigured(INCORRECTLY_PARTITIONED_TOPICS,
                                         f"Existing topic {name} has different number of partitions: "
                                         f"expected {expected.partitions}, found {existing}")
        status = None
        if to_create:  # in the order of Kafka's java.util.HashMap of them, which its messages follow
            to_create = {n: to_create[n] for n in java_hash_order(to_create, capacity)}
            status = (MISSING_INTERNAL_TOPICS, "Internal topics are missing: " + _summary(to_create))
        return Configured(topology.epoch, subs, to_create, status)
    except _Misconfigured as exc:
        return Configured(topology.epoch, None, {}, (exc.status, str(exc)))


def _decide(topology: Topology, partition_count) -> dict[str, int]:
    """Partition counts of the internal topics: repartition topics, then co-partitioning,
    then changelogs (Kafka's InternalTopicManager.decidePartitionCounts)."""
    decided: dict[str, int] = {}

    def count(name: str) -> int | None:
        n = partition_count(name)
        return n if n is not None else decided.get(name)
    decided.update(_repartition_counts(topology, count))
    fixed = {i.name for s in topology.subtopologies for i in s.repartition_source_topics if i.partitions}
    flexible = {i.name for s in topology.subtopologies for i in s.repartition_source_topics if not i.partitions}
    for s in topology.subtopologies:
        for group in s.copartitioned():
            decided.update(_copartition(group, fixed, flexible, count))
    for s in topology.subtopologies:
        sizes = [count(t) for t in (*s.source_topics, *(i.name for i in s.repartition_source_topics))]
        if not sizes:
            raise InvalidTopology(f"No source topics found for subtopology {s.subtopology_id}")
        for i in s.state_changelog_topics:
            decided[i.name] = max(sizes)
    return decided


def _repartition_counts(topology: Topology, count) -> dict[str, int]:
    counts = {i.name: i.partitions for s in topology.subtopologies for i in s.repartition_source_topics if i.partitions}
    while True:
        needed = progress = False
        for s in topology.subtopologies:
            for sink in s.repartition_sink_topics:
                if sink in counts:
                    continue
                candidates = [counts[i.name] for i in s.repartition_source_topics if i.name in counts]
                candidates += [n for n in (count(t) for t in s.source_topics) if n is not None]
                if candidates:
                    counts[sink] = max(candidates)
                    progress = True
                else:
                    needed = True
        if not needed:
            break
        if not progress:
            raise InvalidTopology("Failed to compute number of partitions for all repartition topics. "
                                  "There may be loops in the topology that cannot be resolved.")
    for s in topology.subtopologies:
        if any(i.name not in counts for i in s.repartition_source_topics):
            raise InvalidTopology("Failed to compute number of partitions for all repartition topics, because "
                                  "a repartition source topic is never used as a sink topic.")
    return counts


def _copartition(group: set[str], fixed: set[str], flexible: set[str], count) -> dict[str, int]:
    """Kafka's CopartitionedTopicsEnforcer.enforce for one co-partition group."""
    if not group:
        return {}
    repartition = {t: count(t) for t in group if t in fixed or t in flexible}
    others = {t: count(t) for t in group if t not in repartition}
    if set(repartition) == group:
        if fixed:
            first = count(next(iter(fixed)))
            if any(count(t) != first for t in fixed):
                raise _Misconfigured(INCORRECTLY_PARTITIONED_TOPICS, "Following topics do not have the same "
                                     f"number of partitions: [{_java_map(repartition)}]")
            n = first
        else:
            n = max(repartition.values())
            if n == 0:
                raise InvalidTopology("All topics in the copartition group had undefined partition number: "
                                      f"[{', '.join(repartition)}]")
    else:
        n = next(iter(others.values()))
        if any(v != n for v in others.values()):
            raise _Misconfigured(INCORRECTLY_PARTITIONED_TOPICS, "Following topics do not have the same "
                                 f"number of partitions: [{_java_map(others)}]")
    for t, v in repartition.items():
        if t in fixed and v != n:
            raise _Misconfigured(INCORRECTLY_PARTITIONED_TOPICS, f"Number of partitions [{v}] of repartition "
                                 f"topic [{t}] doesn't match number of partitions [{n}] of the source topic.")
    return {t: n for t in repartition}


def _java_map(counts: dict[str, int]) -> str:
    """A TreeMap's toString: {a=1, b=2}."""
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) + "}"


def describe(topology: Topology | None, configured: Configured | None) -> dict | None:
    """StreamsGroupDescribe's topology: the configured one when it is ready (partition
    counts decided), else the one the members sent."""
    def info(i) -> dict:
        if isinstance(i, InternalTopic):
            return {"name": i.name, "partitions": i.partitions, "replication_factor": i.replication_factor,
                    "topic_configs": [{"key": k, "value": v} for k, v in i.configs.items()]}
        return {"name": i.name, "partitions": i.partitions, "replication_factor": i.replication_factor,
                "topic_configs": [{"key": k, "value": v} for k, v in (i.configs or ())]}
    if configured is not None and configured.ready and topology is not None and configured.epoch == topology.epoch:
        return {"epoch": configured.epoch, "subtopologies": [{
            "subtopology_id": sid, "source_topics": sorted(s.source_topics),
            "repartition_sink_topics": sorted(s.repartition_sink),
            "state_changelog_topics": [info(i) for _, i in sorted(s.changelogs.items())],
            "repartition_source_topics": [info(i) for _, i in sorted(s.repartition_source.items())],
        } for sid, s in configured.subtopologies.items()]}
    if topology is None:
        return None
    return {"epoch": topology.epoch, "subtopologies": [{
        "subtopology_id": s.subtopology_id, "source_topics": sorted(s.source_topics),
        "repartition_sink_topics": sorted(s.repartition_sink_topics),
        "state_changelog_topics": [info(i) for i in sorted(s.state_changelog_topics, key=lambda i: i.name)],
        "repartition_source_topics": [info(i) for i in sorted(s.repartition_source_topics, key=lambda i: i.name)],
    } for s in sorted(topology.subtopologies, key=lambda s: s.subtopology_id)]}
