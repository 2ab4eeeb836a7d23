"""Plain subscription selections framed without the executor
(api/graphql/plain_selection.py): byte for byte what graphql-core's executor
frames, for any mix of fields, aliases and repeats; anything else is left to
the executor."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
import strawberry
from graphql import OperationDefinitionNode, parse, validate
from hypothesis import given
from hypothesis import strategies as st
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.graphql.plain_selection import plain_selection
from api.graphql.schema import schema
from api.graphql.types.events import GameEvent
from domain.game.cards import DESIGN_CARDS, PRIZE_CARDS
from domain.game.events import (
    CardsDrawn,
    Event,
    GameEnded,
    MessageSent,
    TrickPlay,
    TrickWon,
)
from domain.game.state import MessageStatus, Termination

FIELDS = ["gameId", "seq", "type", "at", "data", "__typename"]
SEATS = st.integers(0, 7)
CARDS = st.sampled_from(DESIGN_CARDS)
EVENTS = st.one_of(
    st.builds(
        MessageSent,
        id=st.text(max_size=6),
        trick=st.integers(1, 21),
        sender=SEATS,
        recipient=SEATS,
        status=st.sampled_from(MessageStatus),
        text=st.none() | st.text(max_size=12),
    ),
    st.builds(
        TrickWon,
        trick=st.integers(1, 21),
        winner=SEATS,
        prize=st.sampled_from(PRIZE_CARDS),
        plays=st.lists(
            st.builds(TrickPlay, SEATS, CARDS, st.none() | CARDS, st.integers(1, 64)), max_size=3
        ).map(tuple),
        passes=st.lists(SEATS, max_size=2).map(tuple),
        scores=st.lists(st.integers(0, 500), max_size=8).map(tuple),
    ),
    st.builds(
        CardsDrawn,
        SEATS,
        st.integers(0, 10),
        st.integers(0, 200),
        st.none() | st.lists(CARDS, max_size=4).map(tuple),
    ),
    st.builds(
        GameEnded,
        st.sampled_from(Termination),
        st.lists(SEATS, max_size=3).map(tuple),
        st.lists(SEATS, max_size=2).map(tuple),
        st.lists(st.integers(0, 500), max_size=8).map(tuple),
    ),
)


def _operation(text: str) -> OperationDefinitionNode:
    node = parse(text).definitions[0]
    assert isinstance(node, OperationDefinitionNode)
    return node


def _by_executor(text: str, payload: GameEvent) -> Any:
    built = StrawberryGraphQLCoreExecutionContext.build(schema._schema, parse(text))
    assert not isinstance(built, list), built
    return built.build_per_event_executor(payload).execute_operation(False)


@given(
    picks=st.lists(
        st.tuples(st.sampled_from(FIELDS), st.none() | st.sampled_from(["a", "b", "seq", "x1"])),
        min_size=1,
        max_size=8,
    ),
    root_alias=st.none() | st.just("events"),
    seq=st.integers(1, 2**31 - 1),
    kind=st.text(min_size=1, max_size=12),
    event=EVENTS,
    seat=st.none() | st.integers(0, 7),
)
def test_a_plain_selection_frames_what_the_executor_frames(
    picks: list[tuple[str, str | None]],
    root_alias: str | None,
    seq: int,
    kind: str,
    event: Event,
    seat: int | None,
) -> None:
    fields = " ".join(f"{alias}: {name}" if alias else name for name, alias in picks)
    root = f"{root_alias}: gameEvents" if root_alias else "gameEvents"
    text = f'subscription {{ {root}(gameId: "g1", afterSeq: 3) {{ {fields} }} }}'
    audience = "game:g1:public" if seat is None else f"game:g1:seat:{seat}"
    at = datetime(2026, 11, 29, 10, 0, 0, 123000, tzinfo=UTC)
    # Any payload: events of several shapes (nested lists and objects, any text).
    payload = GameEvent(
        game_id=strawberry.ID("g1"),
        seq=seq,
        type=kind,
        at=at,
        event=event,
        frame_key=(audience, seq),
    )
    if validate(schema._schema, parse(text)):  # e.g. one alias for two fields: never run
        return
    expected = _by_executor(text, payload)
    assert expected.errors is None, expected.errors
    plain = plain_selection(schema._schema, _operation(text))
    assert plain is not None
    framed = plain.frame(payload)
    assert framed is not None and framed.errors is None
    assert orjson.dumps(framed.data) == orjson.dumps(expected.data)


@pytest.mark.parametrize(
    "selection",
    [
        "gameEvents(gameId: $g) { seq ... on GameEvent { type } }",
        "gameEvents(gameId: $g) { seq ...F }",
        "gameEvents(gameId: $g) { seq type @include(if: $x) }",
        "gameEvents(gameId: $g) @skip(if: $x) { seq }",
        "gameEvents(gameId: $g) { seq } lobby { gameId }",
        "lobby { gameId status }",  # an enum: not a scalar
    ],
)
def test_anything_else_is_left_to_the_executor(selection: str) -> None:
    text = f"subscription($g: ID!, $x: Boolean!) {{ {selection} }} fragment F on GameEvent {{ at }}"
    assert plain_selection(schema._schema, _operation(text)) is None


def test_queries_and_mutations_are_not_subscription_frames() -> None:
    op = _operation('query { game(id: "g") { __typename } }')
    assert plain_selection(schema._schema, op) is None
