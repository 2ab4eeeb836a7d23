"""schema.graphql is the running schema's SDL (docs/clients.md), and
possibleTypes.json its unions and interfaces for Apollo Client; run
`make schema`."""

from __future__ import annotations

import json
from pathlib import Path

from graphql import GraphQLInterfaceType, GraphQLUnionType, build_schema

from api.graphql.export import POSSIBLE_TYPES, possible_types, possible_types_json, sdl

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schema.graphql"
POSSIBLE_TYPES_FILE = ROOT / POSSIBLE_TYPES


def test_schema_graphql_matches_the_running_schema() -> None:
    assert SCHEMA_FILE.read_text() == sdl(), "schema.graphql drifted: run `make schema`"


def test_possible_types_json_matches_the_running_schema() -> None:
    assert POSSIBLE_TYPES_FILE.read_text() == possible_types_json(), (
        "possibleTypes.json drifted: run `make schema`"
    )


def test_possible_types_are_those_of_the_sdl() -> None:
    """Built again from schema.graphql alone, as a client's codegen would:
    every union and interface, with exactly its object types."""
    built = build_schema(SCHEMA_FILE.read_text())
    expected = {
        name: sorted(t.name for t in built.get_possible_types(abstract))
        for name, abstract in built.type_map.items()
        if isinstance(abstract, GraphQLUnionType | GraphQLInterfaceType)
    }
    assert json.loads(POSSIBLE_TYPES_FILE.read_text()) == expected
    assert possible_types()["GameResult"] == ["Game", "Refusal"]
    assert possible_types()["PlayEntry"] == ["FaceDownPlay", "FaceUpPlay"]
