"""graphql-core's schema behind a Strawberry schema.

Strawberry (0.341) keeps it under its private ``_schema`` and names no public
accessor; the server reads it here only: the limits (cost, validation),
introspection's execution off the loop (docs/decisions/0054, whose
differential test and benchmark cover this path) and the SDL export. A
rename in Strawberry breaks this one line, and tests/api/test_schema_file.py
and tests/api/test_introspection_cache.py with it."""

from __future__ import annotations

from graphql import GraphQLSchema
from strawberry import Schema


def core_schema(schema: Schema) -> GraphQLSchema:
    """The graphql-core schema Strawberry executes against."""
    return schema._schema
