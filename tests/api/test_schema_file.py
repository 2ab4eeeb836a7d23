"""schema.graphql is the running schema's SDL (API.md); run `make schema`."""

from __future__ import annotations

from pathlib import Path

from api.graphql.export import sdl

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_graphql_matches_the_running_schema() -> None:
    assert SCHEMA_FILE.read_text() == sdl(), "schema.graphql drifted: run `make schema`"
