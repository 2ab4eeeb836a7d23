"""A walk over the schema's types (R11): nothing reachable from the public
types, without going through ``Game.viewer``, can carry a hand, a face-down
card, a peek or a message text. The walk runs on the running schema and on
the exported ``schema.graphql``."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import (
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    build_schema,
    get_named_type,
)

from api.graphql.schema import schema as running

SDL = Path(__file__).resolve().parents[2] / "schema.graphql"

PUBLIC_ROOTS = [
    "Game",
    "Table",
    "TableSeat",
    "FaceDownPlay",
    "MessageRoute",
    "LobbyUpdate",
    "GameSummary",
]
PRIVATE_DOOR = ("Game", "viewer")
HIDDEN_FIELDS = {
    "hand",
    "text",
    "decisionCards",
    "faceDownPlays",
    "legalActions",
    "messageTargets",
    "seed",
    "salt",
    "ratDeck",
    "prizePool",
    "token",
}

SCHEMAS = {"running": running._schema, "schema.graphql": build_schema(SDL.read_text())}


def walk(
    schema: GraphQLSchema, roots: list[str], closed: frozenset[tuple[str, str]]
) -> set[tuple[str, str]]:
    """Every (type, field) reachable from ``roots`` without using the
    ``closed`` fields; union members and interface fields included."""
    fields: set[tuple[str, str]] = set()
    seen: set[str] = set()
    stack: list[GraphQLNamedType] = [schema.get_type(r) for r in roots]  # type: ignore[misc]
    while stack:
        t = stack.pop()
        assert t is not None
        if t.name in seen:
            continue
        seen.add(t.name)
        if isinstance(t, GraphQLObjectType | GraphQLInterfaceType):
            for name, field in t.fields.items():
                if (t.name, name) in closed:
                    continue
                fields.add((t.name, name))
                stack.append(get_named_type(field.type))
        elif isinstance(t, GraphQLUnionType):
            stack.extend(t.types)
    return fields


@pytest.mark.parametrize("source", SCHEMAS)
def test_no_public_type_reaches_hidden_information(source: str) -> None:
    schema = SCHEMAS[source]
    public = walk(schema, PUBLIC_ROOTS, frozenset({PRIVATE_DOOR}))
    leaks = sorted((t, f) for t, f in public if f in HIDDEN_FIELDS)
    assert leaks == [], f"hidden data reachable from a public type: {leaks}"
    assert not any(t in {"Viewer", "Message", "OwnFaceDownPlay", "LegalAction"} for t, _ in public)


@pytest.mark.parametrize("source", SCHEMAS)
def test_a_face_down_play_shows_no_card(source: str) -> None:
    face_down = SCHEMAS[source].get_type("FaceDownPlay")
    assert isinstance(face_down, GraphQLObjectType)
    assert set(face_down.fields) == {"seat", "hasSecondCard"}
    assert "card" not in face_down.fields and "secondCard" not in face_down.fields


@pytest.mark.parametrize("source", SCHEMAS)
def test_the_walk_finds_private_fields_through_the_viewer(source: str) -> None:
    """The walk can fail: through ``Game.viewer`` it does reach the hand."""
    schema = SCHEMAS[source]
    everything = walk(schema, ["Game"], frozenset())
    found = {(t, f) for t, f in everything if f in HIDDEN_FIELDS}
    assert {
        ("Viewer", "hand"),
        ("Viewer", "decisionCards"),
        ("Viewer", "faceDownPlays"),
        ("Message", "text"),
        ("Viewer", "legalActions"),
    } <= found
    assert ("FaceUpPlay", "card") in everything, "face-up plays do show their card"


@pytest.mark.parametrize("source", SCHEMAS)
def test_the_public_walk_covers_the_table(source: str) -> None:
    public = walk(SCHEMAS[source], PUBLIC_ROOTS, frozenset({PRIVATE_DOOR}))
    types = {t for t, _ in public}
    assert {
        "Game",
        "Table",
        "TableSeat",
        "Trick",
        "FaceUpPlay",
        "FaceDownPlay",
        "MessageRoute",
        "PendingDecision",
        "Outcome",
        "Card",
        "SeatSlot",
        "GameOptions",
        "LobbyUpdate",
        "GameSummary",
    } <= types
    assert ("TableSeat", "handSize") in public
