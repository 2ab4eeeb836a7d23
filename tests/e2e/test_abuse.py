"""Costly documents against a real ``mmk serve`` (issue #14): each attack the
probe found, and the generated worst cases, is refused with ``BAD_INPUT``
before it is validated or run, and the server goes on answering. Query
budgets refuse with ``RATE_LIMITED``, ``retryAfter`` and ``Retry-After``.
(How long each refusal takes, and a well-behaved client's p99 while four
abusive clients run, are measured by tests/bench/test_abuse_bench.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, own_server

pytestmark = pytest.mark.timeout(60)

CATALOG = "cardCatalog { id house value rare }"


def attacks() -> dict[str, tuple[str, str]]:
    """Name -> (document, what the refusal says)."""
    spreads = " ".join(
        f"fragment F{i} on Query {{ " + f"...F{i + 1} " * 10 + "}" for i in range(11)
    )
    return {
        "validation, 1,985 fields": (
            "{ " + "__typename " * 1985 + "x7: __typename }",
            "characters",
        ),
        "a 60 KB comment": ("{ __typename } #" + "x" * 60_000, "characters"),
        "over 2,000 tokens": ("{ " + "a: __typename " * 700 + "}", "2000 tokens"),
        "same-name fields": ("{ " + "__typename " * 150 + "}", "pairs of fields"),
        "same-name objects": ("{ " + "cardCatalog { house } " * 70 + "}", "pairs of fields"),
        "16 aliases": (
            "{ " + " ".join(f"a{i}: __typename" for i in range(16)) + " }",
            "16 aliases",
        ),
        "billion laughs": (
            "{ ...F0 } " + spreads + " fragment F11 on Query { __typename }",
            "fragments expanded",
        ),
        "270 operations over one fragment": (
            "fragment F on Query { "
            + " ".join(f"a{i}: __typename" for i in range(15))
            + " } "
            + " ".join(f"query Q{i} {{ ...F }}" for i in range(270)),
            "270 operations in one document",
        ),
        "a chain of 40 spreads": (
            "{ ...F0 } "
            + " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(40))
            + " fragment F40 on Query { __typename }",
            "over 32 deep",
        ),
        "fragment cycle": (
            "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
            "spreads itself",
        ),
        "15 catalogs": (
            "{ " + " ".join(f"a{i}: {CATALOG}" for i in range(15)) + " }",
            "values; the limit is 10,000",
        ),
        "15 event pages of 100": (
            "{ "
            + " ".join(
                f'a{i}: gameEvents(gameId: "g", first: 100) '
                "{ ... on GameEventPage { events { seq at __typename "
                "... on CardPlayed { card { id house value rare kind } seat } "
                "... on TrickWon { plays { card { id } seat } scores } } } }"
                for i in range(15)
            )
            + " }",
            "values; the limit is 10,000",
        ),
    }


async def _post(http: httpx.AsyncClient, query: str) -> tuple[int, dict[str, Any], httpx.Headers]:
    r = await http.post("/graphql", json={"query": query})
    return r.status_code, r.json(), r.headers


@pytest.mark.parametrize("name", list(attacks()))
async def test_each_costly_document_is_refused_and_the_server_goes_on(
    http: httpx.AsyncClient, name: str
) -> None:
    document, said = attacks()[name]
    status, body, _ = await _post(http, document)
    assert status in (200, 400), body
    assert body.get("data") is None, body
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT", error
    assert said in error["message"], error["message"]
    status, body, _ = await _post(http, "{ __typename }")
    assert status == 200 and body == {"data": {"__typename": "Query"}}


async def test_a_document_within_the_limits_is_served(http: httpx.AsyncClient) -> None:
    status, body, _ = await _post(http, "{ " + CATALOG + " }")
    assert status == 200 and "errors" not in body
    assert len(body["data"]["cardCatalog"]) > 100


async def test_queries_over_their_ip_budget_are_rate_limited(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'budget.sqlite3'}"
    with own_server(tmp_path, url, MMK_RATE_QUERY_COST_IP="7200") as (server, _):
        await _over_budget(server)
        assert_no_leak(server)


async def _over_budget(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, trust_env=False, timeout=10) as http:
        for _ in range(4):  # 500 + 1,120 each, and the first's parse: four fit in 7,200
            status, body, _ = await _post(http, "{ " + CATALOG + " }")
            assert status == 200 and "errors" not in body, body
        status, body, headers = await _post(http, "{ " + CATALOG + " }")
        [error] = body["errors"]
        assert error["extensions"]["code"] == "RATE_LIMITED"
        assert error["extensions"]["retryAfter"] > 0
        assert int(headers["retry-after"]) >= 1
        status, body, _ = await _post(http, "{ __typename }")  # 529 in all: it still fits
        assert body == {"data": {"__typename": "Query"}}
