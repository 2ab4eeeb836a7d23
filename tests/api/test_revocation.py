"""A rotated or revoked token's open WebSockets and HTTP streams end on the
instance that heard of it (api/graphql/revocation.py, docs/decisions/0053):
a WebSocket (both sub-protocols) closes with 4401 and a reason, an HTTP
stream (multipart, SSE) sends ``UNAUTHENTICATED`` and completes, and no
operation starts over such a socket any more. The view runs in process over
the harness's fakes; revocations go through the view's own HTTP endpoint.
tests/e2e/test_revocation.py checks the same on real servers, across two
instances too."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL

from api.graphql.context import Context
from api.graphql.player_cache import PlayerCache
from api.graphql.revocation import (
    REVOKED_CLOSE,
    REVOKED_MESSAGE,
    REVOKED_REASON,
    OpenTokens,
)
from api.graphql.view import GameGraphQL
from domain.records import Player
from domain.services.auth import token_hash
from domain.services.players import revoke_token
from infra.settings import Settings
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import mutation_text
from tests.api.ws_view import ViewSocket
from tests.fakes import Harness, harness

LEGACY, TRANSPORT = GRAPHQL_WS_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL
PROTOCOLS = (TRANSPORT, LEGACY)
START = {LEGACY: "start", TRANSPORT: "subscribe"}
DATA = {LEGACY: "data", TRANSPORT: "next"}
SAME_INSTANCE = 1.0  # seconds: the bound on the instance that revoked
ME = "{ me { player { id } } }"
ROTATE = mutation_text("rotateToken", [])
REVOKE = mutation_text("revokeToken", [])
NEW_PLAYER = (
    "mutation($n: String!) { createPlayer(name: $n) { ... on NewPlayer { token player { id } } } }"
)
NEW_GAME = (
    'mutation { createGame(input: {seatCount: 3, seed: "rv", practice: true}) '
    "{ ... on GameChange { gameId } } }"
)
EVENTS = "subscription($g: ID!) { gameEvents(gameId: $g, afterSeq: 0) { __typename seq } }"


class World:
    """A view over a harness, and an HTTP client to it."""

    def __init__(self, h: Harness, view: GameGraphQL, http: httpx.AsyncClient) -> None:
        self.h, self.view, self.http = h, view, http

    async def gql(self, query: str, token: str | None = None, **variables: Any) -> dict[str, Any]:
        headers = {} if token is None else {"authorization": f"Bearer {token}"}
        body = {"query": query, "variables": variables}
        r = await self.http.post("/graphql", json=body, headers=headers)
        answer: dict[str, Any] = r.json()
        return answer

    async def new_player(self, name: str) -> tuple[str, str]:
        r = (await self.gql(NEW_PLAYER, n=name))["data"]["createPlayer"]
        return r["token"], r["player"]["id"]

    async def new_game(self, token: str) -> str:
        game: str = (await self.gql(NEW_GAME, token))["data"]["createGame"]["gameId"]
        return game


@asynccontextmanager
async def world() -> AsyncIterator[World]:
    h = harness()
    view = view_of(h)
    transport = httpx.ASGITransport(app=view)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield World(h, view, http)
    await view.open_tokens.aclose()


@asynccontextmanager
async def socket(w: World, protocol: str, token: str) -> AsyncIterator[ViewSocket]:
    async with ViewSocket(w.view, protocol) as ws:
        await ws.init({"authorization": f"Bearer {token}"})
        yield ws


async def subscribe(ws: ViewSocket, protocol: str, op_id: str, game_id: str) -> None:
    """``gameEvents`` from the start; returns once the replay's first event came."""
    payload = {"query": EVENTS, "variables": {"g": game_id}}
    await ws.send({"type": START[protocol], "id": op_id, "payload": payload})
    frame = await ws.receive()
    assert frame["type"] == DATA[protocol] and frame["id"] == op_id, frame
    assert frame["payload"]["data"]["gameEvents"]["seq"] == 1, frame


async def close_of(ws: ViewSocket, timeout: float) -> tuple[int, str, list[dict[str, Any]]]:
    """Frames until the server's close (within ``timeout``): its code, reason
    and what came before. The client then answers the close, as a real one
    does, and the view's task ends."""
    sent: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while True:
            message = await ws._from_app.get()
            if message["type"] == "websocket.close":
                break
            sent.append(ws_json(message))
    await ws._to_app.put({"type": "websocket.disconnect", "code": message.get("code", 1000)})
    assert ws._task is not None
    await asyncio.wait_for(ws._task, 5)
    return message.get("code", 1000), message.get("reason") or "", sent


def ws_json(message: Mapping[str, Any]) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(message["text"])
    return frame


async def answers(ws: ViewSocket, protocol: str, op_id: str, query: str) -> dict[str, Any]:
    """The payload of a one-result operation over ``ws``."""
    await ws.send({"type": START[protocol], "id": op_id, "payload": {"query": query}})
    while True:
        frame = await ws.receive()
        if frame.get("id") == op_id and frame["type"] in (DATA[protocol], "error"):
            payload: dict[str, Any] = frame["payload"]
            return payload


# ---------------------------------------------------------------- WebSockets
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("via", ["revokeToken", "rotateToken"])
async def test_a_revoked_tokens_websocket_closes_with_4401_at_once(protocol: str, via: str) -> None:
    """Its subscription stops and the socket closes with 4401 within the
    bound; another player's socket, and another socket of the same player
    opened with the new token, carry on."""
    async with world() as w:
        ann, _ = await w.new_player("ann")
        bob, bob_id = await w.new_player("bob")
        game = await w.new_game(ann)
        async with socket(w, protocol, ann) as mine, socket(w, protocol, bob) as theirs:
            await subscribe(mine, protocol, "1", game)
            await subscribe(theirs, protocol, "1", game)
            assert len(w.view.open_tokens) == 2
            r = (await w.gql(mutation_text(via, []), ann))["data"]["r"]
            assert r["__typename"] in ("TokenRevoked", "NewToken"), r
            code, reason, before = await close_of(mine, SAME_INSTANCE)
            assert (code, reason) == (REVOKED_CLOSE, REVOKED_REASON)
            assert all(f["type"] in (DATA[protocol], "complete", "ka") for f in before), before
            bobs = await answers(theirs, protocol, "2", ME)
            assert bobs["data"]["me"]["player"]["id"] == bob_id
            assert len(w.view.open_tokens) == 1  # bob's
            if via == "rotateToken":
                async with socket(w, protocol, r["token"]) as again:
                    me = await answers(again, protocol, "1", ME)
                    assert me["data"]["me"]["player"]["id"] == r["player"]["id"]


SESSIONS = "{ me { sessions { id label current createdAt lastUsedAt } } }"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_revoked_sessions_websocket_closes_and_the_players_other_goes_on(
    protocol: str,
) -> None:
    """Issue #24: a player's second device (``createSession``) listed in
    ``me.sessions``; ``revokeSession`` from the first ends the second's
    socket with 4401 and leaves the first's open."""
    async with world() as w:
        ann, _ = await w.new_player("ann")
        game = await w.new_game(ann)
        new = (await w.gql(mutation_text("createSession", ["label"]), ann, label="tv"))["data"]
        tv, tv_id = new["r"]["token"], new["r"]["session"]["id"]
        listed = (await w.gql(SESSIONS, tv))["data"]["me"]["sessions"]
        assert [(s["label"], s["current"]) for s in listed] in (
            [("tv", True), (None, False)],
            [(None, False), ("tv", True)],
        )
        async with socket(w, protocol, ann) as mine, socket(w, protocol, tv) as theirs:
            await subscribe(mine, protocol, "1", game)
            await subscribe(theirs, protocol, "1", game)
            r = await w.gql(mutation_text("revokeSession", ["id"]), ann, id=tv_id)
            assert r["data"]["r"] == {"__typename": "SessionRevoked", "sessionId": tv_id}
            code, reason, _ = await close_of(theirs, SAME_INSTANCE)
            assert (code, reason) == (REVOKED_CLOSE, REVOKED_REASON)
            still = await answers(mine, protocol, "2", SESSIONS)
            (left,) = still["data"]["me"]["sessions"]
            assert left["current"] and left["id"] != tv_id
        assert (await w.gql(ME, tv))["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_revoking_ones_own_session_holds_for_the_rest_of_the_request() -> None:
    """The caller's own session ended by ``revokeSession``: a later field of
    the same operation no longer runs as the player."""
    async with world() as w:
        ann, _ = await w.new_player("ann")
        (own,) = (await w.gql(SESSIONS, ann))["data"]["me"]["sessions"]
        both = (
            "mutation($id: ID!) { a: revokeSession(id: $id) { __typename } "
            "b: createSession { __typename ... on NewSession { token } } }"
        )
        answer = await w.gql(both, ann, id=own["id"])
        errors = [(e["path"], e["extensions"]["code"]) for e in answer["errors"]]
        assert errors == [(["b"], "UNAUTHENTICATED")], answer  # b is non-null: data is null
        assert w.h.store.sessions == {}  # a ran, b made none
        assert (await w.gql(ME, ann))["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_rotating_over_the_socket_itself_answers_then_closes(protocol: str) -> None:
    """The mutation that rotated the token over this very socket gets its
    result (the new token) and its ``complete``; then the socket closes."""
    async with world() as w:
        ann, ann_id = await w.new_player("ann")
        game = await w.new_game(ann)
        async with socket(w, protocol, ann) as ws:
            await subscribe(ws, protocol, "1", game)
            await ws.send({"type": START[protocol], "id": "2", "payload": {"query": ROTATE}})
            code, reason, before = await close_of(ws, SAME_INSTANCE + 5)
            assert (code, reason) == (REVOKED_CLOSE, REVOKED_REASON)
            results = [f for f in before if f.get("id") == "2"]
            assert [f["type"] for f in results] == [DATA[protocol], "complete"], before
            rotated = results[0]["payload"]["data"]["r"]
            assert rotated["__typename"] == "NewToken" and rotated["player"]["id"] == ann_id
        me = await w.gql(ME, rotated["token"])
        assert me["data"]["me"]["player"]["id"] == ann_id
        assert (await w.gql(ME, ann))["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_connection_init_with_a_revoked_token_is_refused(protocol: str) -> None:
    async with world() as w:
        ann, _ = await w.new_player("ann")
        assert (await w.gql(REVOKE, ann))["data"]["r"]["__typename"] == "TokenRevoked"
        async with ViewSocket(w.view, protocol) as ws:
            init = {"type": "connection_init", "payload": {"authorization": f"Bearer {ann}"}}
            await ws.send(init)
            code, reason, before = await close_of(ws, 5)
        assert (code, reason) == (4403, "unknown token") or before[0]["type"] == "connection_error"
        assert len(w.view.open_tokens) == 0


# ---------------------------------------------------------------- the TTL gap
async def test_no_operation_starts_over_a_socket_once_its_token_is_revoked_here() -> None:
    """A socket's caller is cached for the player cache's TTL; the instance
    that revoked refuses its next operation at once, before the close."""
    async with world() as w:
        h, view = w.h, w.view
        ann, ann_id = await w.new_player("ann")
        ws = ws_context(h, view, ann)
        ws.ticket = view.open_tokens.open(ann, lambda: None)
        player = await ws.player()
        assert player is not None and player.id == ann_id  # now cached by the context
        await revoke_token(h.deps, ann_id, ann)
        with pytest.raises(Exception) as e:
            await ws.player()
        assert getattr(e.value, "extensions", {}) == {"code": "UNAUTHENTICATED"}
        assert e.value.args[0] == REVOKED_MESSAGE


def ws_context(h: Harness, view: GameGraphQL, token: str) -> Context:
    from starlette.websockets import WebSocket

    async def never(*_: Any) -> Any:
        raise AssertionError("no socket I/O")

    ws = WebSocket({"type": "websocket", "path": "/graphql", "headers": []}, never, never)
    params = {"authorization": f"Bearer {token}"}
    return Context(h.deps, Settings(), ws, None, connection_params=params, players=view.players)


async def test_a_read_that_began_before_a_revocation_does_not_cache_its_token() -> None:
    """The player read from the database before the token was forgotten is
    not kept: the next request reads again."""
    cache = PlayerCache()
    ann = Player("p1", "ann", datetime.now(UTC))
    epoch = cache.epoch  # a read begins
    cache.forget_digest(token_hash("t1"))  # the notice comes in meanwhile
    cache.put("t1", ann, epoch)  # the read ends
    assert cache.get("t1") is None
    cache.put("t1", ann, cache.epoch)
    assert cache.get("t1") == ann


async def test_the_revoking_instance_forgets_the_token_in_its_cache() -> None:
    async with world() as w:
        ann, ann_id = await w.new_player("ann")
        assert (await w.gql(ME, ann))["data"]["me"]["player"]["id"] == ann_id  # cached
        await revoke_token(w.h.deps, ann_id, ann)  # the use case alone: its notice
        assert (await w.gql(ME, ann))["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


# ---------------------------------------------------------------- HTTP streams
@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_a_revoked_tokens_http_stream_ends_with_a_coded_error(transport: str) -> None:
    async with world() as w:
        ann, _ = await w.new_player("ann")
        bob, _ = await w.new_player("bob")
        game = await w.new_game(ann)
        auth = {"authorization": f"Bearer {ann}"}
        async with (
            http_stream(w.view, transport, EVENTS, {"g": game}, auth["authorization"]) as mine,
            http_stream(w.view, transport, EVENTS, {"g": game}, f"Bearer {bob}") as theirs,
        ):
            first = await next_result(mine, 5)
            assert first is not None and first["data"]["gameEvents"]["seq"] == 1
            assert (await next_result(theirs, 5)) is not None
            assert len(w.view.open_tokens) == 2
            assert (await w.gql(REVOKE, ann))["data"]["r"]["__typename"] == "TokenRevoked"
            ended: list[Any] = []
            async with asyncio.timeout(SAME_INSTANCE):
                async for item in mine:
                    ended.append(item)
            results = [i for i in ended if i.kind in ("result", "fatal")]
            [last] = results[-1:]
            errors = last.errors if last.kind == "fatal" else last.result["errors"]
            assert [e["extensions"]["code"] for e in errors] == ["UNAUTHENTICATED"]
            assert errors[0]["message"] == REVOKED_MESSAGE
            assert ended[-1].kind == "end", ended  # completed, not cut
            assert len(w.view.open_tokens) == 1  # bob's goes on
            assert theirs is not None


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_a_stream_revoked_before_its_first_chunk_is_still_well_formed(transport: str) -> None:
    """A multipart stream's opening comes before the error even then."""
    async with world() as w:
        ann, ann_id = await w.new_player("ann")
        game = await w.new_game(ann)
        opened = asyncio.Event()
        real_open = w.view.open_tokens.open

        def open_then_revoke(token: str, end: Any) -> Any:
            ticket = real_open(token, end)
            opened.set()
            w.view.open_tokens.revoked(token_hash(token))  # before the first chunk
            return ticket

        w.view.open_tokens.open = open_then_revoke  # type: ignore[method-assign]
        async with http_stream(w.view, transport, EVENTS, {"g": game}, f"Bearer {ann}") as s:
            async with asyncio.timeout(5):
                items = [item async for item in s]
        assert opened.is_set()
        kinds = [i.kind for i in items if i.kind != "heartbeat"]
        assert kinds[-2:] in (["fatal", "end"], ["result", "end"]), items
        assert ann_id


# ---------------------------------------------------------------- missed notices
async def test_a_missed_notice_is_made_up_by_the_check_of_open_tokens(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A revocation whose notice never came (another instance, Redis away):
    the next check of the open tokens ends its socket; the others stay."""
    async with world() as w:
        ann, ann_id = await w.new_player("ann")
        bob, _ = await w.new_player("bob")
        game = await w.new_game(ann)
        async with socket(w, TRANSPORT, ann) as mine, socket(w, TRANSPORT, bob) as theirs:
            await subscribe(mine, TRANSPORT, "1", game)
            unheard = replace(w.h.deps, revocations=None)
            await revoke_token(unheard, ann_id, ann)
            assert len(w.view.open_tokens) == 2  # nobody told
            with caplog.at_level(logging.INFO, logger="mmk.api"):
                w.view.open_tokens.missed()
                code, reason, _ = await close_of(mine, 5)
            assert (code, reason) == (REVOKED_CLOSE, REVOKED_REASON)
            assert len(w.view.open_tokens) == 1
            assert "1 connection(s) or stream(s) end" in caplog.text
            assert ann not in caplog.text and token_hash(ann) not in caplog.text
            assert (await answers(theirs, TRANSPORT, "1", ME))["data"]["me"] is not None


async def test_checks_run_one_at_a_time_and_again_when_asked_meanwhile() -> None:
    asked: list[set[str]] = []
    gate = asyncio.Event()

    async def dead(digests: set[str]) -> set[str]:
        asked.append(set(digests))
        await gate.wait()
        return {token_hash("t1")}

    tokens = OpenTokens(PlayerCache(), dead)
    ended: list[str] = []
    tokens.open("t1", lambda: ended.append("t1"))
    tokens.open("t2", lambda: ended.append("t2"))
    tokens.missed()
    await asyncio.sleep(0)
    assert len(asked) == 1  # reading
    tokens.missed()  # while the first check runs: one more after it
    await asyncio.sleep(0)
    assert len(asked) == 1
    gate.set()
    for _ in range(100):
        if len(asked) == 2:
            break
        await asyncio.sleep(0)
    await tokens.aclose()
    assert asked == [{token_hash("t1"), token_hash("t2")}, {token_hash("t2")}]
    assert ended == ["t1"]
    assert len(tokens) == 1


async def test_a_check_that_cannot_reach_the_database_waits_for_the_next(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def dead(digests: set[str]) -> set[str]:
        raise RuntimeError("boom")

    tokens = OpenTokens(PlayerCache(), dead)
    tokens.open("t1", lambda: None)
    with caplog.at_level(logging.ERROR, logger="mmk.api"):
        tokens.missed()
        await asyncio.sleep(0)
        await tokens.aclose()
    assert "checking the tokens in use failed" in caplog.text
    assert len(tokens) == 1


async def test_a_providers_tokens_are_not_checked_against_the_database_and_end_expired() -> None:
    """Issue #24: a JWT has no hash in the database (it would read as dead);
    it ends at its expiry instead, with its own reason."""
    asked: list[set[str]] = []

    async def dead(digests: set[str]) -> set[str]:
        asked.append(set(digests))
        return set(digests)  # whatever is asked about is dead

    tokens = OpenTokens(PlayerCache(), dead, lambda token: token.count(".") == 2)
    ended: list[str] = []
    jwt = tokens.open("h.p.s", lambda: ended.append("jwt"))
    tokens.missed()  # only the JWT open: nothing to check
    await asyncio.sleep(0)
    assert asked == []
    tokens.open("t1", lambda: ended.append("t1"))
    tokens.missed()
    for _ in range(100):
        if asked:
            break
        await asyncio.sleep(0)
    await tokens.aclose()
    assert asked == [{token_hash("t1")}] and ended == ["t1"]
    jwt.expire()
    assert ended == ["t1", "jwt"] and jwt.reason == "token expired"
