"""Rated games on SQLite and PostgreSQL (issue #26, docs/decisions/0065):
two instances (each its own engine) end rated games that share players and
a bot strategy at once; every game is rated exactly once, each subject's
games chain 1, 2, 3... with none lost or counted twice, and the rebuild
from the log equals the live ratings. Migration 0016 goes down and up."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command

from domain.bots.strategy import Strategy
from domain.game.engine import apply, to_act
from domain.game.events import GameEnded
from domain.game.legal import legal_actions
from domain.rating_pools import RatingPool
from domain.ratings import Rating, Skill, bot_subject
from domain.records import GameStatus
from domain.services.bots import choose, drive_bots
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.leaderboards import leaderboard, listed_keys, rank_of
from domain.services.play import act
from domain.services.players import create_player
from domain.services.rating_rebuild import rebuild
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.rating_store import SqlRatingStore
from infra.db.uow import SqlUnitOfWorkFactory
from infra.rating_model import OpenSkillModel
from infra.standings import RankSnapshot
from tests.fakes import FakeClock, FakeIds

POOL = RatingPool.SINGLETON_3_4
GAMES = 4  # rated games ending at once, two instances in turn


def _deps(uow: SqlUnitOfWorkFactory, clock: FakeClock, ids: FakeIds) -> Deps:
    return Deps(
        uow,
        asyncio.to_thread,
        InProcessBus(100_000),
        clock,
        ids,
        lambda _: None,
        rating_model=OpenSkillModel(),
    )


def _req(pid: str) -> Request:
    return Request(pid, "op", {})


def _ends_next(deps: Deps, game_id: str) -> bool:
    """Whether the move the game waits for ends it (played on a copy)."""
    with deps.uow() as u:
        game = u.games.get(game_id)
    assert game is not None and game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    o = game.seats[seat]
    assert o is not None
    cmd = choose(game, seat) if o.is_bot else legal_actions(game.state, seat)[0]
    state = game.state.clone()
    apply(state, seat, cmd)
    return state.outcome is not None


async def _last_move(deps: Deps, game_id: str, people: list[str]) -> None:
    with deps.uow() as u:
        game = u.games.get(game_id)
    assert game is not None and game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    if seat < len(people):
        await act(deps, _req(people[seat]), game_id, legal_actions(game.state, seat)[0])
    else:
        await drive_bots(deps, game_id, 1)


async def _to_the_last_move(deps: Deps, game_id: str, people: list[str]) -> None:
    for _ in range(5_000):
        if _ends_next(deps, game_id):
            return
        await _last_move(deps, game_id, people)
    raise AssertionError("the game did not come near its end")


async def test_two_instances_ending_rated_games_at_once_rate_each_once(
    uow: SqlUnitOfWorkFactory,
) -> None:
    clock, ids = FakeClock(), FakeIds()
    one = _deps(uow, clock, ids)
    other_engine = make_engine(uow.engine.url.render_as_string(hide_password=False))
    try:
        two = _deps(SqlUnitOfWorkFactory(other_engine), clock, ids)
        people = [(await create_player(one, n)).player.id for n in ("ann", "bob", "cy")]
        games = []
        for k in range(GAMES):  # every game: the three of them and a GREEDY bot
            gid = (await create_game(one, _req(people[0]), NewGame(4, rated=True))).game_id
            for pid in people[1:]:
                await join_game(one, _req(pid), gid, None)
            await add_bot(one, _req(people[0]), gid, Strategy.GREEDY, None)
            await start_game(one, _req(people[0]), gid)
            await _to_the_last_move(one if k % 2 else two, gid, people)
            games.append(gid)
        await asyncio.gather(
            *(_last_move(one if k % 2 else two, g, people) for k, g in enumerate(games))
        )
        counts: dict[str, list[int]] = defaultdict(list)
        with uow() as u:
            for gid in games:
                game = u.games.get(gid)
                assert game is not None and game.status is GameStatus.FINISHED
                (ended,) = [
                    e.event
                    for e in u.events.read(gid, 0, 10_000, None)
                    if isinstance(e.event, GameEnded)
                ]
                assert ended.ratings is not None
                for r in ended.ratings:
                    subject = people[r.seat] if r.seat < 3 else bot_subject(Strategy.GREEDY)
                    counts[subject].append(r.games)
            stored = {r.subject: r for r in u.ratings.all()}
        for subject, chain in counts.items():  # none lost, none counted twice
            assert sorted(chain) == list(range(1, GAMES + 1)), subject
            assert stored[subject].games == GAMES
        checked = await rebuild(one, write=False)
        assert checked.games == GAMES and checked.differences == []
    finally:
        other_engine.dispose()


async def test_the_leaderboard_and_ranks_read_the_board_index(uow: SqlUnitOfWorkFactory) -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    ratings = [
        Rating(f"p{i:03}", POOL, Skill(20 + (i % 50) / 10, 2.0), 10 + i % 3, now)
        for i in range(120)
    ]
    ratings.append(Rating("new", POOL, Skill(40.0, 8.0), 3, now))  # provisional
    ratings.append(Rating("gone", POOL, Skill(41.0, 2.0), 30, now - timedelta(days=40)))
    ratings.append(Rating("other", RatingPool.SEALED_3_4, Skill(42.0, 2.0), 30, now))
    with uow.engine.begin() as conn:
        SqlRatingStore(conn).replace_all(ratings)
    clock = FakeClock()
    clock.set(now + timedelta(days=1))
    deps = _deps(uow, clock, FakeIds())
    listed = sorted(ratings[:120], key=lambda r: (r.skill.mu, r.subject), reverse=True)
    seen: list[str] = []
    cursor = None
    while True:
        page = await leaderboard(deps, POOL, 50, cursor)
        seen += [s.rating.subject for s in page.standings]
        if not page.has_next:
            break
        last = page.standings[-1]
        cursor = (last.rating.skill.mu, last.rating.subject, last.rank)
    assert seen == [r.subject for r in listed]
    snapshot = RankSnapshot(lambda: listed_keys(deps))
    await snapshot.refresh()
    from_snapshot = replace(deps, standings=snapshot)
    for rank in (1, 37, 120):
        assert await rank_of(deps, listed[rank - 1].subject, POOL) == rank  # counted
        assert await rank_of(from_snapshot, listed[rank - 1].subject, POOL) == rank
    for d in (deps, from_snapshot):
        assert await rank_of(d, "new", POOL) is None
        assert await rank_of(d, "gone", POOL) is None


def test_0016_down_and_up_with_ratings_in_place(empty_db_url: str) -> None:
    """Down to 0015 drops the ratings and ``games.rated``; up again, empty."""
    engine = make_engine(empty_db_url)
    try:
        migrate.upgrade(engine)
        with engine.begin() as conn:
            SqlRatingStore(conn).replace_all(
                [Rating("p", POOL, Skill(26.0, 7.0), 1, datetime(2026, 6, 1, tzinfo=UTC))]
            )
        command.downgrade(migrate.alembic_config(engine), "0015")
        assert migrate.current(engine) == "0015"
        with engine.connect() as conn:
            assert "ratings" not in set(sa.inspect(conn).get_table_names())
            assert "rated" not in {c["name"] for c in sa.inspect(conn).get_columns("games")}
        migrate.upgrade(engine)
        assert migrate.current(engine) == "0016"
        with engine.connect() as conn:
            assert SqlRatingStore(conn).all() == []
    finally:
        engine.dispose()
