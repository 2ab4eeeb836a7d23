"""Unit of work contract: all or nothing."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from domain.bots.strategy import Strategy
from domain.ports import WriteConflict
from domain.records import Occupant
from infra.db.game_cache import GameCache
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r


def test_leaving_without_commit_rolls_back(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player()
    with uow() as u:
        u.players.add(p)
    with uow() as u:
        assert u.players.get(p.id) is None


def test_an_exception_rolls_everything_back(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player()
    with pytest.raises(RuntimeError), uow() as u:
        u.players.add(p)
        game = r.lobby_game(p.id)
        u.games.add(game)
        u.events.append([r.event(game.id, 1)])
        raise RuntimeError("boom")
    with uow() as u:
        assert u.players.get(p.id) is None
        assert u.games.get(game.id) is None


def test_a_conflict_discards_the_whole_transaction(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player()
    game = r.lobby_game(p.id)
    with uow() as u:
        u.players.add(p)
        u.games.add(game)
        u.events.append([r.event(game.id, 1)])
        u.commit()
    with pytest.raises(WriteConflict), uow() as u:
        u.idempotency.put(r.idempotency(p.id))
        u.events.append([r.event(game.id, 1)])
        u.commit()  # PostgreSQL: raised when the batch is sent
    with uow() as u:
        assert u.idempotency.get(p.id, "key-1") is None


def test_commit_then_rollback_and_reuse(uow: SqlUnitOfWorkFactory) -> None:
    a, b = r.player(), r.player()
    with uow() as u:
        u.players.add(a)
        u.commit()
        u.players.add(b)
        u.rollback()
    with uow() as u:
        assert u.players.get(a.id) == a
        assert u.players.get(b.id) is None


def test_a_unit_of_work_is_entered_once(uow: SqlUnitOfWorkFactory) -> None:
    u = uow()
    with u, pytest.raises(RuntimeError):
        u.__enter__()
    with pytest.raises(RuntimeError):
        uow().commit()


def test_a_rolled_back_game_is_neither_cached_nor_told(engine: sa.Engine) -> None:
    """0029: a game written and then rolled back is not what later reads get
    from the cache, and the commit after the rollback hands none of it to the
    work after the commit (collect_new_events)."""
    cached = SqlUnitOfWorkFactory(engine, GameCache())
    p = r.player()
    game = r.lobby_game(p.id)
    with cached() as u:
        u.players.add(p)
        u.games.add(game)
        u.commit()
        assert [n.game.id for n in u.collect_new_events()] == [game.id]
    with cached() as u:
        mine = u.games.get(game.id)
        assert mine is not None
        mine.version += 1
        u.games.save(mine, game.version)
        u.events.append([r.event(game.id, game.last_seq + 1)])
        u.rollback()
        u.players.add(r.player())
        u.commit()
        assert u.collect_new_events() == []
    with cached() as u:
        again = u.games.get(game.id)
    assert again is not None and again.version == game.version
    other = SqlUnitOfWorkFactory(engine)  # another process commits that version for real
    with other() as u:
        theirs = u.games.get(game.id)
        assert theirs is not None
        theirs.version += 1
        theirs.seats[1] = Occupant(bot=Strategy.RANDOM)
        u.games.save(theirs, game.version)
        u.commit()
    with cached() as u:
        seen = u.games.get(game.id)
    assert seen is not None and seen.seats[1] == Occupant(bot=Strategy.RANDOM)
