"""Refusals under an idempotency key over GraphQL (docs/clients.md "Playing from
the stream", decision 0042): a repeat gets the first response, a refusal
included, word for word, and changes nothing. Input checks made before the
transaction are not kept (they depend on the input alone), nor are the
transient ``RATE_LIMITED`` and ``INTERNAL``."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response

from api.graphql.context import Context
from api.graphql.schema import build_schema
from infra.rate_limit import Limits, LocalLimiter
from infra.settings import Settings
from tests.api.conftest import Client
from tests.api.support import game, mark, mutation_text, new_game, ok, refused, started
from tests.api.test_errors_and_limits import GAME_MUTATIONS, PLAY_MUTATIONS


async def response(client: Client, token: str | None, name: str, /, **args: Any) -> Any:
    """The whole response to mutation ``name``: data and formatted errors."""
    ctx = client.context(token)
    result = await client.schema.execute(
        mutation_text(name, args), variable_values=args, context_value=ctx
    )
    return result.data, [e.formatted for e in result.errors or []]


def messages(client: Client, game_id: str) -> list[str]:
    state = client.h.store.games[game_id].state
    assert state is not None
    return [m.text for m in state.messages]


async def test_a_message_refused_then_legal_is_still_refused_under_its_key(
    client: Client,
) -> None:
    """The probe: ``sendMessage`` refused ``ILLEGAL_ACTION`` (three pending,
    R5.5); the Rat declines one, so the same message would now be sent; with
    the same key it is refused alike and not sent."""
    game_id, tokens = await started(client, 3, ratSeat=0)
    for text in ("a", "b", "c"):
        await ok(client, tokens[1], "sendMessage", gameId=game_id, to=2, text=text)
    args = {"gameId": game_id, "to": 2, "text": "d", "idempotencyKey": "msg-4"}
    first = await response(client, tokens[1], "sendMessage", **args)
    assert first[0]["r"]["code"] == "ILLEGAL_ACTION" and first[1] == []
    pending = (await game(client, tokens[0], game_id))["viewer"]["messages"][0]["messageId"]
    await ok(client, tokens[0], "declineMessage", gameId=game_id, messageId=pending)
    before = mark(client, game_id)
    assert await response(client, tokens[1], "sendMessage", **args) == first
    assert mark(client, game_id) == before
    assert messages(client, game_id) == ["a", "b", "c"], "not sent"
    await ok(client, tokens[1], "sendMessage", **{**args, "idempotencyKey": "msg-5"})
    assert messages(client, game_id) == ["a", "b", "c", "d"], "a new key is a new request"


@pytest.mark.parametrize(("name", "args"), GAME_MUTATIONS, ids=[n for n, _ in GAME_MUTATIONS])
async def test_every_game_mutation_keeps_its_refusal(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    """Refused ``NOT_FOUND`` (no such game) under a key: the repeat gets the
    same response; the key with the real game is a reuse, and nothing
    changes."""
    host, _ = await client.new_player()
    game_id = await new_game(client, host)
    keyed = {**args, "idempotencyKey": f"{name}-1"}
    first = await response(client, host, name, gameId="no-such-game", **keyed)
    assert first[0]["r"]["code"] == "NOT_FOUND"
    before = mark(client, game_id)
    assert await response(client, host, name, gameId="no-such-game", **keyed) == first
    await refused(client, host, name, "IDEMPOTENCY_KEY_REUSED", gameId=game_id, **keyed)
    assert mark(client, game_id) == before


@pytest.mark.parametrize(("name", "args"), PLAY_MUTATIONS, ids=[n for n, _ in PLAY_MUTATIONS])
async def test_a_move_refused_in_the_lobby_is_refused_alike_once_started(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    host, joiner = [(await client.new_player(n))[0] for n in ("host", "joiner")]
    game_id = await new_game(client, host, seatCount=3, ratSeat=0)
    await ok(client, joiner, "joinGame", gameId=game_id)
    await ok(client, host, "addBot", gameId=game_id, strategy="RANDOM")
    keyed = {"gameId": game_id, **args, "idempotencyKey": "early"}
    first = await response(client, host, name, **keyed)
    assert first[0]["r"]["code"] == "GAME_NOT_STARTED"
    await ok(client, host, "startGame", gameId=game_id)
    before = mark(client, game_id)
    assert await response(client, host, name, **keyed) == first
    assert mark(client, game_id) == before


async def test_stale_state_is_kept(client: Client) -> None:
    """The repeat gets the first message (the version then), not a new one."""
    game_id, tokens = await started(client, 3, ratSeat=0)
    version = client.h.store.games[game_id].version
    args = {"gameId": game_id, "to": 2, "text": "hi", "expectedVersion": version - 1}
    first = await response(client, tokens[1], "sendMessage", **args, idempotencyKey="k")
    assert first[0]["r"]["code"] == "STALE_STATE"
    await ok(client, tokens[2], "sendMessage", gameId=game_id, to=1, text="moves on")
    assert await response(client, tokens[1], "sendMessage", **args, idempotencyKey="k") == first
    fresh = await response(client, tokens[1], "sendMessage", **args, idempotencyKey="k2")
    assert fresh[0]["r"]["code"] == "STALE_STATE" and fresh != first, "decided anew: a new key"


# ---------------------------------------------------------------- not kept
async def test_input_refused_before_the_transaction_is_not_kept(client: Client) -> None:
    """``BAD_INPUT`` from the input alone (seat count, a card id, a name) is
    refused before the key is looked up: the same input is refused alike
    anyway, and the key's first use is the first accepted request."""
    host, _ = await client.new_player()
    bad = {"input": {"seatCount": 2}, "idempotencyKey": "new-game"}
    first = await response(client, host, "createGame", **bad)
    assert first[0]["r"]["code"] == "BAD_INPUT"
    assert await response(client, host, "createGame", **bad) == first
    created = await ok(client, host, "createGame", **{**bad, "input": {"seatCount": 3}})
    assert list(client.h.store.games) == [created["gameId"]]
    key = "player-key-0123456789"
    await refused(client, None, "createPlayer", "BAD_INPUT", name=" ", idempotencyKey=key)
    await ok(client, None, "createPlayer", name="ann", idempotencyKey=key)


async def test_rate_limited_is_not_kept(client: Client) -> None:
    token, _ = await client.new_player()
    now = [0.0]
    schema = build_schema(rate_limiter=LocalLimiter(Limits(mutations_per_token=1), lambda: now[0]))
    headers = [(b"authorization", f"Bearer {token}".encode())]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers, "client": ("a", 1)}

    async def open_pack() -> Any:
        ctx = Context(client.h.deps, Settings(), Request(scope), Response())
        text = mutation_text("openBoosterPack", ["idempotencyKey"])
        return await schema.execute(
            text, variable_values={"idempotencyKey": "p"}, context_value=ctx
        )

    other = await schema.execute(
        mutation_text("openBoosterPack", []),
        context_value=Context(client.h.deps, Settings(), Request(scope), Response()),
    )
    assert other.errors is None, "the budget's one call"
    limited = await open_pack()
    assert [e.extensions["code"] for e in limited.errors or []] == ["RATE_LIMITED"]
    now[0] += 60
    opened = await open_pack()
    assert opened.errors is None and opened.data["r"]["__typename"] == "BoosterPack"
    assert len(client.h.store.boosters) == 2


async def test_an_internal_failure_is_not_kept(client: Client) -> None:
    token, _ = await client.new_player()
    store = client.h.store

    def database_gone() -> None:
        store.fail_before_commit = None
        raise RuntimeError("connection lost")

    store.fail_before_commit = database_gone
    failed = await response(client, token, "openBoosterPack", idempotencyKey="p")
    assert [e["extensions"]["code"] for e in failed[1]] == ["INTERNAL"]
    assert store.boosters == [] and store.keys == {}
    opened = await ok(client, token, "openBoosterPack", idempotencyKey="p")
    assert [b.id for b in store.boosters] == [opened["id"]]
    assert await ok(client, token, "openBoosterPack", idempotencyKey="p") == opened
