"""The scenarios: short scripts of raw requests, each run once against Kafka and once
against kipper. A module declares them with ``@scenario("area/what")`` (or ``register``
for generated ones); importing this package imports them all, in a fixed order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Scenario:
    name: str
    fn: Callable
    index: int

    @property
    def token(self) -> str:
        return f"c{self.index:04d}"


SCENARIOS: list[Scenario] = []


def register(name: str, fn: Callable) -> None:
    if any(s.name == name for s in SCENARIOS):
        raise ValueError(f"scenario {name} is declared twice")
    SCENARIOS.append(Scenario(name, fn, len(SCENARIOS)))


def scenario(name: str):
    def decorate(fn):
        register(name, fn)
        return fn
    return decorate


def load_all() -> list[Scenario]:
    from tests.conformance.scenarios import (  # noqa: F401 - registration by import
        admin, data_path, golden, groups, producers, quotas, share, versions,
    )
    return SCENARIOS
