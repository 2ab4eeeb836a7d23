"""A query that reads one game reads it through ``Deps.committed`` when the
adapter has one (PostgreSQL's reads without a thread, docs/decisions/0073),
and in a unit of work of its own otherwise: the same game either way."""

from __future__ import annotations

import dataclasses

from domain.records import GameRecord
from domain.services.queries import get_game
from domain.services.seat_presence import seated_players
from tests.fakes import FakeUnitOfWork, Harness, Store
from tests.usecases.conftest import started_game


class CountedGames:
    """A ``CommittedGames`` on the fakes' store, counting its reads."""

    def __init__(self, store: Store) -> None:
        self.store, self.reads = store, 0

    async def game(self, game_id: str) -> GameRecord | None:
        self.reads += 1
        with FakeUnitOfWork(self.store) as uow:
            return uow.games.get(game_id)


async def test_one_game_queries_read_through_the_adapter_s_committed_games(h: Harness) -> None:
    gid, seats = await started_game(h)
    plain_snapshot = await get_game(h.deps, gid, seats[0])
    plain_seats = await seated_players(h.deps, gid)
    counted = CountedGames(h.store)
    deps = dataclasses.replace(h.deps, committed=counted)
    snapshot = await get_game(deps, gid, seats[0])
    assert snapshot.summary == plain_snapshot.summary
    assert snapshot.last_seq == plain_snapshot.last_seq
    assert snapshot.viewer == plain_snapshot.viewer is not None
    assert await seated_players(deps, gid) == plain_seats == (*seats, None, None)
    assert counted.reads == 2
    assert await seated_players(deps, "no-such-game") == ()
