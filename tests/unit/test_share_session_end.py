"""Share groups in a whole in-process broker with a manual clock: records stay acquired
until the share session ends (the final-epoch acknowledgement after or before the leave
heartbeat), group configs override the broker keys for their group only, and a
read_committed group stops at the last stable offset and never acquires aborted data."""

from __future__ import annotations

from construct import Container

from kipper.broker.log.partition import CLIENT
from kipper.broker.share.states import ACCEPT, RENEW
from kipper.broker.txn.markers import marker_batch
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.inproc import InProcessBroker

GROUP = "g"


def broker(**overrides):
    inproc = InProcessBroker(**{"group.share.auto.offset.reset": "earliest", **overrides})
    inproc.state.topics.create("t", 1)
    return inproc


def append(inproc, values, **batch):
    plog = inproc.state.topics.get("t").partitions[0]
    data = records.build_batch([(None, v) for v in values], **batch)
    return plog.append(data, b.split_batches(data), inproc.now, CLIENT)


def marker(inproc, producer_id, committed):
    plog = inproc.state.topics.get("t").partitions[0]
    plog.append_batch(marker_batch(producer_id, 0, committed, 0, inproc.now), inproc.now)


def join(inproc, member, epoch=0):
    req = Container(group_id=GROUP, member_id=member, member_epoch=epoch, rack_id=None,
                    subscribed_topic_names=["t"] if epoch == 0 else None)
    return inproc.state.share.heartbeat(req, client_id="c", client_host="/h", now=inproc.now)


def acquire(inproc, member, max_records=100, batch_optimized=True):
    share = inproc.state.share
    ranges, _ = share.acquire(GROUP, member, inproc.state.topics.get("t"), 0, inproc.now,
                              max_records=max_records, max_bytes=1 << 20,
                              batch_optimized=batch_optimized)
    return ranges


def session(inproc, member):
    code, _, s = inproc.state.share.open_session(GROUP, member, 0, inproc.now, fetch=True)
    assert code == ErrorCode.NONE
    s.add((inproc.state.topics.get("t").topic_id, 0))
    return s


def ack(inproc, member, first, last, kind=ACCEPT):
    error, _ = inproc.state.share.acknowledge(GROUP, member, inproc.state.topics.get("t"), 0,
                                              [(first, last, [kind])], inproc.now,
                                              allow_renew=True)
    return error


# --- the end of a share session, not the leave, releases ------------------------------------------

def test_final_acknowledgement_after_the_leave_heartbeat_still_applies():
    inproc = broker()
    append(inproc, [b"a", b"b", b"c"])
    join(inproc, "m")
    session(inproc, "m")
    assert acquire(inproc, "m") == [(0, 2, 1)]
    assert join(inproc, "m", epoch=-1)["error_code"] == 0  # the leave arrives first
    join(inproc, "other")
    assert acquire(inproc, "other") == []  # still held: the final acknowledgement may come
    assert ack(inproc, "m", 0, 2) == ErrorCode.NONE
    inproc.state.share.close_session(GROUP, "m", inproc.now)  # epoch -1 ends it
    append(inproc, [b"d"])
    [(first, last, count)] = acquire(inproc, "other")
    assert first == last > 2 and count == 1  # only the new record: nothing of 0-2 came back


def test_final_acknowledgement_before_the_leave_and_the_rest_released_at_session_end():
    inproc = broker()
    append(inproc, [b"a", b"b", b"c"])
    join(inproc, "m")
    session(inproc, "m")
    acquire(inproc, "m")
    assert ack(inproc, "m", 0, 0) == ErrorCode.NONE
    inproc.state.share.close_session(GROUP, "m", inproc.now)
    join(inproc, "m", epoch=-1)
    join(inproc, "other")
    assert acquire(inproc, "other") == [(1, 2, 2)]


def test_a_member_evicted_for_silence_loses_its_session_and_records_at_once():
    inproc = broker(**{"group.share.min.session.timeout.ms": "1000",
                       "group.share.session.timeout.ms": "2000",
                       "group.share.min.heartbeat.interval.ms": "100",
                       "group.share.heartbeat.interval.ms": "500"})
    append(inproc, [b"a"])
    join(inproc, "m")
    session(inproc, "m")
    acquire(inproc, "m")
    join(inproc, "other")
    inproc.now += 1500
    join(inproc, "other", epoch=inproc.state.share.coordinator.groups[GROUP].members["other"].member_epoch)
    inproc.now += 600
    inproc.state.share.tick(inproc.now)
    assert (GROUP, "m") not in inproc.state.share.sessions.sessions
    assert acquire(inproc, "other") == [(0, 0, 2)]


# --- group configs over the broker keys -------------------------------------------------------------

def test_group_configs_override_the_broker_keys_for_their_group_only():
    inproc = broker()
    configs = inproc.state.group_configs
    configs.set(GROUP, "share.record.lock.duration.ms", "1000")
    configs.set(GROUP, "share.delivery.count.limit", "2")
    configs.set(GROUP, "share.renew.acknowledge.enable", "false")
    share = inproc.state.share
    assert share.lock_duration_ms(GROUP) == 1000
    assert share.lock_duration_ms("another") == 30000
    append(inproc, [b"a"])
    join(inproc, "m")
    session(inproc, "m")
    acquire(inproc, "m")
    assert ack(inproc, "m", 0, 0, RENEW) == ErrorCode.INVALID_RECORD_STATE
    inproc.now += 1000
    share.tick(inproc.now)  # the group's 1 s lock ran out
    assert acquire(inproc, "m") == [(0, 0, 2)]
    inproc.now += 1000
    share.tick(inproc.now)  # count 2 = the group's limit: archived
    assert acquire(inproc, "m") == []


def test_a_group_value_outside_narrowed_broker_bounds_is_capped():
    inproc = broker(**{"group.share.record.lock.duration.max.ms": "40000"})
    inproc.state.group_configs.set(GROUP, "share.record.lock.duration.ms", "60000")
    assert inproc.state.share.lock_duration_ms(GROUP) == 40000


# --- read_committed -------------------------------------------------------------------------------------

def test_read_committed_stops_at_the_lso_and_skips_aborted_batches():
    inproc = broker()
    inproc.state.group_configs.set(GROUP, "share.isolation.level", "read_committed")
    append(inproc, [b"c1", b"c2"], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    marker(inproc, 7, committed=True)                                   # offset 2
    append(inproc, [b"x1"], producer_id=8, producer_epoch=0, base_sequence=0, transactional=True)
    marker(inproc, 8, committed=False)                                  # offset 4
    append(inproc, [b"o1"], producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    append(inproc, [b"plain"])                                          # offset 6, past the LSO
    join(inproc, "m")
    session(inproc, "m")
    assert acquire(inproc, "m") == [(0, 1, 1)]  # aborted 3 is a gap; the open txn at 5 stalls
    assert ack(inproc, "m", 0, 1) == ErrorCode.NONE
    assert acquire(inproc, "m") == []
    marker(inproc, 9, committed=True)
    assert acquire(inproc, "m") == [(5, 6, 1)]
    sp = inproc.state.share.store.loaded[(GROUP, "t", 0)]
    assert ack(inproc, "m", 5, 6) == ErrorCode.NONE
    assert sp.spso == 7  # over the markers and the aborted batch


def test_read_uncommitted_delivers_aborted_data_and_passes_open_transactions():
    inproc = broker()
    append(inproc, [b"x1"], producer_id=8, producer_epoch=0, base_sequence=0, transactional=True)
    marker(inproc, 8, committed=False)
    append(inproc, [b"o1"], producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    join(inproc, "m")
    session(inproc, "m")
    assert acquire(inproc, "m") == [(0, 0, 1), (2, 2, 1)]


def test_record_limit_cuts_a_batch_and_batch_optimized_takes_it_whole():
    inproc = broker()
    append(inproc, [b"%d" % i for i in range(10)])
    join(inproc, "m")
    session(inproc, "m")
    assert acquire(inproc, "m", max_records=4, batch_optimized=False) == [(0, 3, 1)]
    assert acquire(inproc, "m", max_records=2) == [(4, 9, 1)]
