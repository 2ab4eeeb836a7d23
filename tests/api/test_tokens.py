"""rotateToken and revokeToken through the schema, with the player cache an
instance keeps (docs/decisions/0041)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.websockets import WebSocket

from api.graphql.context import Context
from api.graphql.player_cache import TTL, PlayerCache
from domain.records import Player
from domain.services.auth import token_hash
from infra.settings import Settings
from tests.api.conftest import Client
from tests.api.support import mutation_text

ME = "{ me { player { id } } }"
ROTATE = mutation_text("rotateToken", [])
REVOKE = mutation_text("revokeToken", [])


class Instance:
    """One server instance as the schema sees it: its own player cache."""

    def __init__(self, client: Client, cache: PlayerCache | None = None) -> None:
        self.client, self.cache = client, cache or PlayerCache()

    def context(self, token: str) -> Context:
        headers = [(b"authorization", f"Bearer {token}".encode())]
        request = Request(
            {"type": "http", "method": "POST", "path": "/graphql", "headers": headers}
        )
        return Context(self.client.h.deps, Settings(), request, None, players=self.cache)

    async def execute(self, query: str, token: str) -> Any:
        return await self.client.schema.execute(query, context_value=self.context(token))

    async def me(self, token: str) -> str:
        """The caller's id, or the error code."""
        result = await self.execute(ME, token)
        if result.errors:
            return str(result.errors[0].extensions["code"])
        return str(result.data["me"]["player"]["id"])


async def test_rotate_token_returns_a_new_token_and_the_old_one_stops_at_once(
    client: Client,
) -> None:
    token, player_id = await client.new_player()
    here = Instance(client)
    assert await here.me(token) == player_id  # now in this instance's cache
    result = await here.execute(ROTATE, token)
    assert result.errors is None
    r = result.data["r"]
    assert r["__typename"] == "NewToken" and r["player"]["id"] == player_id
    new = r["token"]
    assert new != token
    assert await here.me(token) == "UNAUTHENTICATED"
    assert await here.me(new) == player_id
    assert client.h.store.hashes_of(player_id) == [token_hash(new)]
    assert token not in repr(client.h.store) and new not in repr(client.h.store)


async def test_revoke_token_signs_out_and_the_cache_forgets_it(client: Client) -> None:
    token, player_id = await client.new_player()
    other, other_id = await client.new_player("bob")
    here = Instance(client)
    assert await here.me(token) == player_id
    result = await here.execute(REVOKE, token)
    assert result.errors is None
    assert result.data["r"] == {"__typename": "TokenRevoked", "player": {"id": player_id}}
    assert await here.me(token) == "UNAUTHENTICATED"
    assert await here.me(other) == other_id
    # the revoked token cannot rotate or revoke any more
    for op in (ROTATE, REVOKE):
        again = await here.execute(op, token)
        assert again.errors and again.errors[0].extensions["code"] == "UNAUTHENTICATED"


async def test_another_instance_takes_a_revoked_token_for_the_cache_ttl_at_most(
    client: Client,
) -> None:
    token, player_id = await client.new_player()
    now = [0.0]
    there = Instance(client, PlayerCache(clock=lambda: now[0]))
    assert await there.me(token) == player_id  # cached there
    assert (await Instance(client).execute(REVOKE, token)).errors is None  # revoked here
    now[0] += TTL - 0.1
    assert await there.me(token) == player_id  # the bound: within the TTL
    now[0] += 0.1
    assert await there.me(token) == "UNAUTHENTICATED"


async def test_a_websocket_checks_its_caller_again_after_the_cache_ttl(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection's later operations stop with a rotated token; what it
    already runs (a subscription) goes on until it ends."""
    token, player_id = await client.new_player()
    now = [1000.0]
    monkeypatch.setattr("api.graphql.context.monotonic", lambda: now[0])

    async def never(*_: Any) -> Any:
        raise AssertionError("no socket I/O")

    ws = WebSocket({"type": "websocket", "path": "/graphql", "headers": []}, never, never)
    params = {"authorization": f"Bearer {token}"}
    ctx = Context(client.h.deps, Settings(), ws, None, connection_params=params)
    player = await ctx.player()
    assert isinstance(player, Player) and player.id == player_id
    assert (await Instance(client).execute(ROTATE, token)).errors is None
    assert await ctx.player() == player  # within the TTL
    now[0] += TTL
    with pytest.raises(Exception) as e:
        await ctx.player()
    assert getattr(e.value, "extensions", {}).get("code") == "UNAUTHENTICATED"


async def test_rotate_and_revoke_need_a_player(client: Client) -> None:
    for op in (ROTATE, REVOKE):
        errors = await client.errors(op)
        assert errors[0]["extensions"]["code"] == "UNAUTHENTICATED"


def test_the_player_cache_forgets_and_expires() -> None:
    from datetime import UTC, datetime

    now = [0.0]
    cache = PlayerCache(size=4, ttl=2.0, clock=lambda: now[0])
    ann = Player("p1", "ann", datetime.now(UTC))
    cache.put("t1", ann)
    cache.put("t2", ann)
    assert cache.get("t1") == ann
    cache.forget("t1")
    assert cache.get("t1") is None and cache.get("t2") == ann
    now[0] = 2.0
    assert cache.get("t2") is None
