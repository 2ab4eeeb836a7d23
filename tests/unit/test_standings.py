"""The leaderboards' snapshot for ranks (infra/standings.py, issue #26): a
rank from it equals the count of the board at the snapshot's time, with the
asker's own rating read live."""

from __future__ import annotations

import asyncio

from domain.rating_pools import RatingPool
from infra.standings import RankSnapshot

POOL = RatingPool.SINGLETON_5_6
KEYS = sorted([(30.0, "a"), (28.0, "b"), (28.0, "c"), (25.0, "d"), (20.0, "e")])


def _snapshot() -> RankSnapshot:
    async def read() -> dict[RatingPool, list[tuple[float, str]]]:
        return {POOL: list(KEYS), RatingPool.SEALED_3_4: []}

    snapshot = RankSnapshot(read)
    asyncio.run(snapshot.refresh())
    return snapshot


def test_no_snapshot_yet_says_so() -> None:
    async def read() -> dict[RatingPool, list[tuple[float, str]]]:
        return {}

    assert RankSnapshot(read).ahead_of(POOL, "a", 30.0) is None


def test_ranks_count_the_keys_before_the_askers_live_rating() -> None:
    s = _snapshot()
    for mu, subject in KEYS:  # unchanged since the snapshot: the board's order
        assert s.ahead_of(POOL, subject, mu) == sum(k > (mu, subject) for k in KEYS)
    assert s.ahead_of(POOL, "c", 28.0) == 1 and s.ahead_of(POOL, "b", 28.0) == 2  # ties: id down


def test_the_askers_old_key_never_counts_against_them() -> None:
    s = _snapshot()
    assert s.ahead_of(POOL, "e", 29.0) == 1  # e climbed past b, c and d since
    assert s.ahead_of(POOL, "a", 21.0) == 3  # a fell: b, c, d; not a's old 30
    assert s.ahead_of(POOL, "new", 26.0) == 3  # listed since the snapshot
    assert s.ahead_of(RatingPool.SEALED_3_4, "a", 30.0) == 0
    assert s.ahead_of(RatingPool.SEALED_7_8, "a", 30.0) == 0  # a board read as empty
