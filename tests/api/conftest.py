"""Schema-level test client: ``schema.execute`` / ``schema.subscribe`` with a
real context over use cases wired to in-memory fakes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.requests import Request
from starlette.websockets import WebSocket

from api.graphql.context import Context
from api.graphql.schema import GameSchema, build_schema
from infra.settings import Settings
from tests.fakes import Harness, harness


def _request(token: str | None) -> Request:
    headers = [] if token is None else [(b"authorization", f"Bearer {token}".encode())]
    return Request({"type": "http", "method": "POST", "path": "/graphql", "headers": headers})


_SPARE: list[GameSchema] = []
"""Schemas of finished tests, lent again: building one costs more than
most tests (its validation results are kept too)."""
_LENT: list[GameSchema] = []


def _lent_schema() -> GameSchema:
    """A schema no other client of this test has, with no frame kept: its
    frames are keyed by game id and seq, and the fakes' ids repeat from one
    harness to the next, so two clients (two tests, two worlds) never share
    a cached frame. Tests select every field of everything
    (tests/api/support.py), over the production cost limit: their schema
    allows it (the limit has tests of its own, tests/api/test_query_limits.py)."""
    schema = _SPARE.pop() if _SPARE else build_schema(max_cost=10**6)
    schema.frames.clear()
    _LENT.append(schema)
    return schema


@pytest.fixture(autouse=True)
def _schemas_returned() -> Iterator[None]:
    """Every schema lent during a test is spare once it ends."""
    yield
    _SPARE.extend(_LENT)
    _LENT.clear()


@dataclass
class Client:
    """Runs operations as one caller (``token`` None: anonymous), on a schema
    no other client of the test shares (:func:`_lent_schema`)."""

    h: Harness
    schema: GameSchema = field(default_factory=_lent_schema)

    def context(
        self,
        token: str | None = None,
        *,
        raw_authorization: str | None = None,
        websocket: bool = False,
    ) -> Context:
        if websocket:
            ws = WebSocket(
                {"type": "websocket", "path": "/graphql", "headers": []},
                receive=_never,
                send=_never,
            )
            params = {} if token is None else {"authorization": f"Bearer {token}"}
            return Context(self.h.deps, Settings(), ws, None, connection_params=params)
        request = _request(token)
        if raw_authorization is not None:
            request = Request(
                {
                    "type": "http",
                    "method": "POST",
                    "path": "/graphql",
                    "headers": [(b"authorization", raw_authorization.encode())],
                }
            )
        return Context(self.h.deps, Settings(), request, None)

    async def run(self, query: str, token: str | None = None, **variables: Any) -> dict[str, Any]:
        """Execute; fail the test on GraphQL errors; return ``data``."""
        result = await self.schema.execute(
            query, variable_values=variables, context_value=self.context(token)
        )
        assert result.errors is None, result.errors
        assert result.data is not None
        return result.data

    async def errors(
        self,
        query: str,
        token: str | None = None,
        *,
        raw_authorization: str | None = None,
        **variables: Any,
    ) -> list[Any]:
        """Execute expecting GraphQL errors; return them (formatted)."""
        ctx = self.context(token, raw_authorization=raw_authorization)
        result = await self.schema.execute(query, variable_values=variables, context_value=ctx)
        assert result.errors, result.data
        return [e.formatted for e in result.errors]

    async def subscribe(
        self, query: str, token: str | None = None, **variables: Any
    ) -> AsyncGenerator[Any, None]:
        gen = await self.schema.subscribe(
            query, variable_values=variables, context_value=self.context(token, websocket=True)
        )
        assert not hasattr(gen, "errors") or gen.errors is None, gen
        return gen

    async def new_player(self, name: str = "ann") -> tuple[str, str]:
        data = await self.run(
            "mutation($n: String!) { createPlayer(name: $n) { ... on NewPlayer { token "
            "player { id } } } }",
            n=name,
        )
        return data["createPlayer"]["token"], data["createPlayer"]["player"]["id"]


async def _never(*_: Any) -> Any:
    raise AssertionError("no socket I/O in schema-level tests")


@pytest.fixture
def client() -> Client:
    return Client(harness())
