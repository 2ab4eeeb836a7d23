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


BATCH = 1_000
"""Records deleted in one transaction: a short one each, so the sweep never
holds SQLite's one writer for long, whatever came due at once."""


async def expire_idempotency_records(deps: Deps, batch: int = BATCH) -> int:
    """Delete every record expired by now, a batch a transaction; how many."""

    def sweep(tx: Tx, _: None) -> int:
        return tx.expire_records(batch)

    steps = Steps(no_load, sweep, _unkept, _unrepeated, wakes_bots=False)
    total = 0
    while True:
        deleted = await transact(deps, None, steps)
        total += deleted
        if deleted < batch:
            return total
