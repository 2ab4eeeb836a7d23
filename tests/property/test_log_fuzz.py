"""Fuzzing how stored rows become domain objects (README "Fuzzing"): game and
event rows (infra/db/mappers.py) and the log's causes (domain/replay.py).
A malformed row is :class:`CorruptRow`, a cause that does not replay is
:class:`CorruptLog`; never another exception, never a half-built record."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.bots.strategy import Strategy
from domain.game.invariants import check
from domain.records import GameRecord, StoredEvent
from domain.replay import CorruptLog, replay_state
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.mutation import Request
from domain.services.players import create_player
from infra.db.mappers import CorruptRow, event_from_row, event_to_row, game_from_row, game_to_row
from infra.db.state_codec import encode
from tests.fakes import harness
from tests.property.test_decoder_fuzz import FUZZ, JSON, JSON_COLUMNS, VALID, mutated

SEATS = (None, 0, 1, 2, 3, 7)


async def _bots_game() -> tuple[GameRecord, list[StoredEvent]]:
    """A 3-seat bots-only game played to its end through the use cases."""
    h = harness()
    host = (await create_player(h.deps, "host")).player.id
    made = await create_game(h.deps, Request(host, "op", {}), NewGame(3, take_seat=False))
    for strategy in (Strategy.GREEDY, Strategy.RANDOM, Strategy.GREEDY):
        await add_bot(h.deps, Request(host, "op", {}), made.game_id, strategy, None)
    await start_game(h.deps, Request(host, "op", {}), made.game_id)
    await h.drain()
    game = h.store.games[made.game_id]
    log = sorted((e for (g, _), e in h.store.events.items() if g == game.id), key=lambda e: e.seq)
    return game, log


GAME, LOG = asyncio.run(_bots_game())
VALID["event row"] = [event_to_row(e) for e in LOG[:40]]
VALID["game row"] = [game_to_row(GAME)]
VALID["cause"] = [e.cause for e in LOG if e.cause is not None]
JSON_COLUMNS["event row"] = ("public", "private", "cause")
JSON_COLUMNS["game row"] = ("options", "seats", "state")


def test_the_log_replays() -> None:
    replayed = replay_state(GAME, LOG)
    assert replayed is not None and GAME.state is not None
    assert encode(replayed) == encode(GAME.state)
    assert len(VALID["cause"]) > 10


@FUZZ
@given(mutated("event row"))
def test_malformed_event_row(row: Any) -> None:
    try:
        event = event_from_row(row)
    except CorruptRow:
        return
    for seat in SEATS:
        event.for_seat(seat)


@FUZZ
@given(mutated("game row"))
def test_malformed_game_row(row: Any) -> None:
    """Refused whole, or a record whose state (decoded and checked) is sound."""
    try:
        game = game_from_row(row)
    except CorruptRow:
        return
    assert game_to_row(game)["state"] == (None if game.state is None else encode(game.state))


@FUZZ
@given(st.one_of(mutated("cause"), JSON), st.integers(0, len(LOG) - 1))
def test_malformed_cause_does_not_replay(cause: Any, at: int) -> None:
    """One cause replaced: the log replays to a sound state, or ``CorruptLog``."""
    log = copy.copy(LOG)
    e = log[at]
    log[at] = StoredEvent(e.game_id, e.seq, e.type, e.public, e.private, e.at, cause)
    try:
        state = replay_state(GAME, log)
    except CorruptLog:
        return
    if state is not None:
        check(state)  # a game, if another one: never a corrupted one
