"""Use case: the idempotency records' expiry sweep (docs/decisions/0041).

Every record carries its expiry: ``createPlayer``'s the replay window (24 h
by default), other mutations' the retention (7 days). A repeat after expiry
is a new request (``createPlayer``'s is refused: the player stays found by
its key's digest); the sweep deletes the expired records for good.
"""

from __future__ import annotations

from typing import NoReturn

from domain.records import Remembered
from domain.services.deps import Deps
from domain.services.transaction import Steps, Tx, no_load, transact


def _unkept(result: int) -> NoReturn:
    raise AssertionError("the sweep has no idempotency key")


def _unrepeated(tx: Tx, first: Remembered) -> NoReturn:
    raise AssertionError("the sweep has no idempotency key")


async def expire_idempotency_records(deps: Deps) -> int:
    """Delete every record expired by now, in one transaction; how many."""

    def sweep(tx: Tx, _: None) -> int:
        return tx.expire_records()

    steps = Steps(no_load, sweep, _unkept, _unrepeated, wakes_bots=False)
    return await transact(deps, None, steps)
