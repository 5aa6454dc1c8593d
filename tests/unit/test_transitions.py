"""broker/transitions.py: the one way a state machine's allowed moves are written and enforced."""

from __future__ import annotations

import pytest

from kipper.broker.groups.classic_model import TRANSITIONS as CLASSIC
from kipper.broker.groups.classic_model import Group
from kipper.broker.share.states import TRANSITIONS as RECORDS
from kipper.broker.transitions import IllegalTransition, Transitions
from kipper.broker.txn.states import TRANSITIONS as TRANSACTIONS


def test_transactions_share_records_and_classic_groups_use_the_one_helper():
    assert all(isinstance(t, Transitions) for t in (TRANSACTIONS, RECORDS, CLASSIC))


def test_a_move_the_table_does_not_allow_raises_and_says_which():
    doors = Transitions("door", {"open": {"closed"}, "closed": {"open", "locked"}, "locked": {"closed"}})
    doors.check("closed", "locked")
    with pytest.raises(IllegalTransition, match="door front: open -> locked is not allowed"):
        doors.check("open", "locked", "front")
    assert doors["locked"] == {"closed"} and set(doors) == {"open", "closed", "locked"}


def test_a_table_naming_a_state_it_does_not_list_is_refused_at_once():
    with pytest.raises(ValueError, match="ajar"):
        Transitions("door", {"open": {"ajar"}})


def test_a_classic_group_cannot_skip_the_rebalance():
    group = Group("g")
    with pytest.raises(IllegalTransition, match="classic group g: Empty -> Stable"):
        group.transition("Stable")
    assert group.state == "Empty"
