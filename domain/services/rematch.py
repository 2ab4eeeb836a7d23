"""Use case: a finished game's rematch (issue #15 part 6,
docs/decisions/0048; docs/clients.md "Quick play and rematch")."""

from __future__ import annotations

from domain import rematch as rules
from domain.records import GameRecord, MutationResult
from domain.services.caps import room_for_a_lobby
from domain.services.deps import Deps
from domain.services.transaction import Change, Request, Tx, steps, transact


async def rematch(deps: Deps, req: Request, game_id: str) -> MutationResult:
    """One rematch per finished game, asked for by any of its players: the
    first call makes the new lobby game (the caller its host, in their old
    seat) and logs ``RematchOffered`` on the old game, in one transaction
    (the old game's save is conditional on its version, so two racing
    callers make one game); every later call gets that game, unchanged. The
    new game is one of the caller's open lobby games (a cap, 0051)."""

    def decide(tx: Tx, old: GameRecord) -> MutationResult:
        rules.check_may_ask(old, req.player_id)
        if old.rematch_id is not None:
            new = tx.game(old.rematch_id)
            return MutationResult(new.id, new.version, ())
        player = tx.player(req.player_id)
        room_for_a_lobby(tx, deps.caps, player.id)
        ids = rules.Ids(
            tx.new_id(), deps.ids.new_seed(), deps.ids.new_salt(), deps.ids.new_invite_code()
        )
        new, events = rules.new_game(old, player.id, player.name, ids, tx.now())
        result = tx.record(new, Change(events))
        old.rematch_id = new.id
        tx.record(old, Change([rules.RematchOffered(new.id)]))
        return result

    return await transact(deps, req, steps(lambda tx: tx.game(game_id), decide))
