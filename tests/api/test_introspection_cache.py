"""Introspection served from a cache (api/graphql/introspection.py, issue #22
item 2): the kept result is the one Strawberry's executor makes (checked
against a schema without the cache), it is handed out again without
executing, and only introspection-only operations are kept."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from graphql import get_introspection_query

from api.graphql import introspection
from api.graphql.introspection import executed, introspective
from api.graphql.limits import parse_document
from api.graphql.schema import build_schema

DOCUMENTS = [
    get_introspection_query(descriptions=True),
    get_introspection_query(
        descriptions=False, specified_by_url=True, directive_is_repeatable=True
    ),
    "query T($n: String!) { __type(name: $n) { name kind fields { name } } }",
    "{ a: __schema { queryType { name } } ...F } fragment F on Query { __typename }",
]


def cached_schema() -> Any:
    return build_schema(max_cost=1_000_000)


def uncached_schema() -> Any:
    schema = build_schema(max_cost=1_000_000)
    schema.extensions = tuple(e for e in schema.extensions if "IntrospectionCache" not in repr(e))
    return schema


@pytest.mark.parametrize("document", DOCUMENTS)
async def test_a_kept_result_is_what_strawberry_executes(document: str) -> None:
    variables = {"n": "GameEvent"}
    fresh = await uncached_schema().execute(document, variable_values=variables)
    schema = cached_schema()
    first = await schema.execute(document, variable_values=variables)
    again = await schema.execute(document, variable_values=variables)
    assert fresh.errors is None and first.errors is None and again.errors is None
    assert first.data == fresh.data and again.data == fresh.data


async def test_a_kept_result_is_handed_out_without_executing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs: list[str | None] = []

    def counted(*args: Any) -> Any:
        runs.append(args[2])
        return executed(*args)

    monkeypatch.setattr(introspection, "executed", counted)
    schema = cached_schema()
    document = get_introspection_query(descriptions=True)
    first = await schema.execute(document, operation_name="IntrospectionQuery")
    again = await schema.execute(document, operation_name="IntrospectionQuery")
    assert first.errors is None and again.data == first.data
    assert runs == ["IntrospectionQuery"]  # once, then kept
    other = await schema.execute('{ __type(name: "Query") { name } }')
    assert other.data == {"__type": {"name": "Query"}} and runs == ["IntrospectionQuery", None]


async def test_an_uncached_introspection_runs_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/decisions/0054: the first execution is a worker thread's."""
    threads: list[int] = []

    def where(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return executed(*args)

    monkeypatch.setattr(introspection, "executed", where)
    result = await cached_schema().execute("{ __schema { queryType { name } } }")
    assert result.data == {"__schema": {"queryType": {"name": "Query"}}}
    assert threads and threads[0] != threading.get_ident()


async def test_variables_are_part_of_the_key() -> None:
    schema = cached_schema()
    query = "query T($n: String!) { __type(name: $n) { name } }"
    a = await schema.execute(query, variable_values={"n": "Query"})
    b = await schema.execute(query, variable_values={"n": "Mutation"})
    assert a.data == {"__type": {"name": "Query"}}
    assert b.data == {"__type": {"name": "Mutation"}}


@pytest.mark.parametrize(
    ("document", "only"),
    [
        ("{ __schema { queryType { name } } }", True),
        ('{ __typename ... on Query { __type(name: "Query") { name } } }', True),
        ("{ __schema { queryType { name } } cardCatalog { id } }", False),
        ("{ ...F } fragment F on Query { serverTime }", False),
        ("query A { __typename } query B { serverTime }", False),  # no operation named
    ],
)
def test_only_operations_of_introspection_alone_are_kept(document: str, only: bool) -> None:
    assert introspective(parse_document(document), None) is only
