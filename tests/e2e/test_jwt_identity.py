"""Identity from the app's identity provider, end to end (issue #24): a real
``mmk serve`` configured with a JWKS URL served by this test (keys it
generates and rotates), tokens minted by joserfc (PyJWT verifies them in the
server), over HTTP and both WebSocket protocols."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.graphql.revocation import EXPIRED_MESSAGE
from tests.adapters.identity_tokens import AUDIENCE, ISSUER, jwks, mint, new_key, unsigned
from tests.e2e.client import Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.httpsub import HTTP_TRANSPORTS, HttpSubscription, streaming_client
from tests.e2e.own_server import assert_no_leak, own_server
from tests.e2e.wsclient import PROTOCOLS, ws_connection

ME = "{ me { id player { name } } }"


class JwksServer:
    """The provider's JWKS endpoint: a document the test may change, and a
    count of the requests it got."""

    def __init__(self, *keys: Any) -> None:
        self.document = jwks(*keys)
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests += 1
                body = json.dumps(server.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jwks.json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def provider() -> Iterator[tuple[JwksServer, Any]]:
    key = new_key("RS256", "k1")
    server = JwksServer(key)
    try:
        yield server, key
    finally:
        server.close()


def _env(jwks_url: str) -> dict[str, str]:
    return {
        "MMK_JWT_ISSUER": ISSUER,
        "MMK_JWT_AUDIENCE": AUDIENCE,
        "MMK_JWT_JWKS_URL": jwks_url,
        "MMK_JWT_LEEWAY": "0",
        "MMK_JWKS_REFETCH_FLOOR": "2",
    }


async def _refusal(api: Api, token: str) -> str:
    body = await api.raw(ME, token=token)
    assert body["data"] is None or body["data"].get("me") is None, body
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "UNAUTHENTICATED", error
    return str(error["message"])


async def test_a_providers_user_is_one_player_and_bad_tokens_say_why(
    tmp_path: Path, provider: tuple[JwksServer, Any]
) -> None:
    jwks_server, key = provider
    url = f"sqlite:///{tmp_path / 'jwt.sqlite3'}"
    with own_server(tmp_path, url, **_env(jwks_server.url)) as (server, _):
        async with httpx.AsyncClient(base_url=server.base_url, trust_env=False) as http:
            api = Api(http)
            phone = (await api.data(ME, token=mint(key, "RS256", name="Ann")))["me"]
            assert phone["player"]["name"] == "Ann"
            laptop = await api.data(ME, token=mint(key, "RS256", iat=int(time.time()) - 5))
            assert laptop["me"]["id"] == phone["id"]  # another device: the same player
            other = (await api.data(ME, token=mint(key, "RS256", sub="user-2")))["me"]
            assert other["id"] != phone["id"]

            now = int(time.time())
            assert "expired" in await _refusal(api, mint(key, "RS256", exp=now - 5, iat=now - 60))
            assert "audience" in await _refusal(api, mint(key, "RS256", aud="another-app"))
            assert "issuer" in await _refusal(api, mint(key, "RS256", iss="https://evil.test/"))
            assert "not accepted" in await _refusal(api, unsigned())
            forged = mint(new_key("RS256", "k1"), "RS256")  # the provider's kid, another key
            assert "signature" in await _refusal(api, forged)

            fetched = jwks_server.requests
            for n in range(30):  # a flood of made-up kids
                assert "no key" in await _refusal(api, mint(key, "RS256", kid=f"x{n}"))
            assert jwks_server.requests - fetched <= 2  # not hammered: once a floor at most

            rotated = new_key("ES256", "k2")
            jwks_server.document = jwks(key, rotated)
            deadline = time.monotonic() + 10
            while True:  # within a floor of the last fetch, the new kid is unknown yet
                body = await api.raw(ME, token=mint(rotated, "ES256"))
                if not body.get("errors") or time.monotonic() > deadline:
                    break
            assert body["data"]["me"]["id"] == phone["id"], body

            # A guest links the app's account, then signs in with it elsewhere.
            guest = await api.new_person("guest")
            link = (
                "mutation($t: String!) { linkIdentity(token: $t) "
                "{ __typename ... on Player { id } ... on Refusal { code } } }"
            )
            jwt = mint(key, "RS256", sub="guest-user")
            linked = (await api.data(link, {"t": jwt}, guest.token))["linkIdentity"]
            assert linked == {"__typename": "Player", "id": guest.id}
            again = (await api.data(ME, token=mint(key, "RS256", sub="guest-user")))["me"]
            assert again["id"] == guest.id and again["player"]["name"] == "guest"
            taken = await api.data(link, {"t": jwt}, (await api.new_person("x")).token)
            assert taken["linkIdentity"] == {"__typename": "Refusal", "code": "CONFLICT"}
        assert_no_leak(server)


async def test_sockets_and_http_streams_signed_in_with_a_jwt_end_when_it_expires(
    tmp_path: Path, provider: tuple[JwksServer, Any]
) -> None:
    """Both WebSocket protocols close with 4401 "token expired"; SSE and
    multipart end with ``UNAUTHENTICATED`` "this token expired"."""
    jwks_server, key = provider
    url = f"sqlite:///{tmp_path / 'expiry.sqlite3'}"
    with own_server(tmp_path, url, **_env(jwks_server.url)) as (server, _):
        token = mint(key, "RS256", exp=int(time.time()) + 4)
        async with AsyncExitStack() as stack:
            sockets = [
                await stack.enter_async_context(ws_connection(server.ws_url, protocol, token))
                for protocol in PROTOCOLS
            ]
            http = await stack.enter_async_context(streaming_client(server.base_url))
            streams = [
                await HttpSubscription(
                    http, transport, "subscription { lobby { gameId } }", None, token
                ).start()
                for transport in HTTP_TRANSPORTS
            ]
            for stream in streams:
                stack.push_async_callback(stream.close)
            for ws in sockets:
                assert await ws.wait_closed(15) == 4401 and ws.close_reason == "token expired"
            for stream in streams:
                await stream.wait_done(15)
                assert [e["message"] for e in stream.errors] == [EXPIRED_MESSAGE]
                assert stream.completed, stream.items


async def test_one_user_on_two_instances_is_one_player_and_its_socket_expires_there_too(
    tmp_path: Path, provider: tuple[JwksServer, Any], database_url: str, redis_url: str
) -> None:
    """Two instances on PostgreSQL and Redis: the first sights of one user on
    both at once make one player; each instance checks its tokens itself
    (the open tokens' recheck never ends a JWT's socket early)."""
    jwks_server, key = provider
    env = {**_env(jwks_server.url), "MMK_TOKEN_RECHECK_INTERVAL": "1"}
    with (
        fresh_backend(database_url, redis_url, "jwt", **env) as backend,
        cluster(backend, tmp_path) as instances,
    ):
        apis = []
        async with AsyncExitStack() as stack:
            for inst in instances:
                http = httpx.AsyncClient(base_url=inst.server.base_url, trust_env=False)
                apis.append(Api(await stack.enter_async_context(http)))
            tokens = [mint(key, "RS256", sub="both", iat=int(time.time()) - n) for n in (0, 1)]
            seen = await asyncio.gather(
                *(api.data(ME, token=t) for api, t in zip(apis, tokens, strict=True))
            )
            assert seen[0]["me"]["id"] == seen[1]["me"]["id"]
            short = mint(key, "RS256", sub="both", exp=int(time.time()) + 4)
            async with ws_connection(instances[1].server.ws_url, PROTOCOLS[0], short) as ws:
                started = time.monotonic()
                assert await ws.wait_closed(15) == 4401 and ws.close_reason == "token expired"
                assert time.monotonic() - started > 2  # not ended by a recheck of the database
