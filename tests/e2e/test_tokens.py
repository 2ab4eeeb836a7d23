"""Tokens on a real server (docs/decisions/0041): a keyed createPlayer
replays with a random id, rotateToken and revokeToken end the token sent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.client import ISSUED_TOKENS, NEW_PLAYER, Api

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

ME = "{ me { player { id } } }"
ROTATE = (
    "mutation { rotateToken { __typename ... on NewToken { token player { id } } "
    "... on Refusal { code message } } }"
)
REVOKE = (
    "mutation { revokeToken { __typename ... on TokenRevoked { player { id } } "
    "... on Refusal { code message } } }"
)
KEYED = NEW_PLAYER.replace(
    "createPlayer(name: $name)", "createPlayer(name: $name, idempotencyKey: $key)"
).replace("mutation($name: String!)", "mutation($name: String!, $key: String)")


async def _me(api: Api, token: str) -> Any:
    body = await api.raw(ME, token=token)
    if body.get("errors"):
        return [e["extensions"]["code"] for e in body["errors"]]
    return body["data"]["me"]["player"]["id"]


async def test_a_keyed_create_player_replays_with_a_random_id(api: Api) -> None:
    key = f"e2e-device-{uuid.uuid4()}"
    first = await api.ok("createPlayer", KEYED, {"name": "ann", "key": key})
    again = await api.ok("createPlayer", KEYED, {"name": "ann", "key": key})
    ISSUED_TOKENS.append(first["token"])
    assert again == first
    assert uuid.UUID(first["player"]["id"]).version == 4


async def test_rotate_then_revoke(api: Api) -> None:
    ann = await api.new_person("ann")
    assert await _me(api, ann.token) == ann.id  # cached by the server now
    rotated = await api.ok("rotateToken", ROTATE, {}, ann.token)
    ISSUED_TOKENS.append(rotated["token"])
    assert rotated["player"]["id"] == ann.id and rotated["token"] != ann.token
    assert await _me(api, ann.token) == ["UNAUTHENTICATED"]
    assert await _me(api, rotated["token"]) == ann.id
    revoked = await api.ok("revokeToken", REVOKE, {}, rotated["token"])
    assert revoked == {"__typename": "TokenRevoked", "player": {"id": ann.id}}
    assert await _me(api, rotated["token"]) == ["UNAUTHENTICATED"]
