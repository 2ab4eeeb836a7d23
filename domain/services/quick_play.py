"""Use cases: quick play and its bot fill (issue #15 part 5,
docs/decisions/0048; API.md ``quickPlay``)."""

from __future__ import annotations

from datetime import datetime

from domain import lobby
from domain import quick_play as qp
from domain.game.options import Format, GameOptions, Pace
from domain.records import GameRecord, MutationResult
from domain.services.caps import room_for_a_wait
from domain.services.deps import Deps
from domain.services.starting import starting, starting_if_full
from domain.services.transaction import (
    Change,
    Request,
    Tx,
    change_each,
    no_load,
    steps,
    transact,
)

CANDIDATES = 8
"""Open games a call looks at, oldest first (each a free seat, normally)."""
RACERS = 16
"""Tries before ``CONFLICT``: each lost race is a seat someone else got, so
the next try finds the next game (or makes one)."""


async def quick_play(
    deps: Deps,
    req: Request,
    seat_count: int,
    format: Format,
    fill_after: int | None,
    pace: Pace = Pace.LIVE,
) -> MutationResult:
    """Seat the caller in the oldest open quick-play game of these settings
    that has room for them, or create one (the caller its host, at seat 0).
    A game that fills starts itself; ``fill_after`` seconds: its empty seats
    are then filled with bots (:func:`fill_due_games`). A caller already
    waiting in such a game gets it back, unchanged; a caller who waits in
    ``deps.caps.quick_play_waits`` other games is refused (0051)."""
    qp.check_quick_play(seat_count, format, fill_after)
    key = qp.match_key(seat_count, format, pace)

    def decide(tx: Tx, _: None) -> MutationResult:
        player = tx.player(req.player_id)
        now = tx.now()
        games = [tx.game(i) for i in tx.uow.games.open_quick_play(key, CANDIDATES)]
        for game in games:
            if game.seat_of(player.id) is not None:
                return MutationResult(game.id, game.version, ())
        room_for_a_wait(tx, deps.caps, player.id)
        for game in games:
            if qp.has_room(game, player.id):
                qp.bring_fill_forward(game, now, fill_after)
                joined = lobby.join(game, player.id, player.name, None)
                return tx.record(game, starting_if_full(tx, game, joined))
        game = _new_game(tx, deps, player.id, key, seat_count, qp.options_of(format, pace), now)
        qp.bring_fill_forward(game, now, fill_after)
        events = [lobby.GameCreated.of(game), *lobby.join(game, player.id, player.name, 0)]
        return tx.record(game, Change(events))

    return await transact(deps, req, steps(no_load, decide, attempts=RACERS))


def _new_game(
    tx: Tx, deps: Deps, host: str, key: str, seat_count: int, options: GameOptions, now: datetime
) -> GameRecord:
    """A quick-play game (:func:`domain.quick_play.options_of`), no chosen Rat."""
    return GameRecord(
        id=tx.new_id(),
        host=host,
        seat_count=seat_count,
        options=options,
        seed=deps.ids.new_seed(),
        rat_choice=None,
        seats=[None] * seat_count,
        created_at=now,
        updated_at=now,
        salt=deps.ids.new_salt(),
        quick_play=key,
    )


async def fill_due_games(deps: Deps, limit: int = 100) -> int:
    """Fill the empty seats of every quick-play game whose fill time has
    come with bots, and start it. Safe on every instance at once: each game
    is filled once, by whichever commits first (optimistic concurrency; the
    others find it started and change nothing)."""
    now = deps.clock.now()

    def due() -> list[str]:
        with deps.uow() as uow:
            return uow.games.due_bot_fills(now, limit)

    return await change_each(deps, await deps.run(due), _fill)


def _fill(tx: Tx, game: GameRecord) -> Change:
    """Bots in the empty seats, and the start, if the fill time has come."""
    if not qp.fill_due(game, tx.now()):
        return Change([])
    return starting(tx, game, qp.fill_with_bots(game))
