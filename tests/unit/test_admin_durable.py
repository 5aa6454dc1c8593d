"""What the admin APIs change survives a restart with log.dirs: grown partitions,
dynamic broker configs, group configs, and a deleted share group's state staying
deleted; new partitions reach share groups on their next heartbeat."""

from __future__ import annotations

from construct import Container

from tests.support.inproc import InProcessBroker


def open_broker(path) -> InProcessBroker:
    return InProcessBroker(**{"log.dirs": str(path)})


def share_join(b, group: str, topic: str, member: str = "m1", epoch: int = 0):
    req = Container(group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                    subscribed_topic_names=[topic] if epoch == 0 else None)
    return b.state.groups.share_heartbeat(req, client_id="c", client_host="/h", now=b.now)


def test_grown_partitions_and_dynamic_configs_survive_a_restart(tmp_path):
    b = open_broker(tmp_path)
    topic = b.state.topics.create("t", 1)[2]
    b.state.topics.add_partitions(topic, 3)
    b.produce("t", 2, [(None, b"in the new partition", b.now)])
    b.state.alter_broker_configs("", {"log.retention.ms": "123456"})
    b.state.group_configs.replace("g", {"consumer.session.timeout.ms": "50000"})
    b.state.close()
    again = open_broker(tmp_path)
    assert len(again.state.topics.get("t").partitions) == 3
    assert again.state.topics.partition("t", 2).log_end_offset == 1
    assert again.state.topic_configs.value({}, "retention.ms") == "123456"
    assert again.state.group_configs.get("g", "consumer.session.timeout.ms") == "50000"
    again.state.close()


def test_a_deleted_share_group_stays_deleted_after_a_restart(tmp_path):
    b = open_broker(tmp_path)
    b.state.topics.create("t", 1)
    assert share_join(b, "sg", "t")["error_code"] == 0
    share_join(b, "sg", "t", epoch=-1)
    assert b.state.share.store.index[("t", 0)].get("sg") is not None
    assert b.state.groups.delete_group("sg", b.now) == 0
    b.state.close()
    again = open_broker(tmp_path)
    assert "sg" not in again.state.share.store.index.get(("t", 0), {})
    assert again.state.topics.partition("t", 0).start_hold is None
    again.state.close()


def test_new_partitions_reach_a_share_group_on_its_next_heartbeat():
    b = InProcessBroker()
    topic = b.state.topics.create("t", 1)[2]
    joined = share_join(b, "sg", "t")
    assert [tp["partitions"] for tp in joined["assignment"]["topic_partitions"]] == [[0]]
    b.state.topics.add_partitions(topic, 2)
    again = share_join(b, "sg", "t", member=joined["member_id"], epoch=joined["member_epoch"])
    assert [tp["partitions"] for tp in again["assignment"]["topic_partitions"]] == [[0, 1]]
