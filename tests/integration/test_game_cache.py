"""The in-memory game cache: served only at the stored version, filled only
by committed writes."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import sqlalchemy as sa

from domain.ports import WriteConflict
from domain.records import GameRecord
from infra.db.game_cache import GameCache
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r
from tests.integration.databases import empty_tables


def _cached(engine: sa.Engine) -> tuple[GameCache, SqlUnitOfWorkFactory]:
    """Empty tables, and units of work over a new game cache."""
    empty_tables(engine)
    cache = GameCache()
    return cache, SqlUnitOfWorkFactory(engine, cache)


def _committed(uow: SqlUnitOfWorkFactory) -> GameRecord:
    """A started game of a new host, committed through ``uow``."""
    host = r.player()
    game = r.started_game(host.id)
    snapshot = game.clone()  # once committed, the record is the repository's
    with uow() as u:
        u.players.add(host, "h")
        u.games.add(game)
        u.commit()
    return snapshot


def test_a_committed_game_is_served_from_memory_at_its_version(engine: sa.Engine) -> None:
    cache, uow = _cached(engine)
    game = _committed(uow)
    with uow() as u:
        first = u.games.get(game.id)
    assert first == game and cache.hits == 1
    assert first is not None and first.state is not None
    first.state.seats[0].hand.clear()  # a copy: the cache is not changed through it
    with uow() as u:
        assert u.games.get(game.id) == game


def test_an_uncommitted_write_is_never_served(engine: sa.Engine) -> None:
    _, uow = _cached(engine)
    game = _committed(uow)
    changed = game.clone()
    changed.version += 1
    changed.last_seq += 5
    with uow() as u:
        u.games.save(changed, expected_version=game.version)  # then rolled back
    with uow() as u:
        assert u.games.get(game.id) == game


def test_another_writer_makes_the_cached_copy_stale(engine: sa.Engine) -> None:
    _, cached_uow = _cached(engine)
    plain_uow = SqlUnitOfWorkFactory(engine)
    game = _committed(cached_uow)
    other = game.clone()
    other.version += 1
    other.last_seq += 2
    with plain_uow() as u:  # another process: this cache never hears of it
        u.games.save(other, expected_version=game.version)
        u.commit()
    with cached_uow() as u:
        assert u.games.get(game.id) == other


def test_an_optimistic_read_serves_the_copy_and_says_it_may_be_behind(engine: sa.Engine) -> None:
    _, cached_uow = _cached(engine)
    plain_uow = SqlUnitOfWorkFactory(engine)
    with cached_uow() as u:
        assert u.games.get_known("no-such-game") == (None, False)
    game = _committed(cached_uow)
    other = game.clone()
    other.version += 1
    with plain_uow() as u:  # another process moves the game on
        u.games.save(other, expected_version=game.version)
        u.commit()
    with cached_uow() as u:
        assert u.games.get_known(game.id) == (game, True), "the copy, flagged"
        stale = game.clone()
        stale.version += 1
        with pytest.raises(WriteConflict):
            u.games.save(stale, expected_version=game.version)
    with plain_uow() as u:
        assert u.games.get_known(game.id) == (other, False), "no cache: a plain read"


def test_an_optimistic_read_hands_the_copy_over(engine: sa.Engine) -> None:
    """``take``: changed by its taker, the copy is never served unless committed."""
    _, uow = _cached(engine)
    game = _committed(uow)
    with uow() as u:
        taken, known = u.games.get_known(game.id)
        assert known and taken == game
        assert taken is not None and taken.state is not None
        taken.state.seats[0].hand.clear()  # a refused or rolled-back change
    with uow() as u:
        assert u.games.get_known(game.id) == (game, False), "read afresh, not the changed copy"
    with uow() as u:
        moved, known = u.games.get_known(game.id)
        assert known and moved is not None
        moved.version += 1
        u.games.save(moved, expected_version=game.version)
        u.commit()
    with uow() as u:
        assert u.games.get_known(game.id) == (moved, True), "the committed change is kept"


def test_a_copy_being_made_is_never_handed_over_half_made() -> None:
    """``get`` copies under the lock: a ``take`` (whose taker changes the
    record) waits until the copy is done, so no copy mixes two versions."""
    copying, release = threading.Event(), threading.Event()

    class SlowToCopy(GameRecord):
        def clone(self) -> GameRecord:
            copying.set()
            release.wait(5)
            return GameRecord.clone(self)

    game = r.started_game("host")
    slow = SlowToCopy(**{f.name: getattr(game, f.name) for f in dataclasses.fields(game)})
    cache = GameCache()
    cache.put(slow)
    copies: list[GameRecord | None] = []
    reader = threading.Thread(target=lambda: copies.append(cache.get(game.id, game.version)))
    reader.start()
    assert copying.wait(5)
    taken: list[GameRecord | None] = []
    taker = threading.Thread(target=lambda: taken.append(cache.take(game.id)))
    taker.start()
    taker.join(0.2)
    assert taker.is_alive(), "take handed the record over while it was being copied"
    release.set()
    reader.join(5)
    taker.join(5)
    assert copies == [game] and taken == [slow]
