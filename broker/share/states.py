"""Record states of a share-partition and the moves allowed between them (KIP-932, seed 004).

    AVAILABLE --acquire--> ACQUIRED --accept--> ACKNOWLEDGED
        ^                     |  \--reject/gap, or release/expiry at the limit--> ARCHIVED
        +--release/expiry-----+
    ACQUIRED --renew--> ACQUIRED (a fresh lock, KIP-1222)

ACKNOWLEDGED and ARCHIVED are terminal; the SPSO moves over them. The numbers
are the ones the seed writes into SHARE_CHECKPOINT/SHARE_DELTA (ACQUIRED is
transient and never written). ``TRANSITIONS`` is enforced by broker/transitions.py
(``check_move``).
"""

from __future__ import annotations

from kipper.broker.transitions import IllegalTransition, Transitions  # noqa: F401  (share's too)
from kipper.protocol.share_records import ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE

STATE_NAMES = {AVAILABLE: "AVAILABLE", ACQUIRED: "ACQUIRED", ACKNOWLEDGED: "ACKNOWLEDGED",
               ARCHIVED: "ARCHIVED"}

TRANSITIONS = Transitions("record state", {
    AVAILABLE: {ACQUIRED},
    ACQUIRED: {AVAILABLE, ACKNOWLEDGED, ARCHIVED, ACQUIRED},
    ACKNOWLEDGED: set(),
    ARCHIVED: set(),
}, name=STATE_NAMES.__getitem__)
check_move = TRANSITIONS.check  # (current, target): raises IllegalTransition

TERMINAL = frozenset({ACKNOWLEDGED, ARCHIVED})

# AcknowledgeTypes in ShareFetch/ShareAcknowledge (RENEW from v2, KIP-1222).
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
ACK_TYPE_NAMES = {GAP: "GAP", ACCEPT: "ACCEPT", RELEASE: "RELEASE", REJECT: "REJECT", RENEW: "RENEW"}

