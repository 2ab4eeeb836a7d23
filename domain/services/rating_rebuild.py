"""``mmk ratings rebuild`` (issue #26, docs/decisions/0065): every rating
recomputed from the game log, compared with (or written over) the live ones.

Each rated game's ``GameEnded`` says, seat by seat, how many rated games its
subject had played in the pool with it: the order the live ratings were
computed in, subject by subject. The rebuild takes the games in the order
they ended and holds a game back until each of its subjects has reached it,
so it rates every game on the same ratings as the live commit did, whatever
order two instances committed them in; the values come from the model
again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from domain.game.events import GameEnded
from domain.ports import RatingModel, UnitOfWork
from domain.rating_pools import RatingPool, pool_of
from domain.ratings import Rating, finishing_ranks
from domain.services.deps import Deps
from domain.services.ratings import rate, seat_subjects
from domain.services.transaction import Tx, transact, unkeyed

PAGE = 500


@dataclass(frozen=True, slots=True)
class RatedGame:
    """What a rebuild reads of one rated game."""

    game_id: str
    pool: RatingPool
    subjects: tuple[str, ...]
    places: tuple[int, ...]
    counts: tuple[int, ...]  # each seat's games count with this game (GameEnded)
    at: datetime


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A rebuild's result: the ratings from the log, the live ones, and the
    subjects whose two differ."""

    games: int
    ratings: list[Rating]
    live: list[Rating]

    @property
    def differences(self) -> list[tuple[Rating | None, Rating | None]]:
        """(recomputed, live) pairs that are not equal."""
        mine = {(r.pool, r.subject): r for r in self.ratings}
        live = {(r.pool, r.subject): r for r in self.live}
        return [
            (mine.get(k), live.get(k))
            for k in sorted(mine.keys() | live.keys(), key=lambda k: (k[0].value, k[1]))
            if mine.get(k) != live.get(k)
        ]


def _ended(uow: UnitOfWork, game_id: str, last_seq: int) -> tuple[GameEnded, datetime] | None:
    after = 0
    while after < last_seq:
        page = uow.events.read(game_id, after, PAGE, None)
        if not page:
            break
        for e in page:
            if isinstance(e.event, GameEnded):
                return e.event, e.at
        after = page[-1].seq
    return None


def read_rated_games(uow: UnitOfWork) -> list[RatedGame]:
    """Every finished rated game with the ratings its end recorded."""
    out: list[RatedGame] = []
    after: str | None = None
    while ids := uow.games.rated_games(after, PAGE):
        after = ids[-1]
        for game_id in ids:
            game = uow.games.get(game_id)
            assert game is not None and game.state is not None
            found = _ended(uow, game_id, game.last_seq)
            seats = None if found is None else found[0].ratings
            if found is None or seats is None or game.state.outcome is None:
                continue  # ended before it could be rated: nothing to rebuild
            out.append(
                RatedGame(
                    game_id,
                    pool_of(game.seat_count, game.options.format),
                    tuple(seat_subjects(game)),
                    finishing_ranks(game.state.outcome),
                    tuple(r.games for r in sorted(seats, key=lambda r: r.seat)),
                    found[1],
                )
            )
    return out


def recompute(games: Sequence[RatedGame], model: RatingModel) -> list[Rating]:
    """The ratings ``games`` lead to, each game rated once every one of its
    subjects has played the games before it (its ``counts``)."""
    kept: dict[tuple[RatingPool, str], Rating] = {}
    waiting = sorted(games, key=lambda g: (g.at, g.game_id))
    while waiting:
        held: list[RatedGame] = []
        for g in waiting:
            done = {s: kept[(g.pool, s)].games if (g.pool, s) in kept else 0 for s in g.subjects}
            if any(n != done[s] + 1 for s, n in zip(g.subjects, g.counts, strict=True)):
                held.append(g)
                continue
            known = {s: kept[(g.pool, s)].skill for s in g.subjects if (g.pool, s) in kept}
            _, after = rate(model, g.subjects, known, g.places)
            for s, skill in after.items():
                kept[(g.pool, s)] = Rating(s, g.pool, skill, done[s] + 1, g.at)
        if len(held) == len(waiting):
            raise ValueError(f"the log's rated games do not chain: {held[0].game_id} waits")
        waiting = held
    return sorted(kept.values(), key=lambda r: (r.pool.value, r.subject))


async def rebuild(deps: Deps, *, write: bool) -> Rebuilt:
    """Recompute every rating from the log; with ``write``, the live ratings
    are replaced by the recomputed ones (in one transaction)."""
    model = deps.rating_model
    if model is None:
        raise ValueError("this server rates no games")

    def load(tx: Tx) -> Rebuilt:
        games = read_rated_games(tx.uow)
        return Rebuilt(len(games), recompute(games, model), tx.uow.ratings.all())

    def decide(tx: Tx, done: Rebuilt) -> Rebuilt:
        if write:
            tx.replace_ratings(done.ratings)
        return done

    return await transact(deps, None, unkeyed(load, decide))
