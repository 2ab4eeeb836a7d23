"""``Standings``: every leaderboard's keys in memory, read again every
``interval`` seconds on every instance (issue #26, docs/decisions/0065).

A rank is then a binary search: the database counts a board's index in
~10 ms at 100,000 players, this in microseconds. The others' ratings are
at most ``interval`` seconds old; the asker's own is read live (its old key
in the snapshot is left out)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable

from domain.rating_pools import RatingPool
from infra.periodic import Periodic

REFRESH = 60.0

Keys = dict[RatingPool, list[tuple[float, str]]]


class _Board:
    __slots__ = ("keys", "mu_of")

    def __init__(self, keys: list[tuple[float, str]]) -> None:
        self.keys = keys  # lowest first
        self.mu_of = {subject: mu for mu, subject in keys}


class RankSnapshot(Periodic):
    """Reads ``read()`` (every board's keys) at start and every ``interval``."""

    def __init__(self, read: Callable[[], Awaitable[Keys]], interval: float = REFRESH) -> None:
        super().__init__("leaderboard snapshot", self.refresh, interval, "%d rating(s) ranked")
        self._read = read
        self._boards: dict[RatingPool, _Board] | None = None

    async def refresh(self) -> int:
        keys = await self._read()
        self._boards = {pool: _Board(k) for pool, k in keys.items()}
        return 0  # nothing to log each minute

    def ahead_of(self, pool: RatingPool, subject: str, mu: float) -> int | None:
        if self._boards is None:
            return None
        board = self._boards.get(pool)
        if board is None:
            return 0
        me = (mu, subject)
        ahead = len(board.keys) - bisect_right(board.keys, me)
        old = board.mu_of.get(subject)
        if old is not None and (old, subject) > me:
            ahead -= 1  # the asker's own old key
        return ahead
