"""Every error code the API gives, with the right code and nothing changed:
authentication, roles, refusals of the rules, request limits and masked
internal failures (docs/clients.md "Errors")."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from api.graphql.schema import schema
from domain.game.commands import SendMessage
from domain.services import play
from domain.services.play import seat_command
from domain.services.transaction import Request, Tx
from infra.bus.memory import InProcessBus
from tests.api.conftest import Client
from tests.api.support import (
    errors_of,
    game,
    mark,
    new_game,
    ok,
    play_to_end,
    players,
    refused,
    seeded,
    send_action,
    start,
    started,
)
from tests.fakes import Harness

CRAZY = {"kind": "CRAZY_SECOND_CARD", "card": "crazy-1"}
GAME_MUTATIONS: list[tuple[str, dict[str, Any]]] = [
    ("joinGame", {}),
    ("leaveGame", {}),
    ("addBot", {"strategy": "RANDOM"}),
    ("startGame", {}),
    ("sendMessage", {"to": 1, "text": "hi"}),
    ("deliverMessage", {"messageId": "m1"}),
    ("declineMessage", {"messageId": "m1"}),
    ("playCard", {"card": "crazy-1"}),
    ("pass", {}),
    ("discardAndPlay", {"discard": "crazy-1", "card": "crazy-2"}),
    ("resolveDecision", {"decision": CRAZY}),
]
PLAY_MUTATIONS = GAME_MUTATIONS[4:]
QUERIES = [
    "{ me { player { id } } }",
    '{ game(id: "x") { __typename } }',
    "{ games { __typename } }",
    "{ cardCatalog { id } }",
    '{ gameEvents(gameId: "x") { __typename } }',
    'mutation { createPlayer(name: "x") { __typename } }',
    "mutation { openBoosterPack { __typename } }",
    "mutation { createGame(input: {seatCount: 3}) { __typename } }",
]


def codes(errors: list[Any]) -> list[str]:
    return [e["extensions"]["code"] for e in errors]


@pytest.mark.parametrize(("name", "args"), GAME_MUTATIONS)
async def test_mutations_without_a_token_are_unauthenticated(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    host, _ = await client.new_player()
    game_id = await new_game(client, host)
    before = mark(client, game_id)
    assert codes(await errors_of(client, None, name, gameId=game_id, **args)) == ["UNAUTHENTICATED"]
    assert mark(client, game_id) == before


async def test_create_game_and_boosters_need_a_token(client: Client) -> None:
    assert codes(await errors_of(client, None, "openBoosterPack")) == ["UNAUTHENTICATED"]
    errors = await errors_of(client, None, "createGame", input={"seatCount": 3})
    assert codes(errors) == ["UNAUTHENTICATED"]
    assert client.h.store.games == {} and client.h.store.boosters == []


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("authorization", ["Bearer not-a-token", "Basic x", "Bearer ", "token"])
async def test_a_bad_token_is_unauthenticated_on_any_operation(
    client: Client, query: str, authorization: str
) -> None:
    await client.new_player()
    errors = await client.errors(query, raw_authorization=authorization)
    assert codes(errors) == ["UNAUTHENTICATED"]
    assert len(client.h.store.players) == 1 and client.h.store.games == {}


async def test_the_bearer_scheme_is_case_insensitive(client: Client) -> None:
    token, player_id = await client.new_player()
    ctx = client.context(raw_authorization=f"bEaReR {token}")
    r = await schema.execute("{ me { player { id } } }", context_value=ctx)
    assert r.errors is None and r.data == {"me": {"player": {"id": player_id}}}


@pytest.mark.parametrize(("name", "args"), PLAY_MUTATIONS)
async def test_a_spectator_may_not_act_in_a_game(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    game_id, _ = await started(client, 3)
    spectator, _ = await client.new_player("spectator")
    before = mark(client, game_id)
    await refused(client, spectator, name, "FORBIDDEN", gameId=game_id, **args)
    assert mark(client, game_id) == before


@pytest.mark.parametrize(("name", "args"), PLAY_MUTATIONS)
async def test_playing_in_the_lobby_is_game_not_started(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    host, _ = await client.new_player()
    game_id = await new_game(client, host)
    before = mark(client, game_id)
    await refused(client, host, name, "GAME_NOT_STARTED", gameId=game_id, **args)
    assert mark(client, game_id) == before


@pytest.mark.parametrize(("name", "args"), GAME_MUTATIONS)
async def test_an_unknown_game_is_not_found(
    client: Client, name: str, args: dict[str, Any]
) -> None:
    token, _ = await client.new_player()
    await refused(client, token, name, "NOT_FOUND", gameId="no-such-game", **args)
    assert client.h.store.games == {}


async def test_a_finished_game_accepts_no_more_plays(client: Client) -> None:
    host, _ = await client.new_player("host")
    spectator, _ = await client.new_player("spectator")
    game_id = await start(client, [host], bots=["RANDOM", "GREEDY"])
    await play_to_end(client, game_id, [host, None, None])
    assert (await game(client, None, game_id))["status"] == "FINISHED"
    before = mark(client, game_id)
    for name, args in PLAY_MUTATIONS:
        for token in (host, spectator):
            message = await refused(client, token, name, "GAME_FINISHED", gameId=game_id, **args)
            assert "over" in message
    await refused(client, host, "leaveGame", "ILLEGAL_ACTION", gameId=game_id)
    assert mark(client, game_id) == before


async def test_refusals_of_the_rules(client: Client) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    state = client.h.store.games[game_id].state
    assert state is not None
    before = mark(client, game_id)
    seat1_card = state.seats[1].hand[0]
    cases: list[tuple[int, str, str, dict[str, Any]]] = [
        (0, "playCard", "ILLEGAL_ACTION", {"card": seat1_card}),
        (0, "playCard", "BAD_INPUT", {"card": "no-such-card"}),
        (1, "playCard", "NOT_YOUR_TURN", {"card": seat1_card}),
        (1, "pass", "NOT_YOUR_TURN", {}),
        (0, "pass", "ILLEGAL_ACTION", {}),
        (1, "sendMessage", "ILLEGAL_ACTION", {"to": 1, "text": "me"}),
        (1, "sendMessage", "BAD_INPUT", {"to": 3, "text": "hi"}),
        (1, "sendMessage", "BAD_INPUT", {"to": -1, "text": "hi"}),
        (1, "sendMessage", "BAD_INPUT", {"to": 2, "text": ""}),
        (1, "sendMessage", "BAD_INPUT", {"to": 2, "text": "   "}),
        (1, "sendMessage", "BAD_INPUT", {"to": 2, "text": "x" * 281}),
        (0, "deliverMessage", "NOT_FOUND", {"messageId": "m9"}),
        (0, "resolveDecision", "ILLEGAL_ACTION", {"decision": CRAZY}),
    ]
    for seat, name, code, args in cases:
        await refused(client, tokens[seat], name, code, gameId=game_id, **args)
    assert mark(client, game_id) == before
    await ok(client, tokens[1], "sendMessage", gameId=game_id, to=2, text="x" * 280)
    message_id = client.h.store.games[game_id].state.messages[0].id  # type: ignore[union-attr]
    before = mark(client, game_id)
    await refused(
        client, tokens[2], "deliverMessage", "ILLEGAL_ACTION", gameId=game_id, messageId=message_id
    )
    for _ in range(2):
        await ok(client, tokens[1], "sendMessage", gameId=game_id, to=2, text="more")
    await refused(
        client,
        tokens[1],
        "sendMessage",
        "ILLEGAL_ACTION",
        gameId=game_id,
        to=2,
        text="a 4th pending message (R5.5)",
    )


DECISIONS_WITHOUT_THEIR_FIELD = [
    "CRAZY_SECOND_CARD",
    "HUNGRY_DISCARD",
    "HUNGRY_TAKE",
    "NEEDY_GIFT",
    "NEEDY_NEIGHBOUR",
    "CURIOUS_ORDER",
    "STINKY_GIFTS",
]


@pytest.mark.parametrize("kind", DECISIONS_WITHOUT_THEIR_FIELD)
async def test_a_decision_without_its_field_is_bad_input(client: Client, kind: str) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    before = mark(client, game_id)
    message = await refused(
        client, tokens[0], "resolveDecision", "BAD_INPUT", gameId=game_id, decision={"kind": kind}
    )
    assert kind in message
    assert mark(client, game_id) == before


async def test_a_pending_decision_refuses_everything_else(client: Client) -> None:
    tokens = await players(client, 3)
    game_id = await seeded(
        client, tokens, lambda s: any(c.startswith("crazy-") for c in s.seats[0].hand), ratSeat=0
    )
    actions = (await game(client, tokens[0], game_id))["viewer"]["legalActions"]
    crazy = next(a for a in actions if a["card"].startswith("crazy-"))
    await send_action(client, tokens[0], game_id, crazy)
    hand = client.h.store.games[game_id].state.seats[0].hand  # type: ignore[union-attr]
    before = mark(client, game_id)
    wrong_kind = {"kind": "HUNGRY_DISCARD", "card": hand[0]}
    await refused(
        client, tokens[0], "resolveDecision", "ILLEGAL_ACTION", gameId=game_id, decision=wrong_kind
    )
    await refused(client, tokens[0], "playCard", "ILLEGAL_ACTION", gameId=game_id, card=hand[0])
    not_held = {"kind": "CRAZY_SECOND_CARD", "card": crazy["card"]}
    await refused(
        client, tokens[0], "resolveDecision", "ILLEGAL_ACTION", gameId=game_id, decision=not_held
    )
    other = {"kind": "CRAZY_SECOND_CARD", "card": hand[0]}
    await refused(
        client, tokens[1], "resolveDecision", "NOT_YOUR_TURN", gameId=game_id, decision=other
    )
    assert mark(client, game_id) == before


async def test_expected_version_guards_a_move(client: Client) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    version = (await game(client, None, game_id))["version"]
    card = client.h.store.games[game_id].state.seats[1].hand[0]  # type: ignore[union-attr]
    before = mark(client, game_id)
    message = await refused(
        client,
        tokens[1],
        "sendMessage",
        "STALE_STATE",
        gameId=game_id,
        to=2,
        text="hi",
        expectedVersion=version - 1,
    )
    assert str(version) in message
    await refused(
        client,
        tokens[1],
        "sendMessage",
        "BAD_INPUT",
        gameId=game_id,
        to=2,
        text="hi",
        expectedVersion=-1,
    )
    assert mark(client, game_id) == before
    r = await ok(
        client, tokens[1], "sendMessage", gameId=game_id, to=2, text="hi", expectedVersion=version
    )
    assert r["version"] == version + 1
    await refused(
        client,
        tokens[1],
        "playCard",
        "STALE_STATE",
        gameId=game_id,
        card=card,
        expectedVersion=version,
    )


async def test_expected_version_guards_the_lobby(client: Client) -> None:
    host, ann = await players(client, 2)
    game_id = await new_game(client, host)
    version = client.h.store.games[game_id].version
    before = mark(client, game_id)
    await refused(
        client, ann, "joinGame", "STALE_STATE", gameId=game_id, expectedVersion=version + 1
    )
    assert mark(client, game_id) == before
    await ok(client, ann, "joinGame", gameId=game_id, expectedVersion=version)


def racing(client: Client, game_id: str, player_id: str) -> None:
    """Another server instance commits a message first, just before this
    request commits (the fakes' hook runs once, at commit)."""
    store, deps = client.h.store, client.h.deps

    def other_instance() -> None:
        store.fail_before_commit = None
        req = Request(player_id, "sendMessage", {"to": 2})
        with deps.uow() as uow:
            tx = Tx(deps, uow, req)
            g = tx.game(game_id)
            tx.record(g, seat_command(g, player_id, SendMessage(2, "first")))
            tx.commit()

    store.fail_before_commit = other_instance


async def test_a_lost_race_with_expected_version_is_conflict(client: Client) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    g = await game(client, tokens[1], game_id)
    racing(client, game_id, g["seats"][1]["playerId"])
    r = await refused(
        client,
        tokens[0],
        "sendMessage",
        "CONFLICT",
        gameId=game_id,
        to=1,
        text="mine",
        expectedVersion=g["version"],
    )
    assert "reload" in r
    state = client.h.store.games[game_id].state
    assert [m.text for m in state.messages] == ["first"]  # type: ignore[union-attr]
    assert client.h.store.games[game_id].version == g["version"] + 1


async def test_a_lost_race_without_expected_version_is_retried(client: Client) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    g = await game(client, tokens[1], game_id)
    racing(client, game_id, g["seats"][1]["playerId"])
    await ok(client, tokens[0], "sendMessage", gameId=game_id, to=1, text="mine")
    state = client.h.store.games[game_id].state
    assert [m.text for m in state.messages] == ["first", "mine"]  # type: ignore[union-attr]


async def test_a_repeated_key_replays_the_first_result_and_applies_once(
    client: Client,
) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    version = client.h.store.games[game_id].version
    args = {
        "gameId": game_id,
        "to": 2,
        "text": "once",
        "idempotencyKey": "msg-1",
        "expectedVersion": version,
    }
    first = await ok(client, tokens[1], "sendMessage", **args)
    after = mark(client, game_id)
    again = await ok(client, tokens[1], "sendMessage", **args)
    assert again == first
    assert mark(client, game_id) == after
    await refused(
        client, tokens[1], "sendMessage", "IDEMPOTENCY_KEY_REUSED", **{**args, "text": "other"}
    )
    await refused(
        client, tokens[1], "pass", "IDEMPOTENCY_KEY_REUSED", gameId=game_id, idempotencyKey="msg-1"
    )
    assert mark(client, game_id) == after
    other_seat = await ok(
        client, tokens[2], "sendMessage", **{**args, "to": 1, "expectedVersion": None}
    )
    assert other_seat["version"] == first["version"] + 1, "keys are per player"
    later = mark(client, game_id)
    assert await ok(client, tokens[1], "sendMessage", **args) == first, "a retry, not stale"
    assert mark(client, game_id) == later


async def test_create_game_with_a_key_creates_one_game(client: Client) -> None:
    host, _ = await client.new_player()
    spec = {"input": {"seatCount": 4, "seed": "k", "practice": True}, "idempotencyKey": "new-game"}
    first = await ok(client, host, "createGame", **spec)
    assert await ok(client, host, "createGame", **spec) == first
    assert list(client.h.store.games) == [first["gameId"]]
    await refused(
        client, host, "createGame", "IDEMPOTENCY_KEY_REUSED", **{**spec, "input": {"seatCount": 5}}
    )
    assert len(client.h.store.games) == 1


@pytest.mark.parametrize("key", ["", "k" * 201, "new\nline", "tab\t"])
async def test_a_bad_idempotency_key_is_bad_input(client: Client, key: str) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    before = mark(client, game_id)
    await refused(
        client,
        tokens[1],
        "sendMessage",
        "BAD_INPUT",
        gameId=game_id,
        to=2,
        text="hi",
        idempotencyKey=key,
    )
    await refused(
        client, tokens[1], "createGame", "BAD_INPUT", input={"seatCount": 3}, idempotencyKey=key
    )
    await refused(client, None, "createPlayer", "BAD_INPUT", name="x", idempotencyKey=key)
    assert mark(client, game_id) == before
    assert len(client.h.store.games) == 1 and len(client.h.store.players) == 3


def deep_query(depth: int) -> str:
    inner = "id"
    for i in range(depth):
        inner = f"f{i} {{ {inner} }}"
    return f"{{ me {{ {inner} }} }}"


async def test_a_too_deep_query_is_bad_input(client: Client) -> None:
    token, _ = await client.new_player()
    errors = await client.errors(deep_query(13), token)
    assert set(codes(errors)) == {"BAD_INPUT"}
    assert any("maximum operation depth of 12" in e["message"] for e in errors)
    shallow = await client.errors(deep_query(8), token)
    assert not any("depth" in e["message"] for e in shallow)


async def test_too_many_aliases_are_bad_input(client: Client) -> None:
    def aliased(n: int) -> str:
        return "{ " + " ".join(f"a{i}: cardCatalog {{ id }}" for i in range(n)) + " }"

    assert len(await client.run(aliased(15))) == 15
    errors = await client.errors(aliased(16))
    assert codes(errors) == ["BAD_INPUT"] and "aliases" in errors[0]["message"]


async def test_too_many_tokens_are_bad_input(client: Client) -> None:
    errors = await client.errors("{ cardCatalog { " + "id " * 2_000 + "} }")
    assert codes(errors) == ["BAD_INPUT"] and "2000 tokens" in errors[0]["message"]


async def test_a_syntax_error_is_bad_input(client: Client) -> None:
    errors = await client.errors("{ cardCatalog { id ")
    assert codes(errors) == ["BAD_INPUT"]


async def test_an_unexpected_failure_is_masked_as_internal(
    client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    card = client.h.store.games[game_id].state.seats[0].hand[0]  # type: ignore[union-attr]
    before = mark(client, game_id)

    async def broken(*_: Any) -> Any:
        raise RuntimeError("db password is hunter2 at /srv/mmk/secret.py")

    monkeypatch.setattr(play, "act", broken)
    with caplog.at_level(logging.ERROR, logger="mmk.api"):
        errors = await errors_of(client, tokens[0], "playCard", gameId=game_id, card=card)
    assert codes(errors) == ["INTERNAL"]
    assert errors[0]["message"] == "Internal error."
    assert "hunter2" not in repr(errors) and "Traceback" not in repr(errors)
    assert "hunter2" in caplog.text, "the detail is logged on the server"
    assert mark(client, game_id) == before


async def test_a_slow_subscriber_is_dropped_with_rate_limited(client: Client) -> None:
    bus = InProcessBus(queue_limit=2)
    h = client.h
    small = Client(Harness(h.store, bus, dataclasses.replace(h.deps, bus=bus), h.scheduled))
    game_id, tokens = await started(small, 3, ratSeat=0)
    stream = await small.subscribe(
        "subscription($id: ID!) { gameEvents(gameId: $id) { seq } }", None, id=game_id
    )
    first = await anext(stream)
    assert first.data["gameEvents"]["seq"] == 1
    last = h.store.games[game_id].last_seq
    for text in ("a", "b", "c"):
        await ok(small, tokens[1], "sendMessage", gameId=game_id, to=2, text=text)
    seqs = [(await anext(stream)).data["gameEvents"]["seq"] for _ in range(last - 1)]
    assert seqs == list(range(2, last + 1))
    dropped = await anext(stream)
    assert [e.extensions["code"] for e in dropped.errors] == ["RATE_LIMITED"]
    assert "afterSeq" in dropped.errors[0].message
    await stream.aclose()


@pytest.mark.parametrize(
    "query",
    [
        "query Me { cardCatalog { id ",  # a syntax error
        "query Me { cardCatalog { " + "id " * 2_000 + "} }",  # too many tokens
    ],
)
async def test_a_refusal_before_parsing_names_its_own_error_not_the_operation(
    client: Client, query: str
) -> None:
    """A request refused at its parse (syntax, tokens, length, its parse
    budget) that names its operation gets that refusal, not "Unknown
    operation named Me": the stand-in document carries the name."""
    result = await client.schema.execute(query, operation_name="Me", context_value=client.context())
    assert result.errors and codes([e.formatted for e in result.errors]) == ["BAD_INPUT"]
    assert "Unknown operation" not in result.errors[0].message
