"""Use cases: quick play and its bot fill (issue #15 part 5,
docs/decisions/0048; docs/clients.md "Quick play and rematch")."""

from __future__ import annotations

from datetime import datetime

from domain import lobby
from domain import quick_play as qp
from domain.bots.strategy import Strategy
from domain.game.options import Format, GameOptions, Pace
from domain.rating_pools import RatingPool, pool_of
from domain.ratings import bot_subject, display
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
RATED_CANDIDATES = 32
"""Open rated games a call looks at, oldest first: most are out of the
caller's rating window."""
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
    rated: bool = False,
) -> MutationResult:
    """Seat the caller in the oldest open quick-play game of these settings
    that has room for them, or create one (the caller its host, at seat 0).
    A game that fills starts itself; ``fill_after`` seconds: its empty seats
    are then filled with bots (:func:`fill_due_games`). A caller already
    waiting in such a game gets it back, unchanged; a caller who waits in
    ``deps.caps.quick_play_waits`` other games is refused (0051).

    ``rated`` (issue #26): only rated games whose people's mean rating is
    within the game's :class:`~domain.quick_play.RatingWindow` of the
    caller's, the nearest first; a new one is rated."""
    qp.check_quick_play(seat_count, format, fill_after)
    lobby.check_rated(rated, False, deps.rating_model is not None)
    key = qp.match_key(seat_count, format, pace, rated)
    looked_at = RATED_CANDIDATES if rated else CANDIDATES

    def decide(tx: Tx, _: None) -> MutationResult:
        player = tx.player(req.player_id)
        now = tx.now()
        games = [tx.game(i) for i in tx.uow.games.open_quick_play(key, looked_at)]
        for game in games:
            if game.seat_of(player.id) is not None:
                return MutationResult(game.id, game.version, ())
        room_for_a_wait(tx, deps.caps, player.id)
        if rated:
            games = _within_window(tx, deps, games, player.id, pool_of(seat_count, format), now)
        for game in games:
            if qp.has_room(game, player.id):
                qp.bring_fill_forward(game, now, fill_after)
                joined = lobby.join(game, player.id, player.name, None)
                return tx.record(game, starting_if_full(tx, game, joined))
        game = _new_game(tx, deps, player.id, key, seat_count, qp.options_of(format, pace), now)
        game.rated = rated
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

    def fill(tx: Tx, game: GameRecord) -> Change:
        """Bots in the empty seats, and the start, if the fill time has come
        (a rated game: the strategy rated nearest its people)."""
        if not qp.fill_due(game, tx.now()):
            return Change([])
        strategy = _rated_fill(tx, deps, game) if game.rated else deps.quick_play_bot
        return starting(tx, game, qp.fill_with_bots(game, strategy))

    return await change_each(deps, await deps.run(due), fill)


def _shown(tx: Tx, deps: Deps, pool: RatingPool, subjects: set[str]) -> dict[str, float]:
    """The ratings ``subjects`` show in ``pool`` (a new player's for the unrated)."""
    assert deps.rating_model is not None  # check_rated
    new = display(deps.rating_model.initial().mu)
    found = tx.uow.ratings.get(pool, subjects)
    return {s: float(found[s].display) if s in found else float(new) for s in subjects}


def _within_window(
    tx: Tx, deps: Deps, games: list[GameRecord], player_id: str, pool: RatingPool, now: datetime
) -> list[GameRecord]:
    """The rated ``games`` that take ``player_id`` now, nearest in rating first."""
    people = {p for g in games for p in qp.people_of(g)} | {player_id}
    shown = _shown(tx, deps, pool, people)
    mine = shown[player_id]
    near: list[tuple[float, datetime, str, GameRecord]] = []
    for g in games:
        seated = qp.people_of(g)
        anchor = sum(shown[p] for p in seated) / len(seated) if seated else mine
        if deps.rating_window.takes(anchor, mine, now - g.created_at):
            near.append((abs(anchor - mine), g.created_at, g.id, g))
    return [g for *_, g in sorted(near, key=lambda n: n[:3])]


def _rated_fill(tx: Tx, deps: Deps, game: GameRecord) -> Strategy:
    pool = pool_of(game.seat_count, game.options.format)
    seated = qp.people_of(game)
    subjects = {bot_subject(s) for s in qp.RATED_FILL} | set(seated)
    shown = _shown(tx, deps, pool, subjects)
    target = sum(shown[p] for p in seated) / len(seated)
    return qp.closest_bot(target, {s: shown[bot_subject(s)] for s in qp.RATED_FILL})
