"""A request that reads one game, or signs in with a token, reads it through
``Deps.committed`` when the adapter has one (PostgreSQL's reads without a
thread, docs/decisions/0073), and in a unit of work of its own otherwise:
the same answer either way."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import Unauthenticated
from domain.records import GameRecord, Player, SessionRecord
from domain.services.players import create_player, sign_in
from domain.services.queries import get_game
from domain.services.seat_presence import seated_players
from tests.fakes import FakeUnitOfWork, Harness, Store
from tests.usecases.conftest import started_game


class CountedReads:
    """A ``CommittedReads`` on the fakes' store, counting its reads."""

    def __init__(self, store: Store) -> None:
        self.store, self.reads = store, 0

    async def game(self, game_id: str) -> GameRecord | None:
        self.reads += 1
        with FakeUnitOfWork(self.store) as uow:
            return uow.games.get(game_id)

    async def session(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        self.reads += 1
        with FakeUnitOfWork(self.store) as uow:
            return uow.players.by_token_hash(token_hash)


async def test_one_game_queries_read_through_the_adapter_s_reads(h: Harness) -> None:
    gid, seats = await started_game(h)
    plain_snapshot = await get_game(h.deps, gid, seats[0])
    plain_seats = await seated_players(h.deps, gid)
    counted = CountedReads(h.store)
    deps = dataclasses.replace(h.deps, committed=counted)
    snapshot = await get_game(deps, gid, seats[0])
    assert snapshot.summary == plain_snapshot.summary
    assert snapshot.last_seq == plain_snapshot.last_seq
    assert snapshot.viewer == plain_snapshot.viewer is not None
    assert await seated_players(deps, gid) == plain_seats == (*seats, None, None)
    assert counted.reads == 2
    assert await seated_players(deps, "no-such-game") == ()


async def test_a_sign_in_reads_its_session_through_the_adapter_s_reads(h: Harness) -> None:
    made = await create_player(h.deps, "ann")
    counted = CountedReads(h.store)
    deps = dataclasses.replace(h.deps, committed=counted)
    assert (await sign_in(deps, made.token)).player == (await sign_in(h.deps, made.token)).player
    assert counted.reads == 1
    with pytest.raises(Unauthenticated, match="unknown token"):
        await sign_in(deps, "x" * 43)
    with pytest.raises(Unauthenticated, match="service key"):
        await sign_in(deps, "mmk_sk_whatever")
    assert counted.reads == 2  # a service key is refused before any read
