"""Adding an event kind is one dataclass and its projection (issue #23): a
kind declared here, and nowhere else, is in the schema (its fields typed and
described from the dataclass), in the log (stored and read back by the
codec, each audience its projection, on SQLite and PostgreSQL) and in a
stream (a subscription's frames, R11: its private field for its seat only)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Self

import pytest

from api.graphql.schema import build_schema
from domain.event_kinds import EVENT_KINDS, register
from domain.game.events import PRIVATE, SEAT, Event
from domain.log import LoggedEvent
from infra.codec import event_from_json, event_to_json
from infra.db.uow import SqlUnitOfWorkFactory
from tests.api.conftest import Client
from tests.fakes import harness
from tests.integration import records as r


@dataclass(frozen=True, slots=True)
class Cheered(Event):
    """A seat cheered; what it said is its own."""

    seat: Annotated[int, SEAT]
    loudness: Annotated[int, "How loud, 1 to 10"]
    words: Annotated[str | None, "What it said; null but for its seat"] = field(
        default=None, metadata=PRIVATE
    )

    def seen_by(self, seat: int | None) -> Self:
        return self if seat == self.seat else self._without_private()

    def private_to(self) -> tuple[int, ...]:
        return (self.seat,)


CHEER = Cheered(0, 7, "go on")  # the host's seat


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """Cheered is a kind while each test runs (the other tests' lists of
    every kind stay the game's)."""
    register(Cheered)
    yield
    del EVENT_KINDS["Cheered"]


def test_the_kind_is_registered_by_its_name_and_a_name_is_taken_once() -> None:
    assert EVENT_KINDS["Cheered"] is Cheered

    @dataclass(frozen=True, slots=True)
    class GameStarted(Event):  # a name the game's kinds hold
        pass

    try:
        register(GameStarted)
    except ValueError as e:
        assert "GameStarted" in str(e)
    else:
        raise AssertionError("a second GameStarted was registered")


def test_the_kind_is_a_typed_event_of_the_schema() -> None:
    sdl = build_schema(events=(Cheered,)).as_str()
    block = sdl[sdl.index('"""\nA seat cheered') :]
    block = block[: block.index("\n}\n")]
    assert "type Cheered implements GameEvent" in block
    assert '"""How loud, 1 to 10"""\n  loudness: Int!' in block
    assert '"""What it said; null but for its seat"""\n  words: String' in block
    assert "seat: Int!" in block and "gameId: ID!" in block and "seq: Int!" in block


def test_the_codec_writes_each_audience_its_projection_and_reads_it_back() -> None:
    assert event_to_json(CHEER.seen_by(None)) == {"seat": 0, "loudness": 7}
    assert event_to_json(CHEER.seen_by(0)) == {"seat": 0, "loudness": 7, "words": "go on"}
    assert event_from_json("Cheered", event_to_json(CHEER.seen_by(0))) == CHEER
    assert event_from_json("Cheered", {"seat": 0, "loudness": 7}) == Cheered(0, 7)


def test_the_log_stores_it_and_each_audience_reads_its_own(uow: SqlUnitOfWorkFactory) -> None:
    host = r.player()
    game = r.lobby_game(host.id)
    with uow() as u:
        u.players.add(host)
        u.games.add(game)
        u.events.append([LoggedEvent(game.id, 1, r.T0, CHEER)])
        u.commit()
    with uow() as u:
        seen = {seat: u.events.read(game.id, 0, 10, seat)[0].event for seat in (None, 0, 1)}
    assert seen == {None: Cheered(0, 7), 0: CHEER, 1: Cheered(0, 7)}


def test_a_stream_frames_it_for_each_audience() -> None:
    async def frames() -> dict[str, Any]:
        client = Client(harness())
        client.schema = build_schema(max_cost=10**6, events=(Cheered,))
        token, _ = await client.new_player("ann")
        created = await client.run(
            "mutation { createGame(input: {seatCount: 3}) { ... on GameChange { gameId } } }",
            token,
        )
        game_id = created["createGame"]["gameId"]
        seq = max(s for g, s in client.h.store.events if g == game_id) + 1
        client.h.store.events[(game_id, seq)] = LoggedEvent(game_id, seq, r.T0, CHEER)
        query = (
            "subscription($g: ID!, $after: Int!) { gameEvents(gameId: $g, afterSeq: $after) "
            "{ __typename ... on Cheered { seat loudness words } } }"
        )
        out: dict[str, Any] = {}
        for who, caller in (("spectator", None), ("its seat", token)):
            stream = await client.subscribe(query, caller, g=game_id, after=seq - 1)
            first = await asyncio.wait_for(anext(stream), 5)
            await stream.aclose()
            assert first.errors is None, first.errors
            out[who] = first.data["gameEvents"]
        return out

    cheered = {"__typename": "Cheered", "seat": 0, "loudness": 7}
    assert asyncio.run(frames()) == {
        "spectator": cheered | {"words": None},
        "its seat": cheered | {"words": "go on"},
    }
