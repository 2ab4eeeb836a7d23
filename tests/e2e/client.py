"""GraphQL over HTTP for end-to-end tests (httpx), and the operations they use."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

NEW_PLAYER = """
mutation($name: String!) {
  createPlayer(name: $name) {
    __typename
    ... on NewPlayer { token player { id name } }
    ... on Refusal { code message }
  }
}"""

CHANGE = """
  __typename
  ... on GameChange { version gameId events { seq type data } }
  ... on Refusal { code message }
"""

CREATE_GAME = f"""
mutation($input: CreateGameInput!) {{ createGame(input: $input) {{ {CHANGE} }} }}"""

JOIN_GAME = f"""
mutation($gameId: ID!) {{ joinGame(gameId: $gameId) {{ {CHANGE} }} }}"""

LEAVE_GAME = f"""
mutation($gameId: ID!) {{ leaveGame(gameId: $gameId) {{ {CHANGE} }} }}"""

ADD_BOT = f"""
mutation($gameId: ID!, $strategy: BotStrategy!) {{
  addBot(gameId: $gameId, strategy: $strategy) {{ {CHANGE} }}
}}"""

START_GAME = f"""
mutation($gameId: ID!) {{ startGame(gameId: $gameId) {{ {CHANGE} }} }}"""

SEND_MESSAGE = f"""
mutation($gameId: ID!, $to: Int!, $text: String!) {{
  sendMessage(gameId: $gameId, to: $to, text: $text) {{ {CHANGE} }}
}}"""

GAME = """
query($id: ID!) {
  game(id: $id) {
    __typename
    ... on Game {
      id status lastSeq version ratSeat
      seats { seat playerId bot }
      table {
        phase toAct ratSeat
        trick { number sleepy plays { __typename } }
        outcome { termination winners scores }
      }
      viewer {
        seat
        hand { id }
        decisionCards { id }
        faceDownPlays { card { id } secondCard { id } }
        messages { id messageId fromSeat toSeat status text }
        messageTargets
        legalActions { kind mutation arguments }
      }
    }
    ... on Refusal { code message }
  }
}"""

EVENT_FIELDS = "gameId seq type data"
EVENTS = """
query($gameId: ID!, $afterSeq: Int!, $first: Int!) {
  gameEvents(gameId: $gameId, afterSeq: $afterSeq, first: $first) {
    __typename
    ... on GameEventPage { hasMore lastSeq events { %s } }
    ... on Refusal { code message }
  }
}"""

SUBSCRIBE_EVENTS = """
subscription($gameId: ID!, $afterSeq: Int!) {
  gameEvents(gameId: $gameId, afterSeq: $afterSeq) { gameId seq type data }
}"""

# The arguments each game mutation takes besides gameId (docs/clients.md: legalActions
# are sent back as they are); their GraphQL types, for the variable list.
ARGUMENT_TYPES = {
    "card": "ID!",
    "discard": "ID!",
    "messageId": "ID!",
    "to": "Int!",
    "text": "String!",
    "decision": "DecisionInput!",
}


def action_document(
    mutation: str,
    arguments: Iterable[str],
    extra: dict[str, str] | None = None,
    selection: str = CHANGE,
) -> str:
    """A game mutation whose arguments are all variables: ``$gameId``, the
    ``extra`` ones (name: GraphQL type) and the listed action's ``arguments``."""
    declared = {"gameId": "ID!", **(extra or {}), **{a: ARGUMENT_TYPES[a] for a in arguments}}
    head = ", ".join(f"${name}: {kind}" for name, kind in declared.items())
    body = ", ".join(f"{name}: ${name}" for name in declared)
    return f"mutation({head}) {{ {mutation}({body}) {{ {selection} }} }}"


# Every token the tests were given, and the prefix of every private message
# text they send: the server's log must show none of them (tests/e2e/conftest.py).
ISSUED_TOKENS: list[str] = []
SECRET_PREFIX = "secret-"


class GraphQLFailure(AssertionError):
    """The response carried GraphQL errors, or a typed refusal."""


@dataclass(frozen=True)
class Person:
    name: str
    id: str
    token: str


class Api:
    """POSTs GraphQL to one server; ``token`` picks the caller."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def raw(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        r = await self.http.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
        )
        assert r.status_code == 200, (r.status_code, r.text)
        body: dict[str, Any] = r.json()
        return body

    async def data(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        body = await self.raw(query, variables, token)
        if body.get("errors"):
            raise GraphQLFailure(body["errors"])
        result: dict[str, Any] = body["data"]
        return result

    async def ok(
        self, field: str, query: str, variables: dict[str, Any], token: str | None = None
    ) -> dict[str, Any]:
        """``data[field]``, failing on errors and on a ``Refusal``."""
        out: dict[str, Any] = (await self.data(query, variables, token))[field]
        if out.get("__typename") == "Refusal":
            raise GraphQLFailure(f"{field} refused: {out}")
        return out

    # ------------------------------------------------------------ operations
    async def new_person(self, name: str) -> Person:
        p = await self.ok("createPlayer", NEW_PLAYER, {"name": name})
        ISSUED_TOKENS.append(p["token"])
        return Person(name, p["player"]["id"], p["token"])

    async def create_game(self, host: Person, **options: Any) -> str:
        change = await self.ok("createGame", CREATE_GAME, {"input": options}, host.token)
        game_id: str = change["gameId"]
        return game_id

    async def join(self, person: Person, game_id: str) -> None:
        await self.ok("joinGame", JOIN_GAME, {"gameId": game_id}, person.token)

    async def leave(self, person: Person, game_id: str) -> None:
        await self.ok("leaveGame", LEAVE_GAME, {"gameId": game_id}, person.token)

    async def add_bot(self, host: Person, game_id: str, strategy: str) -> None:
        await self.ok("addBot", ADD_BOT, {"gameId": game_id, "strategy": strategy}, host.token)

    async def start(self, host: Person, game_id: str) -> None:
        await self.ok("startGame", START_GAME, {"gameId": game_id}, host.token)

    async def game(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        return await self.ok("game", GAME, {"id": game_id}, token)

    async def send_message(self, person: Person, game_id: str, to: int, text: str) -> None:
        await self.ok(
            "sendMessage", SEND_MESSAGE, {"gameId": game_id, "to": to, "text": text}, person.token
        )

    async def events(
        self, game_id: str, token: str | None = None, fields: str = EVENT_FIELDS
    ) -> list[dict[str, Any]]:
        """The whole ``gameEvents`` log as this caller may see it, every page;
        ``fields``: each event's selection (``at`` too, say)."""
        out: list[dict[str, Any]] = []
        after = 0
        while True:
            page = await self.ok(
                "gameEvents",
                EVENTS % fields,
                {"gameId": game_id, "afterSeq": after, "first": 50},
                token,
            )
            out.extend(page["events"])
            if not page["hasMore"]:
                return out
            assert page["lastSeq"] > after, page
            after = page["lastSeq"]

    async def act(self, person: Person, game_id: str, action: dict[str, Any]) -> dict[str, Any]:
        """Send a legal action as listed: ``mutation`` with its ``arguments``."""
        mutation: str = action["mutation"]
        args: dict[str, Any] = action["arguments"]
        query = action_document(mutation, args)
        return await self.ok(mutation, query, {"gameId": game_id, **args}, person.token)


async def metric(
    http: httpx.AsyncClient, name: str, labels: str = "", default: float | None = 0.0
) -> float:
    """One sample of the server's /metrics: ``name`` with exactly ``labels``
    (empty: the unlabelled sample); else ``default`` (None: fail)."""
    r = await http.get("/metrics")
    assert r.status_code == 200, r.text
    key = f"{name}{{{labels}}} " if labels else f"{name} "
    for line in r.text.splitlines():
        if line.startswith(key):
            return float(line.split()[-1])
    assert default is not None, f"no {key.strip()} in /metrics"
    return default
