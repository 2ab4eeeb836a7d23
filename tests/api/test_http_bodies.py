"""A POST body the view cannot serve as one operation: HTTP 400 with coded
JSON, nothing logged as an error (issue #14, item 6; docs/clients.md "Errors").
tests/e2e/test_http_refusals.py checks every refusal through a real server."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.api.conftest import Client
from tests.api.http_view import view_of

BODIES: dict[str, bytes] = {
    "string": b'"{ __typename }"',
    "number": b"1",
    "null": b"null",
    "true": b"true",
    "batch (not supported)": b'[{"query": "{ __typename }"}]',
    "empty batch": b"[]",
    "bad JSON": b'{"query": ',
    "empty": b"",
    "nested too deep": b"[" * 5000,
    "query not a string": b'{"query": 1}',
    "variables not an object": b'{"query": "{ __typename }", "variables": [1]}',
    "variables a string": b'{"query": "{ __typename }", "variables": "{}"}',
    "operationName not a string": b'{"query": "{ __typename }", "operationName": 1}',
    "extensions not an object": b'{"query": "{ __typename }", "extensions": 1}',
}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
async def test_a_body_that_is_not_one_operation_is_400_coded(
    client: Client, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    caplog.set_level(logging.INFO)
    transport = httpx.ASGITransport(app=view_of(client.h))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        r = await http.post("/graphql", content=body, headers={"content-type": "application/json"})
        ok = await http.post("/graphql", json={"query": "{ __typename }"})
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == "application/json"
    (error,) = r.json()["errors"]
    assert error["extensions"] == {"code": "BAD_INPUT"} and error["message"], error
    assert ok.json() == {"data": {"__typename": "Query"}}  # the next request is served
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], caplog.text
