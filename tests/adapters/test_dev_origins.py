"""Development mode (``MMK_DEV``, set by ``make run``): a page served from
this machine (a Vite dev server on http://localhost:5173) may call /graphql
and open its WebSocket without being listed in MMK_CORS_ORIGINS; a name that
merely starts like a local one never passes, and without dev mode nothing
changes. The rule is api/cors.py's ``is_local_origin``; CORS and the
WebSocket Origin check share it. tests/e2e/test_dev_mode.py does the same
through a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.cors import is_local_origin
from infra.settings import Settings, SettingsError
from tests.adapters.test_access_switches import app_with
from tests.adapters.test_cors import ALLOWED, handshake, preflight

VITE = "http://localhost:5173"
LOCAL = [
    VITE,
    "http://127.0.0.1:5173",
    "http://[::1]:5173",
    "http://localhost",  # port 80: browsers leave the default port out
    "http://localhost:3000",
    "http://127.0.0.1:65535",
    # [decision] https too: a dev server with a local certificate (Vite's
    # basicSsl, mkcert) is as much this machine's as one over http.
    "https://localhost:5173",
    "https://[::1]",
]
NOT_LOCAL = [
    "http://localhost.evil.com",
    "http://localhost.evil.com:5173",
    "http://127.0.0.1.nip.io",
    "http://127.0.0.1.nip.io:5173",
    "http://evil-localhost:5173",
    "http://app.localhost:5173",  # *.localhost: not a dev server's default
    "http://127.0.0.2:5173",  # another loopback address
    "http://[::ffff:127.0.0.1]:5173",
    "http://0.0.0.0:5173",
    "http://localhost:5173.evil.com",
    "http://localhost:5173@evil.com",
    "http://evil.com#@localhost:5173",
    "http://localhost:5173/",  # not an Origin header (a path)
    "http://localhost:0",
    "http://localhost:99999",
    "http://localhost:",
    "HTTP://LOCALHOST:5173",  # browsers send lowercase; so does the rule
    "ws://localhost:5173",
    "file://localhost",
    "null",  # file:// pages, sandboxed frames
    "",
]


@pytest.mark.parametrize("origin", LOCAL)
def test_local_origins(origin: str) -> None:
    assert is_local_origin(origin)


@pytest.mark.parametrize("origin", NOT_LOCAL)
def test_other_origins_are_not_local(origin: str) -> None:
    assert not is_local_origin(origin)


# ---------------------------------------------------------------- the setting
@pytest.mark.parametrize(
    ("raw", "dev"),
    [
        (None, False),
        ("", False),
        ("1", True),
        ("true", True),
        ("ON", True),
        ("0", False),
        ("false", False),
        ("no", False),
    ],
)
def test_the_setting(raw: str | None, dev: bool) -> None:
    env = {} if raw is None else {"MMK_DEV": raw}
    assert Settings.from_env(env).dev is dev
    assert Settings().dev is False  # never on by default


@pytest.mark.parametrize("raw", ["2", "dev", "maybe", "tru"])
def test_a_bad_value_stops_the_server(raw: str) -> None:
    with pytest.raises(SettingsError, match=f"MMK_DEV must be true or false, not '{raw}'"):
        Settings.from_env({"MMK_DEV": raw})


# ---------------------------------------------------------------- the app
@pytest.mark.parametrize("dev", [True, False])
async def test_a_local_page_in_dev_mode_only(tmp_path: Path, dev: bool) -> None:
    async with app_with(tmp_path, dev=dev) as (app, client):
        r = await client.options("/graphql", headers=preflight(VITE))
        ws = await handshake(app, {"host": "127.0.0.1:8000", "origin": VITE})
        if dev:
            assert r.status_code == 200, r.text
            assert r.headers["access-control-allow-origin"] == VITE
            assert ws["type"] == "websocket.accept", ws
            posted = await client.post(
                "/graphql", json={"query": "{ __typename }"}, headers={"origin": VITE}
            )
            assert posted.headers["access-control-allow-origin"] == VITE
        else:
            assert r.status_code == 400
            assert r.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
            assert "access-control-allow-origin" not in r.headers
            assert ws["type"] == "websocket.close", ws


async def test_dev_mode_adds_to_the_list(tmp_path: Path) -> None:
    """The listed origins stay allowed; other remote origins stay refused."""
    async with app_with(tmp_path, dev=True, cors_origins=(ALLOWED,)) as (_, client):
        for origin, allowed in [(ALLOWED, True), (VITE, True), ("https://evil.example.net", False)]:
            r = await client.options("/graphql", headers=preflight(origin))
            assert (r.status_code == 200) is allowed, origin


@pytest.mark.parametrize("origin", [*LOCAL[:3], *NOT_LOCAL[:4], "https://localhost:5173"])
async def test_http_and_websocket_agree_in_dev_mode(tmp_path: Path, origin: str) -> None:
    async with app_with(tmp_path, dev=True) as (app, client):
        r = await client.options("/graphql", headers=preflight(origin))
        ws = await handshake(app, {"host": "mmk.example.org", "origin": origin})
        assert (
            (r.status_code == 200)
            is (ws["type"] == "websocket.accept")
            is (is_local_origin(origin))
        ), origin
