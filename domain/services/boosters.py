"""Use case: open a booster pack into one's collection (R1.6)."""

from __future__ import annotations

from domain.game.boosters import open_booster
from domain.game.rng import Rng, seed_state
from domain.records import BoosterRecord, Player, Remembered
from domain.services.caps import room_for_a_pack
from domain.services.deps import Deps
from domain.services.transaction import Request, Steps, Tx, transact


async def open_booster_pack(deps: Deps, req: Request) -> BoosterRecord:
    """A new pack from a fresh random seed, added to the caller's
    collection: at most ``deps.caps.packs_per_day`` in any 24 hours (0051)."""

    def caller(tx: Tx) -> Player:
        return tx.player(req.player_id)

    def open_one(tx: Tx, player: Player) -> BoosterRecord:
        room_for_a_pack(tx, deps.caps, player.id)
        pack = open_booster(Rng(seed_state(deps.ids.new_seed())))
        record = BoosterRecord(tx.new_id(), player.id, pack, tx.now())
        tx.add_booster(record)
        return record

    return await transact(deps, req, Steps(caller, open_one, _kept, _repeated))


def _kept(record: BoosterRecord) -> Remembered:
    return record


def _repeated(tx: Tx, first: Remembered) -> BoosterRecord:
    assert isinstance(first, BoosterRecord)  # the fingerprint names the operation
    return first
