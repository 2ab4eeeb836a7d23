"""``RatingStore`` on SQL (issue #26, docs/decisions/0065).

A game's end reads its seats' ratings ``FOR UPDATE`` on PostgreSQL (rows in
subject order, so two endings never deadlock) and writes each one only if
its games count is still the one read: a rating another ending changed
meanwhile is a :class:`WriteConflict`, and the ending runs again on it.
SQLite has one writer at a time.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from domain.ports import WriteConflict
from domain.rating_pools import RatingPool
from domain.ratings import Rating, Skill
from infra.db.errors import conflicts_as_write_conflict
from infra.db.tables import ratings

_R = ratings.c
_COLUMNS = (_R.pool, _R.subject, _R.mu, _R.sigma, _R.games, _R.last_at)


def _rating(r: Any) -> Rating:
    return Rating(r.subject, RatingPool(r.pool), Skill(r.mu, r.sigma), r.games, r.last_at)


def _row(r: Rating) -> dict[str, Any]:
    return {
        "pool": r.pool.value,
        "subject": r.subject,
        "mu": r.skill.mu,
        "sigma": r.skill.sigma,
        "games": r.games,
        "last_at": r.last_at,
    }


def _listed(pool: RatingPool, min_games: int, active_since: datetime) -> list[Any]:
    return [_R.pool == pool.value, _R.games >= min_games, _R.last_at >= active_since]


class SqlRatingStore:
    def __init__(self, conn: sa.Connection) -> None:
        self._c = conn

    def get(
        self, pool: RatingPool, subjects: Collection[str], *, lock: bool = False
    ) -> dict[str, Rating]:
        if not subjects:
            return {}
        q = (
            sa.select(*_COLUMNS)
            .where(_R.pool == pool.value, _R.subject.in_(sorted(subjects)))
            .order_by(_R.subject)
        )
        if lock and self._c.dialect.name == "postgresql":
            q = q.with_for_update()
        return {r.subject: _rating(r) for r in self._c.execute(q)}

    def put(self, new: Sequence[Rating]) -> None:
        firsts = [_row(r) for r in new if r.games == 1]
        if firsts:
            with conflicts_as_write_conflict("a first rating"):
                self._c.execute(sa.insert(ratings), firsts)
        for r in new:
            if r.games == 1:
                continue
            done = self._c.execute(
                sa.update(ratings)
                .where(_R.pool == r.pool.value, _R.subject == r.subject, _R.games == r.games - 1)
                .values(mu=r.skill.mu, sigma=r.skill.sigma, games=r.games, last_at=r.last_at)
            )
            if done.rowcount != 1:
                raise WriteConflict(f"the rating of {r.subject} changed meanwhile")

    def of_subject(self, subject: str) -> list[Rating]:
        q = sa.select(*_COLUMNS).where(_R.subject == subject).order_by(_R.pool)
        return [_rating(r) for r in self._c.execute(q)]

    def leaderboard(
        self,
        pool: RatingPool,
        min_games: int,
        active_since: datetime,
        after: tuple[float, str] | None,
        limit: int,
    ) -> list[Rating]:
        where = _listed(pool, min_games, active_since)
        if after is not None:
            where.append(sa.tuple_(_R.mu, _R.subject) < sa.tuple_(*after))
        q = (
            sa.select(*_COLUMNS)
            .where(*where)
            .order_by(_R.mu.desc(), _R.subject.desc())
            .limit(limit)
        )
        return [_rating(r) for r in self._c.execute(q)]

    def ahead_of(
        self, pool: RatingPool, rating: Rating, min_games: int, active_since: datetime
    ) -> int:
        q = (
            sa.select(sa.func.count())
            .select_from(ratings)
            .where(
                *_listed(pool, min_games, active_since),
                sa.tuple_(_R.mu, _R.subject) > sa.tuple_(rating.skill.mu, rating.subject),
            )
        )
        return int(self._c.execute(q).scalar_one())

    def listed(
        self, pool: RatingPool, min_games: int, active_since: datetime
    ) -> list[tuple[float, str]]:
        q = (
            sa.select(_R.mu, _R.subject)
            .where(*_listed(pool, min_games, active_since))
            .order_by(_R.mu, _R.subject)
        )
        return [(r.mu, r.subject) for r in self._c.execute(q)]

    def all(self) -> list[Rating]:
        q = sa.select(*_COLUMNS).order_by(_R.pool, _R.subject)
        return [_rating(r) for r in self._c.execute(q)]

    def replace_all(self, new: Sequence[Rating]) -> None:
        self._c.execute(sa.delete(ratings))
        if new:
            self._c.execute(sa.insert(ratings), [_row(r) for r in new])
