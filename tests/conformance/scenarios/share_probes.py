"""The share-group probes of versions.py (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
ShareAcknowledge and the share-group offsets APIs), with the helpers share.py's scenarios use."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k


def share_join(run, group: str, topics: list[str], member: str = "m0", *, conn: str = "main", label="share join"):
    return run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
        "group_id": group, "member_id": run.name(member), "member_epoch": 0, "rack_id": None,
        "subscribed_topic_names": topics}, conn=conn, label=label)


def share_fetch(run, group: str, topic: str, *, member: str = "m0", epoch: int = 0, version: int | None = None,
                acks: list | None = None, max_wait_ms: int = 200, max_records: int = 100, conn: str = "main",
                label: str = "share fetch", partitions=(0,)):
    v = k.top(k.SHARE_FETCH) if version is None else version
    return run.call(k.SHARE_FETCH, v, share_fetch_body(run, group, topic, member=member, epoch=epoch, acks=acks,
                                                       max_wait_ms=max_wait_ms, max_records=max_records,
                                                       partitions=partitions), conn=conn, label=label)


def share_fetch_body(run, group: str, topic: str, *, member: str = "m0", epoch: int = 0, acks: list | None = None,
                     max_wait_ms: int = 200, max_records: int = 100, partitions=(0,)) -> dict:
    return {
        "group_id": group, "member_id": run.name(member), "share_session_epoch": epoch, "max_wait_ms": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": max_records,
        "share_acquire_mode": 0, "is_renew_ack": False,
        "topics": [{"topic_id": k.topic_id(run, topic), "partitions": [
            {"partition_index": p, "partition_max_bytes": 1 << 20,
             "acknowledgement_batches": acks or []} for p in partitions]}],
        "forgotten_topics_data": []}


def share_setup(run, records: int = 3) -> tuple[str, str]:
    t = k.create_topic(run)
    k.produce(run, t, k.batch(records))
    group = run.name("sg")
    k.group_config(run, group, {"share.auto.offset.reset": "earliest"})
    share_join(run, group, [t])
    return t, group


def _share_heartbeat(run, v):
    t = k.create_topic(run)
    resp = share_join(run, run.name("sg"), [t])
    run.call(k.SHARE_GROUP_HEARTBEAT, v, {"group_id": run.name("sg"), "member_id": run.name("m0"),
                                          "member_epoch": resp.get("member_epoch", -1), "rack_id": None,
                                          "subscribed_topic_names": None}, label="heartbeat")
    run.call(k.SHARE_GROUP_HEARTBEAT, v, {"group_id": run.name("sg"), "member_id": run.name("m0"),
                                          "member_epoch": -1, "rack_id": None, "subscribed_topic_names": None},
             label="leave")


def _share_describe(run, v):
    t = k.create_topic(run)
    share_join(run, run.name("sg"), [t])
    run.call(k.SHARE_GROUP_DESCRIBE, v, {"group_ids": [run.name("sg"), run.name("nogroup")],
                                         "include_authorized_operations": True})


def _share_fetch(run, v):
    t, group = share_setup(run)
    share_fetch(run, group, t, version=v)
    share_fetch(run, group, t, version=v, epoch=1, acks=[{"first_offset": 0, "last_offset": 2,
                                                          "acknowledge_types": [1]}], label="acknowledge in a fetch")
    share_fetch(run, group, t, version=v, epoch=-1, label="close the session")


def _share_acknowledge(run, v):
    t, group = share_setup(run)
    share_fetch(run, group, t)
    run.call(k.SHARE_ACKNOWLEDGE, v, {
        "group_id": group, "member_id": run.name("m0"), "share_session_epoch": 1, "is_renew_ack": False,
        "topics": [{"topic_id": k.topic_id(run, t), "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": 0, "last_offset": 1, "acknowledge_types": [1]},
            {"first_offset": 2, "last_offset": 2, "acknowledge_types": [2]}]}]}]})
    share_fetch(run, group, t, epoch=2, label="fetch the released record again")


def describe_share_offsets(run, group: str, topics: dict | None, *, version: int | None = None,
                           label: str = "describe share group offsets"):
    v = k.top(k.DESCRIBE_SHARE_GROUP_OFFSETS) if version is None else version
    return run.call(k.DESCRIBE_SHARE_GROUP_OFFSETS, v, {"groups": [{"group_id": group, "topics": None if topics is None
                    else [{"topic_name": t, "partitions": list(ps)} for t, ps in topics.items()]}]}, label=label)


def alter_share_offsets(run, group: str, offsets: dict, *, version: int | None = None,
                        label: str = "alter share group offsets"):
    """``offsets``: {topic: {partition: start offset}}."""
    v = k.top(k.ALTER_SHARE_GROUP_OFFSETS) if version is None else version
    return run.call(k.ALTER_SHARE_GROUP_OFFSETS, v, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": [{"partition_index": p, "start_offset": o} for p, o in ps.items()]}
        for t, ps in offsets.items()]}, label=label)


def delete_share_offsets(run, group: str, topics: list, *, version: int | None = None,
                         label: str = "delete share group offsets"):
    v = k.top(k.DELETE_SHARE_GROUP_OFFSETS) if version is None else version
    return run.call(k.DELETE_SHARE_GROUP_OFFSETS, v, {"group_id": group,
                                                      "topics": [{"topic_name": t} for t in topics]}, label=label)


def _describe_share_offsets(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(5))
    alter_share_offsets(run, run.name("sg"), {t: {0: 2}})
    describe_share_offsets(run, run.name("sg"), {t: [0], run.name("nosuch"): [0]}, version=v)
    describe_share_offsets(run, run.name("sg"), None, version=v, label="every share-partition")


def _alter_share_offsets(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(5))
    alter_share_offsets(run, run.name("sg"), {t: {0: 3, 7: 1}, run.name("nosuch"): {0: 0}}, version=v)
    describe_share_offsets(run, run.name("sg"), None)


def _delete_share_offsets(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(5))
    alter_share_offsets(run, run.name("sg"), {t: {0: 1}})
    delete_share_offsets(run, run.name("sg"), [run.name("nosuch"), t], version=v)
    delete_share_offsets(run, run.name("sg"), [t], version=v, label="no state left")
