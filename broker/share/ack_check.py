"""Which acknowledgement batches a share-partition refuses, with Kafka 4.4's error and text.

A batch (first, last, types) is checked before anything of it applies. A malformed one
(last before first, a types list of the wrong length, an unknown type) is INVALID_REQUEST
without text: Kafka's request check refuses it. The others are refused as Kafka's
SharePartition refuses them, with the text of its exception, which Kafka sends as the
partition's error message (ShareAcknowledge) or acknowledgement error message (ShareFetch):
offsets past what was acquired are INVALID_REQUEST, offsets it has no record of and
records not acquired by the member INVALID_RECORD_STATE. Kafka words a refusal by batch or
by offset as its cache of in-flight batches tracks them; here a batch with one type per
offset gets the words by offset, any other the words by batch.
"""

from __future__ import annotations

from bisect import bisect_right

from kipper.broker.share.states import ACQUIRED, GAP, REJECT, RENEW
from kipper.protocol.errors import ErrorCode

NOT_IN_CACHE = "Batch record not found. The request batch offsets are not found in the cache."
FIRST_PAST = "Batch record not found. The first offset in request is past acquired records."
LAST_PAST = "Batch record not found. The last offset in request is past acquired records."
NOT_ACQUIRED = "The batch cannot be acknowledged. The batch is not in the acquired state."
NOT_ACQUIRED_OFFSET = "The batch cannot be acknowledged. The offset is not acquired."
NOT_OWNER = "Member is not the owner of batch record"
NOT_OWNER_OFFSET = "Member is not the owner of offset"
RENEW_DISABLED = "Renewing acquisition locks is not enabled for the group."

_OK = (ErrorCode.NONE, None)


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
    runs = sp.runs
    i = bisect_right(runs, first, key=_first) - 1
    if i < 0 or runs[i].last < first:
        i += 1
    while i < len(runs) and runs[i].first <= last:
        r = runs[i]
        if r.state != ACQUIRED:
            return ErrorCode.INVALID_RECORD_STATE, NOT_ACQUIRED_OFFSET if by_offset else NOT_ACQUIRED
        if r.member != member:
            return ErrorCode.INVALID_RECORD_STATE, NOT_OWNER_OFFSET if by_offset else NOT_OWNER
        i += 1
    return _OK


def _first(run) -> int:
    return run.first
