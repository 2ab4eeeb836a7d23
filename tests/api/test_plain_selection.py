"""Plain subscription selections framed without the executor
(api/fast/plain_selection.py): byte for byte what graphql-core's executor
frames, for any mix of fields, aliases and repeats at the root, and for
random typed selections (inline fragments, named fragments, nested objects
and lists, merged repeats) over every kind of event of real games, as every
audience sees it; anything else is left to the executor."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from graphql import (
    FragmentDefinitionNode,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    OperationDefinitionNode,
    parse,
    validate,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.fast.plain_selection import plain_selection
from api.graphql.schema import schema
from api.graphql.types.events import GameEvent, typed
from domain.bots.strategy import Strategy
from domain.clocks import DeadlineNear, SeatReclaimed, SeatTakenOver, TurnTimedOut, stamp
from domain.game.cards import DESIGN_CARDS, PRIZE_CARDS
from domain.game.engine import apply
from domain.game.events import (
    CardsDrawn,
    Event,
    GameEnded,
    MessageSent,
    TrickWon,
    WonPlay,
)
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.state import MessageStatus, Termination
from domain.invitations import (
    InvitationCancelled,
    InvitationDeclined,
    InviteCodeChanged,
    PlayersInvited,
)
from domain.lobby import BotSeated, GameCreated, SeatLeft, SeatTaken
from domain.log import LoggedEvent
from domain.rematch import RematchOffered
from tests.property.budget import examples
from tests.property.harness import Driver, GameSpec

FIELDS = ["gameId", "seq", "type", "at", "data", "__typename"]
SEATS = st.integers(0, 7)
CARDS = st.sampled_from(DESIGN_CARDS)
EVENTS = st.one_of(
    st.builds(
        MessageSent,
        message_id=st.text(max_size=6),
        trick=st.integers(1, 21),
        from_seat=SEATS,
        to_seat=SEATS,
        status=st.sampled_from(MessageStatus),
        text=st.none() | st.text(max_size=12),
    ),
    st.builds(
        TrickWon,
        trick=st.integers(1, 21),
        winner=SEATS,
        prize=st.sampled_from(PRIZE_CARDS),
        plays=st.lists(
            st.builds(WonPlay, SEATS, CARDS, st.none() | CARDS, st.integers(1, 64)), max_size=3
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


def _fragments(text: str) -> dict[str, FragmentDefinitionNode]:
    return {
        d.name.value: d for d in parse(text).definitions if isinstance(d, FragmentDefinitionNode)
    }


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
    event=EVENTS,
    seat=st.none() | st.integers(0, 7),
)
def test_a_plain_selection_frames_what_the_executor_frames(
    picks: list[tuple[str, str | None]],
    root_alias: str | None,
    seq: int,
    event: Event,
    seat: int | None,
) -> None:
    fields = " ".join(f"{alias}: {name}" if alias else name for name, alias in picks)
    root = f"{root_alias}: gameEvents" if root_alias else "gameEvents"
    text = f'subscription {{ {root}(gameId: "g1", afterSeq: 3) {{ {fields} }} }}'
    audience = "game:g1:public" if seat is None else f"game:g1:seat:{seat}"
    at = datetime(2026, 11, 29, 10, 0, 0, 123000, tzinfo=UTC)
    # Any payload: events of several shapes (nested lists and objects, any text).
    payload = typed(LoggedEvent("g1", seq, at, event), (audience, seq))
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
        "gameEvents(gameId: $g) { seq type @include(if: $x) }",
        "gameEvents(gameId: $g) { seq ... on CardPlayed @skip(if: $x) { seat } }",
        "gameEvents(gameId: $g) @skip(if: $x) { seq }",
        "gameEvents(gameId: $g) { seq } lobby { gameId }",
        "gameEvents(gameId: $g) { seq ...F }",  # a fragment with a directive inside
    ],
)
def test_anything_else_is_left_to_the_executor(selection: str) -> None:
    text = (
        f"subscription($g: ID!, $x: Boolean!) {{ {selection} }} "
        "fragment F on GameEvent { at @include(if: $x) }"
    )
    assert plain_selection(schema._schema, _operation(text), _fragments(text)) is None


def test_queries_and_mutations_are_not_subscription_frames() -> None:
    op = _operation('query { game(id: "g") { __typename } }')
    assert plain_selection(schema._schema, op) is None


# ------------------------------------------------------------ typed selections
def _real_events() -> list[LoggedEvent]:
    """Every projection of every event of a few real games (all formats,
    messages, every ability), and of the lobby's kinds: one of each kind and
    audience at most a few times, so the sample stays small."""
    at = datetime(2026, 11, 29, 10, 0, 0, 123000, tzinfo=UTC)
    events: list[Event] = [
        GameCreated("p1", 4, Format.SEALED, AbilityTrigger.EVERY_CARD, False, 2),
        GameCreated("p1", 3, Format.SINGLETON, AbilityTrigger.LEAD_AND_RARE, True, None),
        SeatTaken(1, "p2", "Bea"),
        SeatLeft(1, "p2"),
        BotSeated(2, Strategy.GREEDY),
        TurnTimedOut(1),
        SeatTakenOver(1, Strategy.GREEDY),
        SeatTakenOver(2, Strategy.GREEDY, left=True),
        SeatReclaimed(1),
        RematchOffered("g2"),
        PlayersInvited(("p3", "p4")),
        InvitationDeclined("p3"),
        InvitationCancelled("p4"),
        InviteCodeChanged(False),
        InviteCodeChanged(True),
        DeadlineNear(1, at),
    ]
    seats = 0
    for i, (fmt, trigger) in enumerate(
        [
            (Format.SEALED, AbilityTrigger.EVERY_CARD),
            (Format.SINGLETON, AbilityTrigger.EVERY_CARD),
            (Format.SINGLETON, AbilityTrigger.LEAD_AND_RARE),
        ]
    ):
        spec = GameSpec(
            4 + i, f"plain-{i}", GameOptions(fmt, trigger, True), None, ("greedy",) * (4 + i), 80, i
        )
        setup = spec.new()
        state, driver = setup.state, Driver(spec)
        events += setup.events
        while (move := driver.next(state)) is not None:
            events += stamp(apply(state, *move), at if i == 0 else None, {})  # deadlines (0046)
        seats = max(seats, state.n)
    seen: Counter[tuple[str, int | None]] = Counter()
    out: list[LoggedEvent] = []
    for seq, event in enumerate(events, 1):
        for audience in [None, *range(seats)]:
            key = (type(event).__name__, audience)
            if seen[key] < PER_KIND:
                seen[key] += 1
                out.append(LoggedEvent("g1", seq, at, event.seen_by(audience)))
    return out


PER_KIND = 3
REAL_EVENTS = _real_events()


def _interface() -> GraphQLInterfaceType:
    found = schema._schema.get_type("GameEvent")
    assert isinstance(found, GraphQLInterfaceType)
    return found


INTERFACE = _interface()
KINDS = sorted(schema._schema.get_possible_types(INTERFACE), key=lambda t: t.name)


def _named(kind: GraphQLOutputType) -> Any:
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    return kind


@st.composite
def _selection(draw: st.DrawFn, kind: GraphQLObjectType | GraphQLInterfaceType, depth: int) -> str:
    """A random selection set of ``kind``: fields (some aliased, some twice),
    nested objects, ``__typename``."""
    names = [n for n in kind.fields if n not in ("type", "data") or depth == 0]
    picked = draw(st.lists(st.sampled_from(names), min_size=1, max_size=6))
    parts = []
    for name in picked:
        alias = draw(st.none() | st.sampled_from(["a", "b", name]))
        head = f"{alias}: {name}" if alias else name
        inner = _named(kind.fields[name].type)
        if isinstance(inner, GraphQLObjectType | GraphQLInterfaceType):
            if depth >= 2:
                continue
            head += " { " + draw(_selection(inner, depth + 1)) + " }"
        parts.append(head)
    if draw(st.booleans()):
        parts.append("__typename")
    return " ".join(parts) or "__typename"


@st.composite
def _typed_document(draw: st.DrawFn) -> str:
    """A subscription with inline fragments and named fragment spreads on
    random event types (and on the interface), as codegen clients write."""
    parts = [draw(_selection(INTERFACE, 0))]
    fragments = []
    for i, kind in enumerate(draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))):
        body = draw(_selection(kind, 0))
        if draw(st.booleans()):
            parts.append(f"... on {kind.name} {{ {body} }}")
        else:
            parts.append(f"...F{i}")
            fragments.append(f"fragment F{i} on {kind.name} {{ {body} }}")
    if draw(st.booleans()):
        parts.append(f"... on GameEvent {{ {draw(_selection(INTERFACE, 0))} }}")
    root = 'gameEvents(gameId: "g1")'
    return f"subscription {{ {root} {{ {' '.join(parts)} }} }} {' '.join(fragments)}"


@settings(max_examples=examples(300))
@given(text=_typed_document(), index=st.integers(0, len(REAL_EVENTS) - 1))
def test_a_typed_selection_frames_what_the_executor_frames(text: str, index: int) -> None:
    if validate(schema._schema, parse(text)):  # fields that cannot merge: never run
        return
    logged = REAL_EVENTS[index]
    payload = typed(logged, ("game:g1:public", logged.seq))
    expected = _by_executor(text, payload)
    plain = plain_selection(schema._schema, _operation(text), _fragments(text))
    assert plain is not None, text
    framed = plain.frame(payload)
    if expected.errors:  # a value the schema refuses: the plain frame leaves it too
        assert framed is None, expected.errors
        return
    assert framed is not None, text
    assert orjson.dumps(framed.data) == orjson.dumps(expected.data)


def test_the_sample_has_every_kind_of_event() -> None:
    assert {type(e.event).__name__ for e in REAL_EVENTS} == {k.name for k in KINDS}
