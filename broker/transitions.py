"""A state machine's allowed moves, written one way: a table, and the one function that
enforces it.

Transactions (txn/states.py), the records of a share-partition (share/states.py) and
classic groups (groups/classic_model.py) each declare their table as a ``Transitions``
next to their states, and every change of state goes through ``check``. A move the table
does not allow is a bug in the engine, never a client's error: it raises
``IllegalTransition`` (the dispatcher turns it into a closed connection, and logs it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Hashable


class IllegalTransition(AssertionError):
    """A move the table does not allow: a bug in the engine that tried it."""


class Transitions(Mapping):
    """``state -> the states it may move to``, read like a dict (``TRANSITIONS[state]``)."""

    def __init__(self, what: str, moves: Mapping[Hashable, Iterable[Hashable]],
                 name: Callable[[Hashable], str] = str):
        """``what``: what moves (for the message); ``name``: a state as people read it."""
        self.what = what
        self.name = name
        self._moves = {state: frozenset(targets) for state, targets in moves.items()}
        unknown = {t for targets in self._moves.values() for t in targets} - set(self._moves)
        if unknown:
            raise ValueError(f"{what}: moves to states the table does not list: {sorted(map(name, unknown))}")

    def check(self, current, target, subject: str | None = None) -> None:
        """Raise IllegalTransition unless ``current`` may move to ``target``."""
        if target not in self._moves[current]:
            who = f" {subject}" if subject else ""
            raise IllegalTransition(f"{self.what}{who}: {self.name(current)} -> {self.name(target)} "
                                    "is not allowed")

    def __getitem__(self, state) -> frozenset:
        return self._moves[state]

    def __iter__(self) -> Iterator:
        return iter(self._moves)

    def __len__(self) -> int:
        return len(self._moves)
