"""The GraphQL fuzz harness (docs/operations.md "Fuzzing"): the check that tells a server
error from a client error, and a small world to aim the fuzzer at: two
players, a started game (the host is the Rat, two bots), lobby games, and
the cards and messages in play now."""

from __future__ import annotations

import base64
import json
import logging
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import graphql
import schemathesis
from hypothesis import strategies as st
from schemathesis.graphql import nodes
from schemathesis.python import asgi

from domain.errors import ErrorCode

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20"))
"""Examples per operation; ``make fuzz`` raises it."""

CLIENT_CODES = frozenset(c.value for c in ErrorCode) - {ErrorCode.INTERNAL.value}
"""docs/clients.md's codes for a refused request: all but ``INTERNAL``. Parse and
validation errors carry ``BAD_INPUT`` (api/graphql/errors.py)."""

_TRACE_MARKS = ("Traceback (most recent call last)", 'File "/', "stacktrace")


def no_server_error(
    ctx: object, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> None:
    """A schemathesis check standing in for ``not_a_server_error``: fails on a
    5xx, a body that is not a JSON object, a stack trace, and any GraphQL error
    whose ``extensions.code`` is missing, ``INTERNAL`` or not one of docs/clients.md's.
    (The built-in check counts every coded resolver error as a server error.)"""
    assert response.status_code < 500, f"HTTP {response.status_code}"
    try:
        body = json.loads(response.content)
    except ValueError as e:
        raise AssertionError(f"not JSON: {response.content[:200]!r}") from e
    assert isinstance(body, dict), f"not a JSON object: {body!r:.200}"
    errors = body.get("errors") or []
    assert isinstance(errors, list), errors
    for error in errors:
        text = json.dumps(error)
        assert not any(mark in text for mark in _TRACE_MARKS), f"stack trace: {text:.500}"
        code = (error.get("extensions") or {}).get("code")
        assert code in CLIENT_CODES, f"server error ({code}): {error.get('message')}"


class ErrorLogs(logging.Handler):
    """Collects ERROR records: an exception logged by a bot task or a masked
    resolver is a server error even when the response looks fine."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def take(self) -> list[str]:
        out = [f"{r.name}: {r.getMessage()}" for r in self.records]
        self.records.clear()
        return out


def _one_of(values: list[str]) -> st.SearchStrategy[str]:
    """An item of ``values``, read at draw time; the draw's shape never
    depends on how many there are (Hypothesis replays draws: a
    ``sampled_from`` over a list that grew would make it flaky)."""
    return st.integers(0, 10_000).map(lambda i: values[i % len(values)] if values else "none")


def _cursor(at: datetime, game: str) -> str:
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{game}".encode()).decode()


CURSORS = st.builds(
    _cursor,
    st.builds(
        lambda at, minutes: at.replace(tzinfo=timezone(timedelta(minutes=minutes))),
        st.one_of(st.datetimes(), st.sampled_from([datetime.min, datetime.max])),
        st.integers(-23 * 60 - 59, 23 * 60 + 59),
    ),
    st.text(max_size=8),
)
"""Lobby cursors as the server makes them (base64 of ``<time>|<game id>``),
at any time and UTC offset."""

_CHANGE = "... on GameChange { gameId } ... on Refusal { code message }"
_VIEW = (
    "query($g: ID!) { game(id: $g) { ... on Game { status version viewer { "
    "hand { id } legalActions { mutation arguments } } } } }"
)
PLAYERS = ("host", "guest")
LOBBY_FIELDS = frozenset({"joinGame", "leaveGame", "addBot", "startGame"})


@dataclass
class World:
    """Callers by name, the games, and what each player may play now."""

    client: asgi.ASGIClient
    tokens: dict[str, str] = field(default_factory=dict)
    games: dict[str, str] = field(default_factory=dict)
    version: int = 0
    in_play: dict[str, list[str]] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)

    def gql(self, query: str, caller: str | None = None, **variables: Any) -> dict[str, Any]:
        """Run a set-up query; it must succeed."""
        headers = {} if caller is None else self.headers(caller)
        r = self.client.post(
            "/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        assert not body.get("errors"), body
        data: dict[str, Any] = body["data"]
        return data

    def headers(self, caller: str) -> dict[str, str]:
        """``anonymous``, a player, an unknown token or another auth scheme."""
        if caller == "anonymous":
            return {}
        if caller == "bad-scheme":
            return {"authorization": "Basic Zm9vOmJhcg=="}
        return {"authorization": f"Bearer {self.tokens.get(caller, 'not-a-token')}"}

    # ------------------------------------------------------------ set-up
    def create_player(self, name: str) -> None:
        q = (
            "mutation($n: String!) { createPlayer(name: $n) "
            "{ ... on NewPlayer { token player { id } } } }"
        )
        made = self.gql(q, n=name)["createPlayer"]
        self.tokens[name] = made["token"]
        self.ids.append(made["player"]["id"])

    def create_game(self, caller: str, options: str) -> str:
        q = f"mutation {{ createGame(input: {{{options}}}) {{ {_CHANGE} }} }}"
        game: str = self.gql(q, caller)["createGame"]["gameId"]
        self.ids.append(game)
        return game

    def start_game(self) -> None:
        """A 3-seat game, host at seat 0 and the Rat (so it waits for the
        host's lead), two bots."""
        game = self.create_game("host", "seatCount: 3, ratSeat: 0")
        for bot in ("GREEDY", "RANDOM"):
            q = f"mutation($g: ID!) {{ addBot(gameId: $g, strategy: {bot}) {{ {_CHANGE} }} }}"
            self.gql(q, "host", g=game)
        self.gql(f"mutation($g: ID!) {{ startGame(gameId: $g) {{ {_CHANGE} }} }}", "host", g=game)
        self.games["started"] = game

    def refresh(self) -> None:
        """Read what each player may play now; a game over (finished, or
        abandoned: the host left it) is replaced."""
        view = self.gql(_VIEW, "host", g=self.games["started"])["game"]
        if view["status"] in ("FINISHED", "ABANDONED"):
            self.start_game()
            view = self.gql(_VIEW, "host", g=self.games["started"])["game"]
        self.version = view["version"]
        for caller in PLAYERS:
            if caller != "host":
                view = self.gql(_VIEW, caller, g=self.games["started"])["game"]
            viewer = view.get("viewer") or {}
            fresh = [
                v
                for action in viewer.get("legalActions") or []
                for v in action["arguments"].values()
                if isinstance(v, str)
            ]  # what may be played now first, then the rest of the hand
            fresh += [c["id"] for c in viewer.get("hand") or []]
            self.in_play[caller] = list(dict.fromkeys(fresh))
        self.ids = list(dict.fromkeys([*self.ids, *self.in_play["host"]]))[-200:]

    # ------------------------------------------------------------ aiming
    def id_values(self) -> st.SearchStrategy[Any]:
        """``ID`` literals anywhere (nested inputs too): ids seen, or junk."""
        known = _one_of(self.ids)
        return st.one_of(known, known, st.text(max_size=30)).map(nodes.String)

    def aim(self, body: str, caller: str, data: st.DataObject) -> str:
        """``body`` with some of its root field's arguments set to values in
        play: a real game, a card in the caller's hand, a pending message, the
        game's version, a seat. Without this almost every move is refused."""
        world = self

        class Aim(graphql.Visitor):
            def enter_argument(
                self, node: graphql.ArgumentNode, *args: Any
            ) -> graphql.ArgumentNode | None:
                ancestors = args[-1]
                if sum(isinstance(a, graphql.FieldNode) for a in ancestors) != 1:
                    return None  # not an argument of the root field
                root = next(a for a in ancestors if isinstance(a, graphql.FieldNode))
                value = world._aimed(node.name.value, caller, data, root.name.value)
                return None if value is None else graphql.ArgumentNode(name=node.name, value=value)

            def enter_object_field(
                self, node: graphql.ObjectFieldNode, *args: Any
            ) -> graphql.ObjectFieldNode | None:
                value = world._aimed(node.name.value, caller, data)
                return (
                    None if value is None else graphql.ObjectFieldNode(name=node.name, value=value)
                )

        return graphql.print_ast(graphql.visit(graphql.parse(body), Aim()))

    def _aimed(
        self, name: str, caller: str, data: st.DataObject, field: str = ""
    ) -> graphql.ValueNode | None:
        """Best values first: Hypothesis favours the start of a sample."""
        if data.draw(st.integers(0, 9), label=f"aim {name}") == 9:
            return None  # one in ten left as generated
        g = self.games
        games = (
            [g["lobby"], g["guest"], g["lobby"], g["guest"], g["started"], g["missing"]]
            if field in LOBBY_FIELDS
            else [g["started"], g["started"], g["started"], g["lobby"], g["guest"], g["missing"]]
        )
        in_play = self.in_play.get(caller) or self.in_play["host"] or ["none"]
        null = graphql.NullValueNode()
        versions = [null, nodes.Int(self.version), nodes.Int(self.version - 1)]
        choices: dict[str, st.SearchStrategy[graphql.ValueNode]] = {
            "gameId": st.sampled_from(games).map(nodes.String),
            "id": st.sampled_from(games).map(nodes.String),
            "card": _one_of(in_play).map(nodes.String),
            "discard": _one_of(in_play).map(nodes.String),
            "messageId": _one_of(in_play).map(nodes.String),
            "to": st.integers(0, 3).map(nodes.Int),
            "seat": st.integers(0, 3).map(nodes.Int),
            "seatCount": st.integers(3, 8).map(nodes.Int),
            "ratSeat": st.integers(0, 3).map(nodes.Int),
            "expectedVersion": st.sampled_from(versions),
            "idempotencyKey": st.just(null),
            "after": CURSORS.map(nodes.String),
            "first": st.integers(1, 50).map(nodes.Int),
            "afterSeq": st.integers(0, 30).map(nodes.Int),
        }
        strategy = choices.get(name)
        return None if strategy is None else data.draw(strategy, label=name)


def build_world(app: object) -> World:
    """Host and guest; the started game; a lobby game of the host's that the
    guest joined; a lobby game of the guest's."""
    world = World(asgi.get_client(app))  # type: ignore[arg-type]
    for name in PLAYERS:
        world.create_player(name)
    world.start_game()
    world.games["lobby"] = world.create_game("host", "seatCount: 4")
    q = f"mutation($g: ID!) {{ joinGame(gameId: $g) {{ {_CHANGE} }} }}"
    world.gql(q, "guest", g=world.games["lobby"])
    world.games["guest"] = world.create_game("guest", "seatCount: 5")
    world.games["missing"] = "no-such-game"
    world.refresh()
    return world
