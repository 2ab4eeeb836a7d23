"""Fuzzing how stored rows become domain objects (docs/operations.md "Fuzzing"): game and
event rows (infra/db/mappers.py) and the log's causes (domain/replay.py).

A malformed row is :class:`CorruptRow` when it is read: that includes a
cause of a malformed shape, decoded with its event (``event_from_row``). A
well-formed cause that the engine refuses does not replay: ``replay_state``
raises :class:`CorruptLog`. Never another exception, never a half-built
record."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.bots.strategy import Strategy
from domain.event_kinds import EVENT_KINDS
from domain.game.invariants import check
from domain.log import GameStart, LoggedEvent, SeatCommand
from domain.records import GameRecord
from domain.replay import CorruptLog, replay_state
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import create_player
from domain.services.transaction import Request
from infra.codec import cause_from_json, cause_to_json, event_from_json, event_to_json
from infra.db.mappers import CorruptRow, event_from_row, event_to_row, game_from_row, game_to_row
from infra.db.state_codec import encode
from tests.fakes import harness
from tests.property.test_decoder_fuzz import FUZZ, JSON, JSON_COLUMNS, VALID, mutated

SEATS = (None, 0, 1, 2, 3, 7)


async def _bots_game() -> tuple[GameRecord, list[LoggedEvent]]:
    """A 3-seat bots-only game played to its end through the use cases."""
    h = harness()
    host = (await create_player(h.deps, "host")).player.id
    made = await create_game(h.deps, Request(host, "op", {}), NewGame(3, take_seat=False))
    for strategy in (Strategy.GREEDY, Strategy.RANDOM, Strategy.GREEDY):
        await add_bot(h.deps, Request(host, "op", {}), made.game_id, strategy, None)
    await start_game(h.deps, Request(host, "op", {}), made.game_id)
    await h.drain()
    game = h.store.games[made.game_id]
    return game, h.store.log(game.id)


GAME, LOG = asyncio.run(_bots_game())
VALID["event row"] = [event_to_row(e) for e in LOG[:40]]
VALID["game row"] = [game_to_row(GAME)]
VALID["cause"] = [cause_to_json(e.cause) for e in LOG if e.cause is not None]
JSON_COLUMNS["event row"] = ("public", "private", "cause")
JSON_COLUMNS["game row"] = ("options", "seats", "state")


def test_the_log_replays() -> None:
    replayed = replay_state(GAME, LOG)
    assert replayed is not None and GAME.state is not None
    assert encode(replayed) == encode(GAME.state)
    assert len(VALID["cause"]) > 10
    assert sum(isinstance(e.cause, GameStart) for e in LOG) == 1
    for e in LOG:  # every row reads back as each audience sees the event
        row = event_to_row(e)
        for seat in SEATS:
            read = event_from_row(row, seat)
            audience = seat if seat is not None and seat < GAME.seat_count else None
            assert read.event == e.event.seen_by(audience)
            assert read.cause == e.cause


def _with_cause(at: int, cause: Any) -> dict[str, Any]:
    return {**event_to_row(LOG[at]), "cause": copy.deepcopy(cause)}


def test_a_malformed_cause_is_a_corrupt_row_and_a_refused_one_a_corrupt_log() -> None:
    """Both outcomes the fuzzing below allows do happen."""
    at, cause = next((i, e.cause) for i, e in enumerate(LOG) if isinstance(e.cause, SeatCommand))
    stored = cause_to_json(cause)
    malformed: list[Any] = [
        {"seat": "0", "command": stored["command"]},
        {"seat": cause.seat, "command": {**stored["command"], "kind": "Fly"}},
        {"seat": cause.seat, "command": {"kind": "PlayCard", "card": "crazy-0"}},  # no such card
        {"start": {"collections": [[1]]}},
        [],
        "PlayCard",
    ]
    for bad in malformed:
        try:
            event_from_row(_with_cause(at, bad), None)
        except CorruptRow:
            continue
        raise AssertionError(f"the cause {bad!r} was read")
    refused = [
        {"seat": (cause.seat + 1) % GAME.seat_count, "command": stored["command"]},
        {"seat": 99, "command": stored["command"]},
        {"seat": cause.seat, "command": {"kind": "PlayCard", "card": "crazy-7#99"}},
    ]
    for wrong in refused:
        read = event_from_row(_with_cause(at, wrong), None)
        log = copy.copy(LOG)
        log[at] = replace(LOG[at], cause=read.cause)
        try:
            replay_state(GAME, log)
        except CorruptLog:
            continue
        raise AssertionError(f"the cause {wrong!r} replayed")


def _sound(logged: LoggedEvent, kind: str, seat: int | None) -> None:
    """A row that reads is a whole record: an event of the row's kind that
    its audience's projections and JSON work on, and a typed cause."""
    event = logged.event
    assert type(event) is EVENT_KINDS[kind] and logged.type == kind
    for audience in {None, seat}:
        event.seen_by(audience)
    assert event_from_json(kind, event_to_json(event)) == event
    cause = logged.cause
    assert cause is None or isinstance(cause, SeatCommand | GameStart)
    if cause is not None:
        assert cause_from_json(cause_to_json(cause)) == cause


@FUZZ
@given(mutated("event row"))
def test_malformed_event_row(row: Any) -> None:
    """Refused whole (as any audience reads it), or a sound record."""
    for seat in SEATS:
        try:
            logged = event_from_row(row, seat)
        except CorruptRow:
            continue
        _sound(logged, row["type"], seat)


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
    """One stored cause replaced: a malformed one is ``CorruptRow`` when its
    row is read; a well-formed one replays to a sound state, or the log is
    ``CorruptLog``."""
    row = _with_cause(at, cause)
    try:
        read = event_from_row(row, None)
    except CorruptRow:
        return
    _sound(read, row["type"], None)
    log = copy.copy(LOG)
    log[at] = replace(LOG[at], cause=read.cause)
    try:
        state = replay_state(GAME, log)
    except CorruptLog:
        return
    if state is not None:
        check(state)  # a game, if another one: never a corrupted one
