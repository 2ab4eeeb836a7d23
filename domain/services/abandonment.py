"""Use case: the abandonment sweep (issue #22, docs/decisions/0051). Every
instance sweeps; each game is ended in one versioned transaction that
checks again that its time has come, so it ends once: of two instances
ending it, one commits and the other, run again on the fresh game, finds it
over and logs nothing (as a deadline fires once, 0046)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.abandonment import abandon, due
from domain.records import GameRecord
from domain.services.deps import Deps
from domain.services.transaction import Change, Tx, change_each

BATCH = 100
"""Games a round reads at most."""


@dataclass(frozen=True, slots=True)
class AbandonRound:
    """One sweep: ``ended`` games abandoned; ``again`` when the batch was
    full and ended some (more may be due now: sweep again at once)."""

    ended: int
    again: bool


def end_if_due(tx: Tx, game: GameRecord) -> Change:
    """``GameEnded`` (abandoned) if the game's time has come; nothing if
    not (it changed since it was found, or it is over already)."""
    if not due(game, tx.now()):
        return Change(())
    return Change(abandon(game))


async def abandon_round(deps: Deps, limit: int = BATCH) -> AbandonRound:
    """End the games whose abandon time has come by now."""
    now = deps.clock.now()

    def found() -> list[str]:
        with deps.uow() as uow:
            return uow.games.due_abandonments(now, limit)

    game_ids = await deps.run(found)
    ended = await change_each(deps, game_ids, end_if_due)
    return AbandonRound(ended, len(game_ids) == limit and ended > 0)


async def sweep_abandoned(deps: Deps, limit: int = BATCH) -> int:
    """End the games due now; how many."""
    return (await abandon_round(deps, limit)).ended
