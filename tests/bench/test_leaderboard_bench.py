"""Leaderboards at scale (issue #26), run by ``make bench``: 100,000 rated
players in one pool (their names in ``players``), nine in ten settled and
rated lately, on SQLite and PostgreSQL in process; through the use cases
(one transaction each, the names read too): the first page, a page deep in
the board (after a cursor), and ``me.rank`` of random players (a count of
the board's index before them, and in the server's way: a binary search of
the instance's snapshot of the board, read every minute).

Target: p99 under 10 ms on both. Reference, in the same run: the lobby
listing's first page (``games``), an indexed page of the same size.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from domain.rating_pools import RatingPool
from domain.services.deps import Deps
from domain.services.leaderboards import leaderboard, listed_keys, rank_of
from domain.services.queries import list_games
from infra.bootstrap import run_inline
from infra.bus.memory import InProcessBus
from infra.db.tables import players, ratings
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds
from infra.standings import RankSnapshot
from tests.bench.test_my_games_bench import _line, _timed
from tests.bench.test_my_games_bench import engine as engine  # the same databases
from tests.fakes import FakeClock

PLAYERS = 100_000
SAMPLES = 2_000
BATCH = 5_000
POOL = RatingPool.SINGLETON_3_4
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _fill(engine: sa.Engine, rng: random.Random) -> list[str]:
    ids = [f"p{i:06d}" for i in range(PLAYERS)]
    for at in range(0, PLAYERS, BATCH):
        chunk = ids[at : at + BATCH]
        with engine.begin() as c:
            c.execute(
                sa.insert(players),
                [{"id": p, "name": f"n{p}", "created_at": NOW, "key_digest": None} for p in chunk],
            )
            c.execute(
                sa.insert(ratings),
                [
                    {
                        "pool": POOL.value,
                        "subject": p,
                        "mu": rng.gauss(25, 4),
                        "sigma": rng.uniform(1, 8),
                        "games": rng.choice([3, 12, 20, 40, 60, 80, 100, 150, 200, 400]),
                        "last_at": NOW - timedelta(days=rng.choice([1] * 9 + [45])),
                    }
                    for p in chunk
                ],
            )
    with engine.begin() as c:
        c.exec_driver_sql("ANALYZE")
    return ids


def test_leaderboard_and_rank_at_100k_rated_players(engine: sa.Engine) -> None:
    rng = random.Random(26)
    t = time.perf_counter()
    ids = _fill(engine, rng)
    filled = time.perf_counter() - t
    clock = FakeClock()
    clock.set(NOW)
    deps = Deps(
        SqlUnitOfWorkFactory(engine),
        run_inline,
        InProcessBus(1_000),
        clock,
        RandomIds(),
        lambda _: None,
    )
    deep = []
    board = asyncio.run(leaderboard(deps, POOL, 100, None))
    for _ in range(200):  # cursors spread down the board
        last = board.standings[-1]
        deep.append((last.rating.skill.mu, last.rating.subject, last.rank))
        cursor = deep[-1] if rng.random() < 0.5 else deep[rng.randrange(len(deep))]
        board = asyncio.run(leaderboard(deps, POOL, 100, cursor))
        if not board.has_next:
            break
    picks = [rng.choice(ids) for _ in range(SAMPLES)]

    lobby = _timed(SAMPLES, lambda i: list_games(deps, None, None, 20))
    first = _timed(SAMPLES, lambda i: leaderboard(deps, POOL, 20, None))
    after = _timed(SAMPLES, lambda i: leaderboard(deps, POOL, 20, deep[i % len(deep)]))
    counted = _timed(SAMPLES, lambda i: rank_of(deps, picks[i], POOL))
    snapshot = RankSnapshot(lambda: listed_keys(deps))
    t = time.perf_counter()
    asyncio.run(snapshot.refresh())
    read = time.perf_counter() - t
    deps = replace(deps, standings=snapshot)
    rank = _timed(SAMPLES, lambda i: rank_of(deps, picks[i], POOL))
    ref = statistics.quantiles(lobby, n=100)[98]
    print(
        f"\nleaderboard on {engine.dialect.name}: {PLAYERS:,} rated players "
        f"(filled in {filled:.0f} s), pages of 20, {SAMPLES:,} samples each"
    )
    print(_line("lobby listing (reference)", lobby))
    print(_line("me.rank counted in the db", counted, ref))
    for name, ms in (
        ("leaderboard first page", first),
        ("leaderboard after a cursor", after),
        ("me.rank (snapshot)", rank),
    ):
        print(_line(name, ms, ref))
        assert statistics.quantiles(ms, n=100)[98] < 10.0, f"{name}: p99 over 10 ms"
    print(f"  the snapshot of every board read in {read * 1000:.0f} ms (each instance, a minute)")
