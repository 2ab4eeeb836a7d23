"""Use case: open a booster pack into one's collection (R1.6)."""

from __future__ import annotations

from domain.errors import NotFound
from domain.game.boosters import open_booster
from domain.game.rng import Rng, seed_state
from domain.records import BoosterRecord
from domain.services.deps import Deps
from domain.services.mutation import Request, remember, replay, run_keyed


async def open_booster_pack(deps: Deps, req: Request) -> BoosterRecord:
    """A new pack from a fresh random seed, added to the caller's collection."""

    def tx() -> BoosterRecord:
        with deps.uow() as uow:
            stored = replay(uow, req)
            if stored is not None:
                return BoosterRecord.from_dict(stored)
            if uow.players.get(req.player_id) is None:
                raise NotFound("no such player")
            pack = open_booster(Rng(seed_state(deps.ids.new_seed())))
            record = BoosterRecord(deps.ids.new_id(), req.player_id, pack, deps.clock.now())
            uow.boosters.add(record)
            remember(uow, deps, req, record.to_dict)
            uow.commit()
            return record

    return await run_keyed(deps, req, tx)
