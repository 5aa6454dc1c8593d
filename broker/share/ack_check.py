"""Which acknowledgement batches a share-partition refuses, with Kafka 4.4's error and text.

A batch (first, last, types) is checked before anything of it applies. A malformed one
(last before first, a types list of the wrong length, an unknown type) is INVALID_REQUEST
without text: Kafka's request check refuses it. The others are refused as Kafka's
SharePartition refuses them, with the text of its exception, which Kafka sends as the
partition's error message (ShareAcknowledge) or acknowledgement error message (ShareFetch):
offsets past what was acquired are INVALID_REQUEST, offsets it has no record of and
records not acquired by the member INVALID_RECORD_STATE.

Kafka words a refusal by batch or by offset as its cache of in-flight batches tracks the
records: ``InFlight`` keeps that cache's outline. Each acquisition of new records makes one
in-flight batch; it is tracked by offset from the moment part of it changes alone (an
acknowledgement of part of it or with a type per offset, part of it acquired again); a
refusal names the batch while it is tracked whole, even for a request that covers part of it.
Measured against Kafka 4.4: tests/conformance/scenarios/share_ack_texts.py.
"""

from __future__ import annotations

from bisect import bisect_right

from kipper.broker.share.states import ACQUIRED, GAP, REJECT, RENEW
from kipper.protocol.errors import ErrorCode

NOT_IN_CACHE = "Batch record not found. The request batch offsets are not found in the cache."
FIRST_PAST = "Batch record not found. The first offset in request is past acquired records."
LAST_PAST = "Batch record not found. The last offset in request is past acquired records."
NOT_ACQUIRED = "The batch cannot be acknowledged. The batch is not in the acquired state."
NOT_ACQUIRED_OFFSET = "The offset cannot be acknowledged. The offset is not acquired."
NOT_OWNER = "Member is not the owner of batch record"
NOT_OWNER_OFFSET = "Member is not the owner of offset"
RENEW_DISABLED = "Renewing acquisition locks is not enabled for the group."

_OK = (ErrorCode.NONE, None)


class InFlight:
    """The outline of Kafka's cache of in-flight batches: [first, last, tracked by offset]."""

    __slots__ = ("batches",)

    def __init__(self):
        self.batches: list[list] = []

    def added(self, first: int, last: int, *, by_offset: bool) -> None:
        self.batches.append([first, last, by_offset])

    def changed(self, first: int, last: int, *, by_offset: bool = False) -> None:
        """[first, last] changed alone: the batches it covers in part are tracked by offset."""
        for b in self.over(first, last):
            if by_offset or first > b[0] or last < b[1]:
                b[2] = True

    def drop_below(self, offset: int) -> None:
        gone = 0
        while gone < len(self.batches) and self.batches[gone][1] < offset:
            gone += 1
        del self.batches[:gone]

    def over(self, first: int, last: int) -> list:
        batches = self.batches
        i = max(bisect_right(batches, first, key=_head) - 1, 0)
        out = []
        while i < len(batches) and batches[i][0] <= last:
            if batches[i][1] >= first:
                out.append(batches[i])
            i += 1
        return out


def check(sp, member: str, first: int, last: int, types, allow_renew: bool) -> tuple[ErrorCode, str | None]:
    """(error, Kafka's text or None) of one batch against the SharePartition ``sp``."""
    if first > last or len(types) not in (1, last - first + 1):
        return ErrorCode.INVALID_REQUEST, None
    top = RENEW if allow_renew else REJECT
    if any(not GAP <= t <= top for t in types):
        return ErrorCode.INVALID_REQUEST, None
    # offsets below the start offset were acknowledged already, and a batch that ends
    # below it is ignored (answered NONE)
    if last < sp.spso:
        return _OK
    if first < sp.spso and sp.batch_start(sp.spso) > first:
        # Kafka keeps the batch the start offset is in: a request reaching back past that
        # batch finds no batch of its own to start from and is ignored
        return _OK if last < sp.speo else (ErrorCode.INVALID_REQUEST, LAST_PAST)
    if not sp.runs or first < sp.spso:
        return ErrorCode.INVALID_RECORD_STATE, NOT_IN_CACHE
    if last >= sp.speo:
        return ErrorCode.INVALID_REQUEST, FIRST_PAST if first >= sp.speo else LAST_PAST
    by_offset = len(types) > 1
    cached = sp.inflight.over(first, last) or [[first, last, by_offset]]
    for b_first, b_last, tracked in cached:
        refusal = _refusal(sp.runs, member, max(first, b_first), min(last, b_last), whole=not tracked)
        if refusal is not None:
            return ErrorCode.INVALID_RECORD_STATE, refusal
    return _OK


def _refusal(runs: list, member: str, first: int, last: int, *, whole: bool) -> str | None:
    """Kafka's words for the first record of [first, last] the member may not acknowledge."""
    i = bisect_right(runs, first, key=_first) - 1
    if i < 0 or runs[i].last < first:
        i += 1
    while i < len(runs) and runs[i].first <= last:
        r = runs[i]
        if r.state != ACQUIRED:
            return NOT_ACQUIRED if whole else NOT_ACQUIRED_OFFSET
        if r.member != member:
            return NOT_OWNER if whole else NOT_OWNER_OFFSET
        i += 1
    return None


def _first(run) -> int:
    return run.first


def _head(batch: list) -> int:
    return batch[0]
