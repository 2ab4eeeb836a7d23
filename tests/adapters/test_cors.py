"""Browsers on other origins (MMK_CORS_ORIGINS, docs/decisions/0033): the
setting, CORS on /graphql and the WebSocket Origin check, on the app in
process. tests/browser does the same from a real Chromium."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.types import Message

from infra.settings import Settings, SettingsError
from tests.adapters.test_access_switches import app_with

ALLOWED = "https://play.example.com"
OTHER = "https://evil.example.net"
QUERY = {"query": "{ cardCatalog { id } }"}


# ---------------------------------------------------------------- the setting
@pytest.mark.parametrize(
    ("raw", "origins"),
    [
        (None, ()),
        ("", ()),
        (" , ", ()),
        ("https://play.example.com", ("https://play.example.com",)),
        # As browsers send Origin: lowercase, no default port, no slash.
        ("HTTPS://Play.Example.com:443/", ("https://play.example.com",)),
        (
            "http://127.0.0.1:8000, http://localhost:8000",
            ("http://127.0.0.1:8000", "http://localhost:8000"),
        ),
        ("http://[::1]:8080,http://[::1]:8080", ("http://[::1]:8080",)),
        ("*", ("*",)),
    ],
)
def test_the_setting_is_a_list_of_origins(raw: str | None, origins: tuple[str, ...]) -> None:
    env = {} if raw is None else {"MMK_CORS_ORIGINS": raw}
    assert Settings.from_env(env).cors_origins == origins


@pytest.mark.parametrize(
    "raw",
    [
        "play.example.com",  # no scheme
        "ftp://play.example.com",
        "https://play.example.com/graphql",  # a path
        "https://play.example.com?x=1",
        "https://user@play.example.com",
        "https://play.example.com:99999",
        "https://",
        "null",
    ],
)
def test_a_bad_origin_stops_the_server(raw: str) -> None:
    with pytest.raises(SettingsError, match="MMK_CORS_ORIGINS"):
        Settings.from_env({"MMK_CORS_ORIGINS": f"https://ok.example.com,{raw}"})


# ---------------------------------------------------------------- CORS
def preflight(origin: str, headers: str = "authorization, content-type") -> dict[str, str]:
    return {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": headers,
    }


async def test_a_preflight_from_an_allowed_origin_is_answered(tmp_path: Path) -> None:
    async with app_with(tmp_path, cors_origins=(ALLOWED,)) as (_, client):
        r = await client.options("/graphql", headers=preflight(ALLOWED, "authorization, x-y"))
        assert r.status_code == 200, r.text
        assert r.headers["access-control-allow-origin"] == ALLOWED
        assert set(r.headers["access-control-allow-methods"].split(", ")) == {"GET", "POST"}
        # No credentials: any header a client library adds may come (mirrored).
        assert r.headers["access-control-allow-headers"] == "authorization, x-y"
        assert "access-control-allow-credentials" not in r.headers
        assert int(r.headers["access-control-max-age"]) > 0


@pytest.mark.parametrize("configured", [(), (ALLOWED,)])
async def test_a_preflight_from_another_origin_is_refused(
    tmp_path: Path, configured: tuple[str, ...]
) -> None:
    async with app_with(tmp_path, cors_origins=configured) as (_, client):
        r = await client.options("/graphql", headers=preflight(OTHER))
        assert r.status_code == 400
        assert "access-control-allow-origin" not in r.headers


async def test_responses_to_an_allowed_origin_say_so(tmp_path: Path) -> None:
    async with app_with(tmp_path, cors_origins=(ALLOWED,)) as (_, client):
        r = await client.post("/graphql", json=QUERY, headers={"origin": ALLOWED})
        assert r.status_code == 200 and r.json()["data"]["cardCatalog"]
        assert r.headers["access-control-allow-origin"] == ALLOWED
        exposed = {h.strip().lower() for h in r.headers["access-control-expose-headers"].split(",")}
        assert exposed == {"x-request-id", "retry-after"}
        assert "origin" in r.headers["vary"].lower()
        big = b'{"query": "' + b" " * (70 * 1024) + b'{ __typename }"}'
        r = await client.post("/graphql", content=big, headers={"origin": ALLOWED})
        assert r.status_code == 413  # refused before the view: still readable by the page
        assert r.headers["access-control-allow-origin"] == ALLOWED


async def test_other_origins_and_other_paths_get_no_cors_headers(tmp_path: Path) -> None:
    async with app_with(tmp_path, cors_origins=(ALLOWED,)) as (_, client):
        # Not refused (a browser enforces CORS, not the server), just not allowed.
        r = await client.post("/graphql", json=QUERY, headers={"origin": OTHER})
        assert r.status_code == 200
        assert "access-control-allow-origin" not in r.headers
        for path in ("/healthz", "/metrics"):
            r = await client.get(path, headers={"origin": ALLOWED})
            assert "access-control-allow-origin" not in r.headers, path


async def test_any_origin_with_a_star(tmp_path: Path) -> None:
    async with app_with(tmp_path, cors_origins=("*",)) as (_, client):
        r = await client.options("/graphql", headers=preflight(OTHER))
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"


# ---------------------------------------------------------------- WebSocket Origin
async def handshake(app: Starlette, headers: dict[str, str]) -> Message:
    """The app's answer to a WebSocket handshake: accept, or close (HTTP 403)."""
    to_app: asyncio.Queue[Message] = asyncio.Queue()
    from_app: asyncio.Queue[Message] = asyncio.Queue()
    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "scheme": "ws",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"sec-websocket-protocol", b"graphql-transport-ws"),
            *((k.encode(), v.encode()) for k, v in headers.items()),
        ],
        "subprotocols": ["graphql-transport-ws"],
        "client": ("127.0.0.1", 1),
        "server": ("mmk.example.org", 443),
    }
    task = asyncio.create_task(app(scope, to_app.get, from_app.put))
    await to_app.put({"type": "websocket.connect"})
    answer = await asyncio.wait_for(from_app.get(), 5)
    await to_app.put({"type": "websocket.disconnect", "code": 1000})
    await asyncio.wait_for(task, 5)
    return answer


@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        (None, True),  # not a browser
        ("https://mmk.example.org", True),  # the server's own origin (its Host)
        (ALLOWED, True),
        ("HTTPS://PLAY.example.com:443", True),  # the same origin, written otherwise
        (OTHER, False),
        ("https://play.example.com.evil.example.net", False),
        ("http://play.example.com", False),  # another scheme is another origin
        ("null", False),
    ],
)
async def test_websocket_origins(tmp_path: Path, origin: str | None, accepted: bool) -> None:
    headers = {"host": "mmk.example.org"} | ({} if origin is None else {"origin": origin})
    async with app_with(tmp_path, cors_origins=(ALLOWED,)) as (app, _):
        answer = await handshake(app, headers)
    assert answer["type"] == ("websocket.accept" if accepted else "websocket.close"), answer


async def test_no_other_origin_by_default(tmp_path: Path) -> None:
    async with app_with(tmp_path) as (app, client):
        r = await client.post("/graphql", json=QUERY, headers={"origin": ALLOWED})
        assert r.status_code == 200 and r.json()["data"]["cardCatalog"]
        assert not [h for h in r.headers if h.startswith("access-control-")]
        refused = await client.options("/graphql", headers=preflight(ALLOWED))
        assert refused.status_code == 400
        answer = await handshake(app, {"host": "mmk.example.org", "origin": ALLOWED})
        assert answer["type"] == "websocket.close"
        same = await handshake(
            app, {"host": "mmk.example.org", "origin": "https://mmk.example.org"}
        )
        assert same["type"] == "websocket.accept"


async def test_http_and_websocket_share_the_list(tmp_path: Path) -> None:
    """One setting, two checks: what CORS allows, the WebSocket does too."""
    for origins in [(), (ALLOWED,), (ALLOWED, OTHER), ("*",)]:
        async with app_with(tmp_path, cors_origins=origins) as (app, client):
            for origin in (ALLOWED, OTHER):
                r = await client.options("/graphql", headers=preflight(origin))
                ws = await handshake(app, {"host": "mmk.example.org", "origin": origin})
                assert (r.status_code == 200) == (ws["type"] == "websocket.accept"), (
                    origins,
                    origin,
                )
