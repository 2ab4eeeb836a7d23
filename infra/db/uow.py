"""The unit of work: one transaction over every repository.

A Core ``Connection`` per unit of work rather than an ORM ``Session``: nothing
here needs an identity map or change tracking (docs/decisions/0014). After a
commit, :meth:`SqlUnitOfWork.collect_new_events` hands out what it logged.
"""

from __future__ import annotations

from types import TracebackType

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from domain.ports import (
    BoosterRepository,
    EventLog,
    GameRepository,
    IdempotencyStore,
    NotificationStore,
    PlayerRepository,
    RatingStore,
    ServiceKeyRepository,
    UnitOfWork,
    UnitOfWorkFactory,
    WebhookStore,
)
from domain.records import NewEvents
from infra.db.batch import BATCH, Batch
from infra.db.errors import conflicts_as_write_conflict
from infra.db.game_cache import GameCache
from infra.db.rating_store import SqlRatingStore
from infra.db.repositories import (
    SqlBoosterRepository,
    SqlEventLog,
    SqlGameRepository,
    SqlIdempotencyStore,
    SqlNotificationStore,
    SqlPlayerRepository,
    SqlServiceKeyRepository,
)
from infra.db.webhook_store import SqlWebhookStore


class SqlUnitOfWork:
    """Use once: ``with factory() as uow: ...; uow.commit()``. Leaving the block
    without committing (or with an exception) rolls back. The transaction
    begins with the first statement.

    On PostgreSQL it begins with the first statement that may write
    (:func:`~infra.db.batch.reads_only`); the plain SELECTs before it run in
    autocommit, each seeing what was committed when it began, as it would
    inside the transaction (READ COMMITTED). So a unit of work that only
    reads (a game, a token) is its SELECTs alone: no BEGIN, no ROLLBACK (on
    which psycopg forgets its prepared statements), and a write's BEGIN
    goes in its batch (issue #28)."""

    players: PlayerRepository
    service_keys: ServiceKeyRepository
    games: GameRepository
    events: EventLog
    idempotency: IdempotencyStore
    boosters: BoosterRepository
    notifications: NotificationStore
    webhooks: WebhookStore
    ratings: RatingStore

    def __init__(self, engine: Engine, cache: GameCache | None = None) -> None:
        self._engine = engine
        self._cache = cache
        self._conn: sa.Connection | None = None
        self._games: SqlGameRepository | None = None
        self._events: SqlEventLog | None = None
        self._notices: SqlNotificationStore | None = None
        self._news: list[NewEvents] = []
        self._batch: Batch | None = None

    def __enter__(self) -> SqlUnitOfWork:
        if self._conn is not None:
            raise RuntimeError("a unit of work is entered once")
        c = self._conn = self._engine.connect()
        if c.dialect.name == "postgresql":  # statements sent together (infra/db/batch.py)
            try:
                driver = c.connection.dbapi_connection
                assert driver is not None  # checked out: a live psycopg connection
                driver.autocommit = True  # until the first write (above)
            except BaseException:
                c.close()
                raise
            c.info[BATCH] = self._batch = Batch(c)
        self.players = SqlPlayerRepository(c)
        self.service_keys = SqlServiceKeyRepository(c)
        self.games = self._games = SqlGameRepository(c, self._cache)
        self.events = self._events = SqlEventLog(c)
        self.idempotency = SqlIdempotencyStore(c)
        self.boosters = SqlBoosterRepository(c)
        self.webhooks = webhooks = SqlWebhookStore(c)
        self.notifications = self._notices = SqlNotificationStore(c, webhooks)
        self.ratings = SqlRatingStore(c)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn = self._live()
        try:
            if self._batch is not None:
                self._batch.clear()
                if not conn.invalidated:  # else its driver connection is gone, info and all
                    conn.info.pop(BATCH, None)
            if conn.in_transaction():
                conn.rollback()
        finally:
            conn.close()  # back out of autocommit on check-in (infra/db/engine.py)

    def commit(self) -> None:
        try:
            if self._notices is not None:
                self._notices.flush()  # numbered at the end: see SqlNotificationStore
            with conflicts_as_write_conflict("commit"):
                if self._batch is not None:
                    self._batch.send(self._live())
                self._live().commit()
        except BaseException:
            self._forget()
            raise
        games, log = self._games, self._events
        if games is None or log is None:
            return
        games.committed()
        told = [] if self._notices is None else self._notices.added
        self._news += [
            NewEvents(
                g,
                tuple(e for e in log.appended if e.game_id == g.id),
                tuple(n for n in told if n.notice.game_id == g.id),
            )
            for g in games.written
        ]
        self._forget()

    def collect_new_events(self) -> list[NewEvents]:
        news, self._news = self._news, []
        return news

    def rollback(self) -> None:
        if self._batch is not None:
            self._batch.clear()
        self._live().rollback()
        self._forget()

    def _forget(self) -> None:
        """What the transaction wrote is gone: nothing of it is cached or told."""
        if self._games is not None:
            self._games.written.clear()
        if self._events is not None:
            self._events.appended.clear()
        if self._notices is not None:
            self._notices.forget()

    def _live(self) -> sa.Connection:
        if self._conn is None:
            raise RuntimeError("the unit of work is not entered")
        return self._conn


class SqlUnitOfWorkFactory:
    """``UnitOfWorkFactory``: a new :class:`SqlUnitOfWork` per call."""

    def __init__(self, engine: Engine, cache: GameCache | None = None) -> None:
        self.engine = engine
        self.cache = cache

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.engine, self.cache)


def _conforms(engine: Engine) -> UnitOfWorkFactory:
    """Never called: mypy checks here that the classes keep the ports."""
    uow: UnitOfWork = SqlUnitOfWork(engine)
    del uow
    return SqlUnitOfWorkFactory(engine)
