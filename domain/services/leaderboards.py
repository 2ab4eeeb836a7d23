"""Reading ratings (issue #26, docs/decisions/0065): a subject's ratings,
a pool's leaderboard and a player's rank on it.

A leaderboard lists settled ratings (not provisional) of subjects rated
lately (``RatingPolicy.active_for``), best first: mu down, then subject
id down, so that equal ratings always come in one order. Ranks are
positions in that order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.rating_pools import RatingPool
from domain.ratings import BOT_PREFIX, Rating
from domain.services.deps import Deps
from domain.services.queries import MAX_PAGE


@dataclass(frozen=True, slots=True)
class Standing:
    """A leaderboard's line: a rating, its rank, and whose it is (a player,
    or a bot strategy playing as its own player)."""

    rank: int
    rating: Rating
    player_id: str | None
    bot: Strategy | None
    name: str


@dataclass(frozen=True, slots=True)
class Board:
    """A page of a pool's leaderboard."""

    pool: RatingPool
    standings: list[Standing]
    has_next: bool


Cursor = tuple[float, str, int]
"""Where a page ends: the last line's mu, subject and rank."""


def bot_of(subject: str) -> Strategy | None:
    """The strategy a bot subject stands for (None: a player's id)."""
    if not subject.startswith(BOT_PREFIX):
        return None
    return Strategy[subject.removeprefix(BOT_PREFIX)]


async def ratings_of(deps: Deps, subject: str) -> list[Rating]:
    """A subject's ratings, one per pool it played rated games in."""

    def read() -> list[Rating]:
        with deps.uow() as uow:
            return uow.ratings.of_subject(subject)

    return await deps.run(read)


async def leaderboard(deps: Deps, pool: RatingPool, first: int, after: Cursor | None) -> Board:
    """``first`` lines (1 to :data:`MAX_PAGE`) of ``pool``'s leaderboard
    after the ``after`` cursor."""
    if not 1 <= first <= MAX_PAGE:
        raise BadRequest(f"first is 1 to {MAX_PAGE}")
    policy = deps.ratings
    since = deps.clock.now() - policy.active_for
    start = 0 if after is None else after[2]

    def read() -> tuple[list[Rating], dict[str, str]]:
        with deps.uow() as uow:
            key = None if after is None else (after[0], after[1])
            found = uow.ratings.leaderboard(pool, policy.provisional_games, since, key, first + 1)
            people = [r.subject for r in found if bot_of(r.subject) is None]
            return found, uow.players.names(people)

    found, names = await deps.run(read)
    lines = []
    for i, r in enumerate(found[:first]):
        bot = bot_of(r.subject)
        who = f"{bot.name} bot" if bot is not None else names.get(r.subject, "")
        lines.append(Standing(start + i + 1, r, None if bot else r.subject, bot, who))
    return Board(pool, lines, len(found) > first)


async def rank_of(deps: Deps, subject: str, pool: RatingPool) -> int | None:
    """``subject``'s rank on ``pool``'s leaderboard; None while it is not
    listed (unrated, provisional, or not rated lately). Its own rating is
    read now; the others are the :class:`~domain.ports.Standings`' snapshot
    when there is one (counted in the database otherwise)."""
    policy = deps.ratings
    since = deps.clock.now() - policy.active_for
    standings = deps.standings

    def read() -> int | None:
        with deps.uow() as uow:
            mine = uow.ratings.of_subject(subject)
            rating = next((r for r in mine if r.pool is pool), None)
            if rating is None or policy.provisional(rating.games) or rating.last_at < since:
                return None
            ahead = (
                None if standings is None else standings.ahead_of(pool, subject, rating.skill.mu)
            )
            if ahead is None:
                ahead = uow.ratings.ahead_of(pool, rating, policy.provisional_games, since)
            return 1 + ahead

    return await deps.run(read)


async def listed_keys(deps: Deps) -> dict[RatingPool, list[tuple[float, str]]]:
    """Every leaderboard's ``(mu, subject)`` keys, lowest first: a snapshot
    for :class:`~domain.ports.Standings` (a short transaction a pool)."""
    policy = deps.ratings
    since = deps.clock.now() - policy.active_for

    def reader(pool: RatingPool) -> Callable[[], list[tuple[float, str]]]:
        def read() -> list[tuple[float, str]]:
            with deps.uow() as uow:
                return uow.ratings.listed(pool, policy.provisional_games, since)

        return read

    return {pool: await deps.run(reader(pool)) for pool in RatingPool}
