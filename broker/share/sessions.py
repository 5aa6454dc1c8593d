"""Share sessions (KIP-932): the partitions a member fetches, keyed by (group, member).

ShareSessionEpoch 0 opens a session (a full request; acknowledgements are not
allowed), each later request must carry the session's next epoch (1, 2, ...,
wrapping to 1), and -1 closes it. Errors are Kafka's:
SHARE_SESSION_NOT_FOUND and INVALID_SHARE_SESSION_EPOCH.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kipper.protocol.errors import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
INT32_MAX = 2**31 - 1


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    epoch: int = 1  # the epoch the next request must carry
    partitions: dict = field(default_factory=dict)  # (topic_id, partition) -> None, in order
    last_used: int = 0
    cursor: int = 0  # rotates the partition fetched first, for fairness
    connection: object = None  # the client connection it was last used on (KAFKA-19015)

    def add(self, key) -> None:
        self.partitions.setdefault(key, None)

    def forget(self, key) -> None:
        self.partitions.pop(key, None)


class ShareSessionCache:
    def __init__(self):
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def open(self, group_id: str, member_id: str, epoch: int, now: int, *,
             may_create: bool = True) -> tuple[ErrorCode, ShareSession | None]:
        """The session a request with ``epoch`` continues (or creates), advanced
        to its next epoch. A FINAL_EPOCH request gets the session to close."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if not may_create:
                return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
            session = self.sessions[key] = ShareSession(group_id, member_id, last_used=now)
            return ErrorCode.NONE, session
        session = self.sessions.get(key)
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND, None
        if epoch == FINAL_EPOCH:
            return ErrorCode.NONE, session
        if epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
        session.epoch = 1 if epoch == INT32_MAX else epoch + 1
        session.last_used = now
        return ErrorCode.NONE, session

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def __len__(self) -> int:
        return len(self.sessions)
