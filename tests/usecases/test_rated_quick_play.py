"""Rated quick play (issue #26): players are matched with games whose
people are rated near them, the range widening as a game waits (a fake
clock); the bots that fill a rated game are the strategy rated nearest its
people, seated once two people wait; a player never meets themselves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.bots.strategy import Strategy
from domain.game.options import Format
from domain.lobby import BotSeated
from domain.rating_pools import RatingPool
from domain.ratings import DISPLAY_SCALE, Rating, Skill, bot_subject
from domain.records import GameStatus
from domain.services.quick_play import fill_due_games, quick_play
from tests.fakes import Harness
from tests.usecases.conftest import player, req

POOL = RatingPool.SINGLETON_3_4
AT = datetime(2026, 1, 1, tzinfo=UTC)


def rate(h: Harness, subject: str, shown: int) -> None:
    """``subject`` shows ``shown`` in the pool (a settled rating)."""
    h.store.ratings[(POOL, subject)] = Rating(
        subject, POOL, Skill(shown / DISPLAY_SCALE, 1.0), 20, AT
    )


async def _rated(h: Harness, pid: str, fill_after: int | None = None, seats: int = 3) -> str:
    result = await quick_play(
        h.deps, req(pid, "quickPlay"), seats, Format.SINGLETON, fill_after, rated=True
    )
    return result.game_id


async def test_players_rated_near_each_other_meet_and_far_ones_wait(h: Harness) -> None:
    ann, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    rate(h, ann, 1500)
    rate(h, bob, 1560)
    rate(h, cy, 2100)
    first = await _rated(h, ann)
    assert h.store.games[first].rated
    assert await _rated(h, bob) == first  # 60 apart: within the first 100
    other = await _rated(h, cy)  # 570 apart: a game of their own
    assert other != first and h.store.games[other].rated


async def test_the_range_widens_the_longer_a_game_waits(h: Harness) -> None:
    ann, carl, dan = [await player(h, n) for n in ("ann", "carl", "dan")]
    rate(h, ann, 1500)
    rate(h, carl, 1900)
    rate(h, dan, 1100)
    waiting = await _rated(h, ann)
    h.clock.advance(timedelta(seconds=5))  # ann's range: 100 + 10 a second = 150 < 400
    carls = await _rated(h, carl)
    assert carls != waiting
    h.clock.advance(timedelta(seconds=30))  # ann's game waited 35 s: 450 >= 400
    assert await _rated(h, dan) == waiting  # (carl's, 800 away, takes 400 by now)
    assert h.store.games[waiting].seat_of(dan) == 1


async def test_the_nearest_waiting_game_is_taken(h: Harness) -> None:
    ann, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    rate(h, ann, 1400)
    rate(h, bob, 1580)
    rate(h, cy, 1520)
    far = await _rated(h, ann)
    near = await _rated(h, bob)
    h.clock.advance(timedelta(seconds=60))  # both ranges now take cy
    assert far != near and await _rated(h, cy) == near


async def test_rated_and_unrated_games_never_mix_and_nobody_meets_themselves(
    h: Harness,
) -> None:
    ann, bob = await player(h, "ann"), await player(h, "bob")
    rated = await _rated(h, ann)
    assert await _rated(h, ann) == rated  # a second session: the same game back
    assert h.store.games[rated].seats_taken == 1
    unrated = await quick_play(h.deps, req(bob, "quickPlay"), 3, Format.SINGLETON, None)
    assert unrated.game_id != rated and not h.store.games[unrated.game_id].rated


async def test_a_rated_game_fills_with_the_strategy_rated_nearest_once_two_wait(
    h: Harness,
) -> None:
    ann, bob = await player(h, "ann"), await player(h, "bob")
    rate(h, ann, 1300)
    rate(h, bob, 1340)
    rate(h, bot_subject(Strategy.GREEDY), 1700)
    rate(h, bot_subject(Strategy.RANDOM), 1200)
    gid = await _rated(h, ann, fill_after=10, seats=4)
    h.clock.advance(timedelta(seconds=11))
    await fill_due_games(h.deps)  # one person: a rated game cannot start
    assert h.store.games[gid].status is GameStatus.LOBBY
    assert await _rated(h, bob, fill_after=10, seats=4) == gid
    await fill_due_games(h.deps)
    game = h.store.games[gid]
    assert game.status is GameStatus.RUNNING and game.rated
    seated = [e.event for e in h.store.log(gid) if isinstance(e.event, BotSeated)]
    assert [e.strategy for e in seated] == [Strategy.RANDOM, Strategy.RANDOM]
