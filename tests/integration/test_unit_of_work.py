"""Unit of work contract: all or nothing."""

from __future__ import annotations

import pytest

from domain.ports import WriteConflict
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r


def test_leaving_without_commit_rolls_back(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player()
    with uow() as u:
        u.players.add(p, "h")
    with uow() as u:
        assert u.players.get(p.id) is None


def test_an_exception_rolls_everything_back(uow: SqlUnitOfWorkFactory) -> None:
    p = r.player()
    with pytest.raises(RuntimeError), uow() as u:
        u.players.add(p, "h")
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
        u.players.add(p, "h")
        u.games.add(game)
        u.events.append([r.event(game.id, 1)])
        u.commit()
    with pytest.raises(WriteConflict), uow() as u:
        u.idempotency.put(r.idempotency(p.id))
        u.events.append([r.event(game.id, 1)])
    with uow() as u:
        assert u.idempotency.get(p.id, "key-1") is None


def test_commit_then_rollback_and_reuse(uow: SqlUnitOfWorkFactory) -> None:
    a, b = r.player(), r.player()
    with uow() as u:
        u.players.add(a, "ha")
        u.commit()
        u.players.add(b, "hb")
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
