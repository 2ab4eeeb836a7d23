"""The access matrix (docs/clients.md "Signing in"): every operation of the
schema, as every kind of caller, against a game in a state where the
operation means something: the outcome (success, or the code) is the one
listed, and a refused call changes nothing (game version, event log, stored
state, idempotency records).

Callers: ``anonymous`` (no token), ``unknown`` (a well-formed token of
nobody), ``malformed`` (not ``Bearer <token>``), ``other`` (a player seated
in the game who is not the host, not the Rat and not to act) and
``spectator`` (a player not seated in it). The operations are read from the
schema, so a new operation without an entry here fails the test.

Subscriptions are checked on every transport: ``schema.subscribe`` (what
both WebSocket protocols run) and the HTTP view's streams, Apollo's multipart
protocol and GraphQL over SSE (tests/api/http_view.py), with the caller's
token in the ``Authorization`` header.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.requests import Request
from starlette.websockets import WebSocket

from api.graphql.context import Context
from api.graphql.schema import schema
from infra.settings import Settings
from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import mark, mutation_text, new_game, ok, players, start

OK = "ok"
CALLERS = ("anonymous", "unknown", "malformed", "other", "spectator")
BAD_AUTHORIZATION = {"unknown": "Bearer not-the-token-of-anyone", "malformed": "Basic bm8="}
UNAUTH = "UNAUTHENTICATED"


@dataclass
class Table:
    """A game and its people: host (seat 0, the Rat, to lead), other (seat 1),
    spectator (not seated); in a started game seat 2 is a third player and
    ``other`` has a pending message to it."""

    game_id: str
    tokens: dict[str, str]
    cards: list[str] = field(default_factory=list)
    message_id: str = ""


async def lobby_table(client: Client) -> Table:
    host, other, spectator = await players(client, 3)
    game_id = await new_game(client, host, seatCount=3, ratSeat=0)
    await ok(client, other, "joinGame", gameId=game_id)
    return Table(game_id, {"host": host, "other": other, "spectator": spectator})


async def started_table(client: Client) -> Table:
    host, other, third, spectator = await players(client, 4)
    game_id = await start(client, [host, other, third], ratSeat=0)
    await ok(client, other, "sendMessage", gameId=game_id, to=2, text="psst")
    state = client.h.store.games[game_id].state
    assert state is not None and state.rat == 0 and state.turn == 0
    tokens = {"host": host, "other": other, "spectator": spectator}
    return Table(game_id, tokens, sorted(state.seats[0].hand), state.messages[0].id)


Args = Callable[[Table], dict[str, Any]]


@dataclass(frozen=True)
class Op:
    """How to call one operation and what each caller gets (missing callers:
    ``UNAUTHENTICATED``, the rule for ``unknown`` and ``malformed``)."""

    text: str
    args: Args
    started: bool
    expect: dict[str, str]


def game_arg(t: Table) -> dict[str, Any]:
    return {"gameId": t.game_id}


def mutation(name: str, args: Args, started: bool, **expect: str) -> Op:
    return Op(mutation_text(name, args(EXAMPLE)), args, started, expect)


EXAMPLE = Table("g", {}, ["c1", "c2"], "m1")
EVERYONE = {"anonymous": OK, "other": OK, "spectator": OK}
PLAYERS = {"other": OK, "spectator": OK}
CRAZY = "CRAZY_SECOND_CARD"

WEBHOOK_MUTATIONS: list[tuple[str, Args]] = [
    (
        "createWebhookEndpoint",
        lambda t: {"url": "https://hooks.example.com/", "kinds": ["YOUR_TURN"]},
    ),
    ("updateWebhookEndpoint", lambda t: {"id": "whk_1", "description": "x"}),
    ("setWebhookEndpointEnabled", lambda t: {"id": "whk_1", "enabled": False}),
    ("rotateWebhookSecret", lambda t: {"id": "whk_1"}),
    ("deleteWebhookEndpoint", lambda t: {"id": "whk_1"}),
    ("replayWebhookMessage", lambda t: {"id": "msg_1"}),
    (
        "replayFailedWebhookMessages",
        lambda t: {"id": "whk_1", "since": "2026-01-01T00:00:00.000Z"},
    ),
]
"""The app's backend's webhook operations (#25): a player's token is FORBIDDEN."""

OPS: dict[tuple[str, str], Op] = {
    # ------------------------------------------------------------ mutations
    ("mutation", "createPlayer"): mutation(
        "createPlayer", lambda t: {"name": "eve"}, False, **EVERYONE
    ),
    ("mutation", "createGame"): mutation(
        "createGame", lambda t: {"input": {"seatCount": 3}}, False, **PLAYERS
    ),
    ("mutation", "openBoosterPack"): mutation("openBoosterPack", lambda t: {}, False, **PLAYERS),
    # Any player, their own notifications (#25).
    ("mutation", "markNotificationsRead"): mutation(
        "markNotificationsRead", lambda t: {"upToSeq": 5}, False, **PLAYERS
    ),
    # Any player, for their own token only (the one sent).
    ("mutation", "rotateToken"): mutation("rotateToken", lambda t: {}, False, **PLAYERS),
    ("mutation", "revokeToken"): mutation("revokeToken", lambda t: {}, False, **PLAYERS),
    # This world trusts no identity provider: any token is refused as such (#24).
    ("mutation", "linkIdentity"): mutation(
        "linkIdentity",
        lambda t: {"token": "h.p.s"},
        False,
        other="BAD_INPUT",
        spectator="BAD_INPUT",
    ),
    # Any player's own sessions (#24): another's id, or none, is NOT_FOUND.
    ("mutation", "createSession"): mutation(
        "createSession", lambda t: {"label": "tv"}, False, **PLAYERS
    ),
    ("mutation", "revokeSession"): mutation(
        "revokeSession",
        lambda t: {"id": "no-such-session"},
        False,
        other="NOT_FOUND",
        spectator="NOT_FOUND",
    ),
    # The app's backend's, with a service key (#24): a player's token is FORBIDDEN.
    ("mutation", "issuePlayerToken"): mutation(
        "issuePlayerToken",
        lambda t: {"externalId": "u1", "name": "eve"},
        False,
        other="FORBIDDEN",
        spectator="FORBIDDEN",
    ),
    **{
        ("mutation", name): mutation(name, args, False, other="FORBIDDEN", spectator="FORBIDDEN")
        for name, args in WEBHOOK_MUTATIONS
    },
    # A player's own push settings (#25).
    ("mutation", "updateNotificationSettings"): mutation(
        "updateNotificationSettings", lambda t: {"push": ["YOUR_TURN"]}, False, **PLAYERS
    ),
    ("mutation", "updateProfile"): mutation(
        "updateProfile", lambda t: {"name": "eve"}, False, **PLAYERS
    ),
    ("mutation", "joinGame"): mutation(
        "joinGame", game_arg, False, other="ILLEGAL_ACTION", spectator=OK
    ),
    # Not seated, so nothing to leave: refused by the rules rather than the role.
    ("mutation", "leaveGame"): mutation(
        "leaveGame", game_arg, False, other=OK, spectator="ILLEGAL_ACTION"
    ),
    # Seated but played by no bot: refused by the rules (0046); not seated: by the role (0050).
    ("mutation", "reclaimSeat"): mutation(
        "reclaimSeat", game_arg, True, other="ILLEGAL_ACTION", spectator="FORBIDDEN"
    ),
    ("mutation", "addBot"): mutation(
        "addBot",
        lambda t: {"gameId": t.game_id, "strategy": "RANDOM"},
        False,
        other="FORBIDDEN",
        spectator="FORBIDDEN",
    ),
    ("mutation", "startGame"): mutation(
        "startGame", game_arg, False, other="FORBIDDEN", spectator="FORBIDDEN"
    ),
    ("mutation", "quickPlay"): mutation("quickPlay", lambda t: {"seatCount": 3}, False, **PLAYERS),
    # The game is running: a player is told it has not ended; others may not ask.
    ("mutation", "rematch"): mutation(
        "rematch", game_arg, True, other="ILLEGAL_ACTION", spectator="FORBIDDEN"
    ),
    # Invitations (0062) in a public lobby: no code is any game's, nobody is
    # invited; only the host invites, cancels, rotates or clears.
    ("mutation", "joinByInviteCode"): mutation(
        "joinByInviteCode",
        lambda t: {"inviteCode": "0000000000"},
        False,
        other="NOT_FOUND",
        spectator="NOT_FOUND",
    ),
    ("mutation", "acceptInvitation"): mutation(
        "acceptInvitation", game_arg, False, other="NOT_FOUND", spectator="NOT_FOUND"
    ),
    ("mutation", "declineInvitation"): mutation(
        "declineInvitation", game_arg, False, other="NOT_FOUND", spectator="NOT_FOUND"
    ),
    ("mutation", "invitePlayers"): mutation(
        "invitePlayers",
        lambda t: {"gameId": t.game_id, "playerIds": ["p"]},
        False,
        other="FORBIDDEN",
        spectator="FORBIDDEN",
    ),
    ("mutation", "cancelInvitation"): mutation(
        "cancelInvitation",
        lambda t: {"gameId": t.game_id, "playerId": "p"},
        False,
        other="FORBIDDEN",
        spectator="FORBIDDEN",
    ),
    ("mutation", "rotateInviteCode"): mutation(
        "rotateInviteCode", game_arg, False, other="FORBIDDEN", spectator="FORBIDDEN"
    ),
    ("mutation", "clearInviteCode"): mutation(
        "clearInviteCode", game_arg, False, other="FORBIDDEN", spectator="FORBIDDEN"
    ),
    ("mutation", "sendMessage"): mutation(
        "sendMessage",
        lambda t: {"gameId": t.game_id, "to": 0, "text": "hello"},
        True,
        other=OK,
        spectator="FORBIDDEN",
    ),
    ("mutation", "deliverMessage"): mutation(
        "deliverMessage",
        lambda t: {"gameId": t.game_id, "messageId": t.message_id},
        True,
        other="ILLEGAL_ACTION",
        spectator="FORBIDDEN",
    ),
    ("mutation", "declineMessage"): mutation(
        "declineMessage",
        lambda t: {"gameId": t.game_id, "messageId": t.message_id},
        True,
        other="ILLEGAL_ACTION",
        spectator="FORBIDDEN",
    ),
    # The host's card, played with another token: not that player's turn.
    ("mutation", "playCard"): mutation(
        "playCard",
        lambda t: {"gameId": t.game_id, "card": t.cards[0]},
        True,
        other="NOT_YOUR_TURN",
        spectator="FORBIDDEN",
    ),
    ("mutation", "pass"): mutation(
        "pass", game_arg, True, other="NOT_YOUR_TURN", spectator="FORBIDDEN"
    ),
    ("mutation", "discardAndPlay"): mutation(
        "discardAndPlay",
        lambda t: {"gameId": t.game_id, "discard": t.cards[0], "card": t.cards[1]},
        True,
        other="NOT_YOUR_TURN",
        spectator="FORBIDDEN",
    ),
    ("mutation", "resolveDecision"): mutation(
        "resolveDecision",
        lambda t: {"gameId": t.game_id, "decision": {"kind": CRAZY, "card": t.cards[0]}},
        True,
        other="ILLEGAL_ACTION",
        spectator="FORBIDDEN",
    ),
    # --------------------------------------------------------------- queries
    # ``me`` is null for an anonymous caller (not an error: its siblings survive)
    ("query", "me"): Op("{ r: me { player { id } } }", lambda t: {}, True, EVERYONE),
    ("query", "game"): Op(
        "query($gameId: ID!) { r: game(id: $gameId) { __typename "
        "... on Refusal { code } ... on Game { version viewer { seat hand { id } } } } }",
        game_arg,
        True,
        EVERYONE,
    ),
    ("query", "games"): Op(
        "{ r: games { __typename ... on Refusal { code } } }", lambda t: {}, True, EVERYONE
    ),
    ("query", "cardCatalog"): Op("{ r: cardCatalog { id } }", lambda t: {}, True, EVERYONE),
    ("query", "serverTime"): Op("{ r: serverTime }", lambda t: {}, True, EVERYONE),
    ("query", "player"): Op(
        '{ r: player(id: "p") { id ratings { rating } } }', lambda t: {}, True, EVERYONE
    ),
    ("query", "leaderboard"): Op(
        "{ r: leaderboard(pool: SINGLETON_3_4) { standings { rank } } }",
        lambda t: {},
        True,
        EVERYONE,
    ),
    ("query", "playerGames"): Op(
        '{ r: playerGames(playerId: "p") { __typename } }',
        lambda t: {},
        True,
        {"other": "FORBIDDEN", "spectator": "FORBIDDEN"},
    ),
    ("query", "webhookEndpoints"): Op(
        "{ r: webhookEndpoints { id } }",
        lambda t: {},
        True,
        {"other": "FORBIDDEN", "spectator": "FORBIDDEN"},
    ),
    ("query", "webhookMessages"): Op(
        '{ r: webhookMessages(id: "whk_1") { __typename } }',
        lambda t: {},
        True,
        {"other": "FORBIDDEN", "spectator": "FORBIDDEN"},
    ),
    ("query", "playerByExternalId"): Op(
        '{ r: playerByExternalId(externalId: "u1") { __typename } }',
        lambda t: {},
        True,
        {"other": "FORBIDDEN", "spectator": "FORBIDDEN"},
    ),
    ("query", "gameEvents"): Op(
        "query($gameId: ID!) { r: gameEvents(gameId: $gameId) { __typename "
        "... on Refusal { code } ... on GameEventPage { lastSeq } } }",
        game_arg,
        True,
        EVERYONE,
    ),
    # Nobody, seated or not, replays a running game (0067): its hands are secret.
    ("query", "gameReplay"): Op(
        "query($gameId: ID!) { r: gameReplay(gameId: $gameId) { __typename "
        "... on Refusal { code } ... on ReplayPage { lastSeq } } }",
        game_arg,
        True,
        {"anonymous": "BAD_INPUT", "other": "BAD_INPUT", "spectator": "BAD_INPUT"},
    ),
    ("query", "featuredGames"): Op("{ r: featuredGames { id } }", lambda t: {}, True, EVERYONE),
    # ---------------------------------------------------------- subscriptions
    ("subscription", "gameEvents"): Op(
        "subscription($gameId: ID!) { gameEvents(gameId: $gameId) { seq data } }",
        game_arg,
        True,
        EVERYONE,
    ),
    ("subscription", "seatPresence"): Op(
        "subscription($gameId: ID!) { seatPresence(gameId: $gameId) { seat connected } }",
        game_arg,
        True,
        EVERYONE,
    ),
    # A player's own notifications (#25); nobody's without a token.
    ("subscription", "notifications"): Op(
        "subscription { notifications { seq notice { __typename } } }", lambda t: {}, True, PLAYERS
    ),
    ("subscription", "lobby"): Op(
        "subscription { lobby { gameId } }", lambda t: {}, True, EVERYONE
    ),
}


def schema_operations() -> set[tuple[str, str]]:
    s = schema._schema
    roots = {
        "query": s.query_type,
        "mutation": s.mutation_type,
        "subscription": s.subscription_type,
    }
    return {(kind, name) for kind, t in roots.items() if t is not None for name in t.fields}


def test_every_operation_of_the_schema_has_an_entry() -> None:
    assert set(OPS) == schema_operations()


def context(client: Client, t: Table, caller: str, websocket: bool = False) -> Context:
    authorization = BAD_AUTHORIZATION.get(caller)
    if caller in t.tokens:
        authorization = f"Bearer {t.tokens[caller]}"
    if websocket:
        ws = WebSocket({"type": "websocket", "path": "/graphql", "headers": []}, _never, _never)
        params = {} if authorization is None else {"authorization": authorization}
        return Context(client.h.deps, Settings(), ws, None, connection_params=params)
    headers = [] if authorization is None else [(b"authorization", authorization.encode())]
    request = Request({"type": "http", "method": "POST", "path": "/graphql", "headers": headers})
    return Context(client.h.deps, Settings(), request, None)


async def _never(*_: Any) -> Any:
    raise AssertionError("no socket I/O in schema-level tests")


def outcome(result: Any) -> str:
    """``ok``, or the code of the GraphQL error or of the ``Refusal``."""
    if result.errors:
        assert result.data is None or result.data.get("r") is None, result
        return str(result.errors[0].extensions["code"])
    r = result.data["r"] if "r" in result.data else next(iter(result.data.values()))
    if isinstance(r, dict) and r.get("__typename") == "Refusal":
        return str(r["code"])
    return OK


class _Error:
    def __init__(self, formatted: dict[str, Any]) -> None:
        self.extensions = formatted.get("extensions") or {}


class _Result:
    """A streamed HTTP result, shaped as ``outcome`` reads an ExecutionResult."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.data = result.get("data")
        errors = result.get("errors")
        self.errors = [_Error(e) for e in errors] if errors else None


def authorization_of(t: Table, caller: str) -> str | None:
    if caller in t.tokens:
        return f"Bearer {t.tokens[caller]}"
    return BAD_AUTHORIZATION.get(caller)


async def run_over_http(
    client: Client, op: Op, t: Table, caller: str, transport: str
) -> tuple[str, Any]:
    view = view_of(client.h)
    async with http_stream(
        view, transport, op.text, op.args(t), authorization_of(t, caller)
    ) as stream:
        try:
            first = await next_result(stream, 0.5)
        except TimeoutError:  # live and quiet (the lobby): subscribed, no error
            return OK, None
    assert first is not None, "the stream ended without a result"
    result = _Result(first)
    return outcome(result), result.data


async def run(
    client: Client, op: Op, t: Table, caller: str, transport: str = "ws"
) -> tuple[str, Any]:
    variables = op.args(t)
    if transport != "ws":
        return await run_over_http(client, op, t, caller, transport)
    if not op.text.startswith("subscription"):
        ctx = context(client, t, caller)
        result = await client.schema.execute(op.text, variable_values=variables, context_value=ctx)
        return outcome(result), result.data
    ctx = context(client, t, caller, websocket=True)
    stream: Any = await client.schema.subscribe(
        op.text, variable_values=variables, context_value=ctx
    )
    try:
        first = await asyncio.wait_for(anext(stream), 0.5)
    except TimeoutError:  # live and quiet (the lobby): subscribed, no error
        return OK, None
    finally:
        await stream.aclose()
    return outcome(first), first.data


CASES = [
    (kind, name, transport)
    for kind, name in sorted(OPS)
    for transport in (("ws", *HTTP_TRANSPORTS) if kind == "subscription" else ("ws",))
]


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(
    ("kind", "name", "transport"),
    CASES,
    ids=[f"{k}-{n}" + ("" if tr == "ws" else f"-{tr}") for k, n, tr in CASES],
)
async def test_access(client: Client, kind: str, name: str, transport: str, caller: str) -> None:
    op = OPS[(kind, name)]
    t = await (started_table(client) if op.started else lobby_table(client))
    before = mark(client, t.game_id)
    seen, data = await run(client, op, t, caller, transport)
    expected = op.expect.get(caller, UNAUTH)
    assert seen == expected, (kind, name, caller, data)
    if seen != OK or kind != "mutation" or name in ("createPlayer", "createGame"):
        assert mark(client, t.game_id) == before
    if seen != OK:
        return
    if (kind, name) == ("query", "me"):
        assert (data["r"] is None) == (caller == "anonymous"), data
    if (kind, name) == ("query", "game"):  # the viewer is the caller's own seat, or none
        viewer = data["r"]["viewer"]
        assert viewer is None if caller != "other" else viewer["seat"] == 1
        if viewer is not None:
            hand = client.h.store.games[t.game_id].state.seats[1].hand  # type: ignore[union-attr]
            assert sorted(c["id"] for c in viewer["hand"]) == sorted(hand)


EVENTS = "subscription($gameId: ID!) { gameEvents(gameId: $gameId) { seq type data } }"


async def events_over(
    client: Client, t: Table, caller: str, transport: str, upto: int
) -> list[dict[str, Any]]:
    """The caller's ``gameEvents`` stream up to seq ``upto``, over ``transport``."""
    got: list[dict[str, Any]] = []
    if transport == "ws":
        ctx = context(client, t, caller, websocket=True)
        stream: Any = await schema.subscribe(
            EVENTS, variable_values={"gameId": t.game_id}, context_value=ctx
        )
        try:
            while len(got) < upto:
                result = await asyncio.wait_for(anext(stream), 2)
                assert result.errors is None, result.errors
                got.append(result.data["gameEvents"])
        finally:
            await stream.aclose()
        return got
    view = view_of(client.h)
    auth = authorization_of(t, caller)
    async with http_stream(view, transport, EVENTS, {"gameId": t.game_id}, auth) as items:
        while len(got) < upto:
            result = await next_result(items, 2)
            assert result is not None and not result.get("errors"), result
            got.append(result["data"]["gameEvents"])
    return got


@pytest.mark.parametrize("transport", ["ws", *HTTP_TRANSPORTS])
async def test_each_caller_streams_its_own_audience_on_every_transport(
    client: Client, transport: str
) -> None:
    """A seat's stream carries that seat's projections only, a spectator's
    the public ones, the same on every transport (R11): the dealt hand is
    the seat's own, and a message's text reaches no spectator."""
    t = await started_table(client)
    game = client.h.store.games[t.game_id]
    assert game.state is not None
    hands = [sorted(s.hand) for s in game.state.seats]  # nothing played yet
    for caller, seat in {"other": 1, "spectator": None, "anonymous": None}.items():
        events = await events_over(client, t, caller, transport, game.last_seq)
        assert [e["seq"] for e in events] == list(range(1, game.last_seq + 1))
        if transport != "ws":
            assert events == await events_over(client, t, caller, "ws", game.last_seq)
        (started,) = [e for e in events if e["type"] == "GameStarted"]
        dealt = started["data"].get("hand")
        text = json.dumps(events)
        if seat is None:
            assert dealt is None, (caller, started)
            assert "psst" not in text
        else:
            assert sorted(dealt) == hands[seat], (caller, dealt)
        others = {c for i, h in enumerate(hands) if i != seat for c in h}
        assert not {c for c in others if f'"{c}"' in text}, (caller, "sees another hand")
