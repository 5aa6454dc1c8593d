"""The scenarios: short scripts of raw requests, each run once against Kafka and once
against kipper. A module declares them with ``@scenario("area/what")`` (or ``register``
for generated ones); importing this package imports them all, in a fixed order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


# a second run's token: the same scenario under fresh names (tokens stay c + four digits)
SECOND_RUN = 5000


@dataclass(frozen=True)
class Scenario:
    name: str
    fn: Callable
    index: int
    # its answers depend on a broker's timer firing within a wall-clock window (a lock's
    # expiry, a share partition's state loading while a fetch waits): on a loaded machine one
    # broker can answer a poll later than the other, so a comparison that differs runs once more
    timed: bool = False

    @property
    def token(self) -> str:
        return f"c{self.index:04d}"

    @property
    def second_token(self) -> str:
        return f"c{SECOND_RUN + self.index:04d}"


SCENARIOS: list[Scenario] = []


def register(name: str, fn: Callable, *, timed: bool = False) -> None:
    if any(s.name == name for s in SCENARIOS):
        raise ValueError(f"scenario {name} is declared twice")
    SCENARIOS.append(Scenario(name, fn, len(SCENARIOS), timed))


def scenario(name: str, *, timed: bool = False):
    def decorate(fn):
        register(name, fn, timed=timed)
        return fn
    return decorate


def load_all() -> list[Scenario]:
    from tests.conformance.scenarios import (  # noqa: F401 - registration by import
        admin, data_path, features, generated, generated_found, generated_run4, generated_run5, generated_run6, generated_run8, generated_run11, generated_run12, generated_run13, generated_run14, generated_run20,
        golden,
        groups,
        producers, quotas,
        share, streams, versions, admin_edges,
    )
    from tests.conformance.scenarios import data_edges  # noqa: F401 - issue 36's edges, after the others
    from tests.conformance.scenarios import share_split  # noqa: F401 - issue 36 item 19
    from tests.conformance.scenarios import share_ack_texts  # noqa: F401 - issue 36, share-acknowledge-error-text
    from tests.conformance.scenarios import messages_run  # noqa: F401 - the --messages runs' findings
    from tests.conformance.scenarios import user_run  # noqa: F401 - what a user who is no super user met
    return SCENARIOS
