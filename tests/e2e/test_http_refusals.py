"""Every refusal of the HTTP transport, through a real server: a JSON body
``{"errors": [{"message", "extensions": {"code"}}]}`` with an HTTP status
that says why, never ``text/plain``, never ``INTERNAL``, nothing logged as an
error (docs/clients.md "Errors")."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.http_streams import MULTIPART_ACCEPT

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

JSON = {"content-type": "application/json"}
SUBSCRIPTION = 'subscription { gameEvents(gameId: "g") { seq } }'
SHA = "0" * 64


def pq(version: object = 1, sha: object = SHA) -> dict[str, Any]:
    return {"persistedQuery": {"version": version, "sha256Hash": sha}}


# (name, method, headers, body or query parameters, status); every code is BAD_INPUT
MUTATION = 'mutation { createPlayer(name: "x") { __typename } }'
CASES: list[tuple[str, str, dict[str, str], Any, int]] = [
    (
        "text/plain body",
        "POST",
        {"content-type": "text/plain"},
        '{"query": "{ me { player { id } } }"}',
        415,
    ),
    (
        "form body",
        "POST",
        {"content-type": "application/x-www-form-urlencoded"},
        "query=%7B__typename%7D",
        415,
    ),
    ("no content type", "POST", {}, b'{"query": "{ __typename }"}', 415),
    ("multipart upload", "POST", {"content-type": "multipart/form-data; boundary=x"}, "--x--", 415),
    ("batch", "POST", JSON, [{"query": "{ __typename }"}, {"query": "{ __typename }"}], 400),
    ("empty batch", "POST", JSON, [], 400),
    ("string body", "POST", JSON, "{ __typename }", 400),
    ("number body", "POST", JSON, 42, 400),
    ("null body", "POST", JSON, None, 400),
    ("true body", "POST", JSON, True, 400),
    ("bad JSON", "POST", JSON, b'{"query": ', 400),
    ("empty body", "POST", JSON, b"", 400),
    ("not UTF-8", "POST", JSON, b'{"query": "\xff"}', 400),
    ("missing query", "POST", JSON, {"variables": {}}, 400),
    ("null query", "POST", JSON, {"query": None}, 400),
    ("query not a string", "POST", JSON, {"query": ["{ __typename }"]}, 400),
    ("variables not an object", "POST", JSON, {"query": "{ __typename }", "variables": "[]"}, 400),
    (
        "operationName not a string",
        "POST",
        JSON,
        {"query": "{ __typename }", "operationName": 3},
        400,
    ),
    ("extensions not an object", "POST", JSON, {"query": "{ __typename }", "extensions": []}, 400),
    (
        "unknown operationName",
        "POST",
        JSON,
        {"query": "query A { __typename }", "operationName": "B"},
        400,
    ),
    (
        "subscription, JSON accept",
        "POST",
        {**JSON, "accept": "application/json"},
        {"query": SUBSCRIPTION},
        406,
    ),
    ("subscription, any accept", "POST", {**JSON, "accept": "*/*"}, {"query": SUBSCRIPTION}, 406),
    ("subscription, GET", "GET", {"accept": "application/json"}, {"query": SUBSCRIPTION}, 406),
    ("GET mutation", "GET", {"accept": "application/json"}, {"query": MUTATION}, 405),
    ("GET mutation over SSE", "GET", {"accept": "text/event-stream"}, {"query": MUTATION}, 405),
    ("GET without query", "GET", {"accept": "application/json"}, {}, 400),
    (
        "GET bad variables",
        "GET",
        {"accept": "application/json"},
        {"query": "{ __typename }", "variables": "{x"},
        400,
    ),
    (
        "GET bad extensions",
        "GET",
        {"accept": "application/json"},
        {"query": "{ __typename }", "extensions": "[1"},
        400,
    ),
    ("PUT", "PUT", JSON, {"query": "{ __typename }"}, 405),
    ("DELETE", "DELETE", {}, None, 405),
    ("APQ version 2", "POST", JSON, {"extensions": pq(version=2)}, 400),
    ("APQ bad hash", "POST", JSON, {"extensions": pq(sha="xyz")}, 400),
    ("APQ not an object", "POST", JSON, {"extensions": {"persistedQuery": "abc"}}, 400),
    ("APQ hash mismatch", "POST", JSON, {"query": "{ __typename }", "extensions": pq()}, 400),
    (
        "multipart batch",
        "POST",
        {**JSON, "accept": MULTIPART_ACCEPT},
        [{"query": SUBSCRIPTION}],
        400,
    ),
    ("SSE without query", "POST", {**JSON, "accept": "text/event-stream"}, {}, 400),
]


async def send(
    http: httpx.AsyncClient, method: str, headers: dict[str, str], body: Any
) -> httpx.Response:
    if method == "GET":
        return await http.get("/graphql", params=body, headers=headers)
    if isinstance(body, bytes | str):
        content = body.encode() if isinstance(body, str) else body
        return await http.request(method, "/graphql", content=content, headers=headers)
    if body is None and method != "POST":
        return await http.request(method, "/graphql", headers=headers)
    return await http.request(method, "/graphql", content=json.dumps(body), headers=headers)


@pytest.mark.parametrize(
    ("method", "headers", "body", "status"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
async def test_a_transport_refusal_is_coded_json(
    server: Server,
    http: httpx.AsyncClient,
    method: str,
    headers: dict[str, str],
    body: Any,
    status: int,
) -> None:
    r = await send(http, method, headers, body)
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json", r.headers
    payload = r.json()
    assert set(payload) == {"errors"}, payload
    (error,) = payload["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT", error
    assert error["message"] and "Traceback" not in error["message"]
    if status == 405:
        assert r.headers["allow"] in ("POST", "GET, POST"), r.headers


async def test_refusals_log_no_error(server: Server, http: httpx.AsyncClient) -> None:
    for _name, method, headers, body, _status in CASES:
        await send(http, method, headers, body)
    text = server.log.read_text(errors="replace")
    assert "Traceback" not in text
    assert not [
        line for line in text.splitlines() if '"level": "ERROR"' in line and "mmk.api" in line
    ]


async def test_graphiql_still_answers_a_browser(server: Server, http: httpx.AsyncClient) -> None:
    r = await http.get("/graphql", headers={"accept": "text/html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    # ...but never a GET that carries an APQ hash, whatever its Accept.
    r = await http.get(
        "/graphql", params={"extensions": json.dumps(pq())}, headers={"accept": "*/*"}
    )
    assert r.headers["content-type"] == "application/json"
    assert r.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


# ------------------------------------------- refusals before /graphql's view

PREFLIGHT = {
    "origin": "https://elsewhere.example.net",  # the session server allows no other origin
    "access-control-request-method": "POST",
}
OUTSIDE: list[tuple[str, str, str, dict[str, str], bytes | None, int, str]] = [
    ("unknown path", "GET", "/nope", {}, None, 404, "NOT_FOUND"),
    ("unknown path, POST", "POST", "/graphql/x", JSON, b"{}", 404, "NOT_FOUND"),
    ("method of a probe", "POST", "/healthz", {}, b"", 405, "BAD_INPUT"),
    ("refused preflight", "OPTIONS", "/graphql", PREFLIGHT, None, 400, "FORBIDDEN"),
    ("body too large", "POST", "/graphql", JSON, b"{" + b" " * (1 << 17) + b"}", 413, "BAD_INPUT"),
]


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status", "code"),
    [case[1:] for case in OUTSIDE],
    ids=[case[0] for case in OUTSIDE],
)
async def test_a_refusal_outside_the_view_is_coded_json(
    http: httpx.AsyncClient,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None,
    status: int,
    code: str,
) -> None:
    """Starlette's 404 and 405 and its CORS middleware's refused preflight
    were plain text (docs/decisions/0052)."""
    r = await http.request(method, path, content=body, headers=headers)
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json", r.headers
    (error,) = r.json()["errors"]
    assert error["extensions"]["code"] == code and error["message"], error
    if status == 405:
        assert {m.strip() for m in r.headers["allow"].split(",")} == {"GET", "HEAD"}


def raw_exchange(server: Server, request: bytes) -> bytes:
    """``request`` on a connection of its own; all the server sent until it closed."""
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.settimeout(5)
        sock.sendall(request)
        got = b""
        while chunk := sock.recv(4096):
            got += chunk
    return got


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NOT HTTP AT ALL\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n", 431),
    ],
    ids=["not HTTP", "bad header name", "head too large"],
)
def test_a_request_the_server_cannot_read_is_refused_with_coded_json(
    server: Server, request_bytes: bytes, status: int
) -> None:
    """uvicorn's own 400 was plain text ("Invalid HTTP request received.");
    431 is new (MMK_MAX_HEADER_BYTES, 16 KiB by default)."""
    got = raw_exchange(server, request_bytes)
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), got[:300]
    assert b"content-type: application/json" in head.lower()
    (error,) = json.loads(body)["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT" and error["message"], error
