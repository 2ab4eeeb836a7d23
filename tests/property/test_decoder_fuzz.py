"""Fuzzing the decoders with malformed data (docs/operations.md "Fuzzing"): the state
decoder, the command decoder and the lobby cursor decoder. Random JSON, and
valid encodings with a key dropped, a value of the wrong type, an integer out
of range or a bit flipped, must give the decoder's typed error or a value
that is sound to use: never another exception, never a corrupted game."""

from __future__ import annotations

import base64
import copy
import json
import os
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from api.graphql.cursors import decode_cursor, encode_cursor
from domain.errors import BadRequest
from domain.game.cards import Card
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlaySecondCard,
    ReorderTop,
    SendMessage,
)
from domain.game.engine import apply, to_act
from domain.game.errors import BadInput, GameError
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.game.setup import new_game
from domain.game.state import GameState
from domain.game.views import player_view, spectator_view
from domain.records import GameStatus, GameSummary
from infra.db.command_codec import command_from_dict, command_to_dict
from infra.db.state_codec import StateDecodeError, decode, encode
from tests.property.harness import command_cards

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0")) or None
"""``make fuzz`` raises the example counts; else the Hypothesis profile's."""
FUZZ = settings(
    max_examples=EXAMPLES or settings().max_examples * 4,
    suppress_health_check=[HealthCheck.too_slow],
    deadline=None,
)


# ---------------------------------------------------------------- valid data
def _played(seats: int, seed: str, moves: int) -> GameState:
    """A seeded game after ``moves`` random legal commands."""
    state = new_game(seats, seed).state
    rng = random.Random(seed)
    for _ in range(moves):
        seat = to_act(state)
        if seat is None:
            break
        apply(state, seat, rng.choice(legal_actions(state, seat)))
    return state


def _legal_now(state: GameState) -> list[Command]:
    seat = to_act(state)
    return [] if seat is None else legal_actions(state, seat)


STATES = [_played(n, f"fuzz-{n}-{m}", m) for n in (3, 5, 8) for m in (0, 7, 40, 400)]
ENCODED = [encode(s) for s in STATES]
COMMANDS = [
    command_to_dict(c)
    for c in [
        *(c for s in STATES for c in _legal_now(s)[:8]),
        SendMessage(1, "hello"),
        DeliverMessage("m1"),
        DeclineMessage("m1"),
        Pass(),
        DiscardAndPlay(Card("crazy-1"), Card("crazy-2")),
        PlaySecondCard(Card("crazy-3")),
        GiveCards((Gift(1, Card("crazy-4")), Gift(2, Card("crazy-5")))),
        HungryDiscard(Card("crazy-6")),
        HungryTake(Card("crazy-7")),
        ChooseNeighbour(2),
        GiveCard(Card("crazy-8")),
        ReorderTop((Card("crazy-9"), Card("crazy-10"))),
    ]
]
"""Commands as logs store them: legal ones, and one of every kind."""

# ---------------------------------------------------------------- malformed data
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
VALID: dict[str, list[Any]] = {"state": ENCODED, "command": COMMANDS}
ODD_NUMBERS = st.sampled_from([-1, -(2**63), 2**63, 2**64, 10**30, 255, 9, 1.5, float("inf")])
WRONG = st.one_of(JSON, ODD_NUMBERS, st.sampled_from([True, [], {}, "x", "1"]))


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``doc`` (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    )
    for k, v in items:
        out.append((*prefix, k))
        out += _paths(v, (*prefix, k))
    return out


JSON_COLUMNS: dict[str, tuple[str, ...]] = {}
"""Rows (test_log_fuzz.py): only their JSON columns are mutated, the others
being typed by the database."""


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> Any:
    """A valid document of ``kind`` with one change: a key or item dropped, a
    value replaced (wrong type, odd integer), or a bit flipped in its JSON."""
    valid = VALID[kind]
    doc = copy.deepcopy(valid[draw(st.integers(0, len(valid) - 1))])
    if kind not in JSON_COLUMNS:
        return draw(_changed(doc))
    column = draw(st.sampled_from(JSON_COLUMNS[kind]))
    box = draw(_changed([doc.pop(column)]))
    if box:
        doc[column] = box[0]
    return doc


@st.composite
def _changed(draw: st.DrawFn, doc: Any) -> Any:
    how = draw(st.sampled_from(["drop", "replace", "replace", "bump", "flip"]))
    if how == "flip":
        text = bytearray(json.dumps(doc).encode())
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(text) - 1))
            text[i] ^= 1 << draw(st.integers(0, 7))
        try:
            return json.loads(text)
        except ValueError:  # no longer JSON: the database layer's concern
            assume(False)
    paths = _paths(doc)
    assume(paths)
    path = draw(st.sampled_from(paths))
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if how == "drop":
        del parent[key]
    elif how == "bump" and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += draw(st.sampled_from([-1, 1, -100, 100, 2**64]))
    else:
        parent[key] = draw(WRONG)
    return doc


# ---------------------------------------------------------------- state decoder
def _sound(state: GameState) -> None:
    """A decoded state is one the engine can serve: views, legal actions and
    a legal move work, and it encodes back to what was decoded."""
    assert decode(encode(state)) == state
    spectator_view(state)
    for seat in range(len(state.seats)):
        player_view(state, seat)
        legal_actions(state, seat)
    now = to_act(state)
    if now is not None:
        actions = legal_actions(state, now)
        if actions:
            apply(copy.deepcopy(state), now, actions[0])


def _decode_or_refuse(data: Any) -> None:
    try:
        state = decode(data)
    except StateDecodeError:
        return
    _sound(state)


def test_valid_states_decode_and_are_sound() -> None:
    for data in ENCODED:
        _sound(decode(data))


@FUZZ
@given(JSON)
def test_random_json_is_not_a_state(data: Any) -> None:
    _decode_or_refuse(data)


@FUZZ
@given(mutated("state"))
def test_mutated_state_is_refused_or_sound(data: Any) -> None:
    _decode_or_refuse(data)


# ---------------------------------------------------------------- command decoder
def _decode_command(data: Any) -> Command | None:
    try:
        return command_from_dict(data)
    except BadInput:
        return None


@FUZZ
@given(st.one_of(JSON, mutated("command")), st.sampled_from(range(len(STATES))))
def test_malformed_command_is_refused_and_changes_nothing(data: Any, which: int) -> None:
    """A command that decodes is the one written (no coercion), and is applied
    or refused with a ``GameError``; a refused one leaves the state as it was
    (engine.apply's contract)."""
    cmd = _decode_command(data)
    if cmd is None:
        return
    assert command_to_dict(cmd) == data  # decoded as it was, nothing coerced
    assert all(type(c) is Card for c in command_cards(cmd)), "a card field holds a Card"
    state = copy.deepcopy(STATES[which])
    before = encode(state)
    seat = to_act(state)
    try:
        apply(state, 0 if seat is None else seat, cmd)
    except GameError:
        assert encode(state) == before
        return
    _sound(state)


def test_valid_commands_round_trip() -> None:
    for data in COMMANDS:
        cmd = command_from_dict(data)
        assert command_to_dict(cmd) == data
        assert all(type(c) is Card for c in command_cards(cmd))


NOT_CARDS = ("crazy-0", "crazy-33", "crazy-7#0", "crazy-7#x", "x#1", "CRAZY-7", "", "needy-prize-4")


def _card_paths(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The paths of the card ids in a stored command."""
    out: list[tuple[Any, ...]] = [(k,) for k in ("card", "discard") if k in data]
    out += [("cards", i) for i in range(len(data.get("cards", [])))]
    out += [("gifts", i, "card") for i in range(len(data.get("gifts", [])))]
    return out


def test_a_card_field_must_name_a_card() -> None:
    """An id that names no card is refused as ``BAD_INPUT``, wherever a card goes."""
    tried = 0
    for data in COMMANDS:
        for path in _card_paths(data):
            for bad in NOT_CARDS:
                doc = copy.deepcopy(data)
                parent = doc
                for k in path[:-1]:
                    parent = parent[k]
                parent[path[-1]] = bad
                try:
                    command_from_dict(doc)
                except BadInput:
                    tried += 1
                    continue
                raise AssertionError(f"{doc} was decoded")
    assert tried > 100


# ---------------------------------------------------------------- cursor decoder
def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode()


OFFSETS = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
CURSORS = st.one_of(
    st.text(max_size=60),
    st.text(max_size=60).map(_cursor),
    st.builds(
        lambda at, tz, game: _cursor(f"{at.replace(tzinfo=tz).isoformat()}|{game}"),
        st.datetimes(),
        OFFSETS,
        st.text(max_size=10),
    ),
)


@FUZZ
@given(CURSORS)
def test_malformed_cursor_is_refused(cursor: str) -> None:
    """``BAD_INPUT``, or a UTC time and a game id the listing can query with
    (a time that has no UTC equivalent, 0001-01-01 at +05:00, is refused)."""
    try:
        when, game = decode_cursor(cursor)
    except BadRequest:
        return
    assert game
    assert when.utcoffset() == timedelta(0)
    assert when.astimezone(UTC) == when


def test_cursor_round_trip() -> None:
    at = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    summary = GameSummary("g-1", "h", GameStatus.LOBBY, 3, 1, GameOptions(), 0, at)
    assert decode_cursor(encode_cursor(summary)) == (at, "g-1")
