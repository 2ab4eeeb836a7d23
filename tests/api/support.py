"""Operations and helpers shared by the schema-level tests: operation texts
built from the schema itself, game set-up through the API, and store marks
for "nothing changed" checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from graphql import (
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLType,
)

from api.graphql.schema import schema
from domain.game.state import GameState
from infra.db.state_codec import encode
from tests.api.conftest import Client


def _named(t: GraphQLType) -> GraphQLNamedType:
    while isinstance(t, GraphQLNonNull | GraphQLList):
        t = t.of_type
    assert isinstance(t, GraphQLNamedType)
    return t


def _selection(t: GraphQLObjectType, skip: frozenset[str] = frozenset()) -> str:
    """Every field of ``t`` (objects: every field of theirs, recursively)."""
    parts = []
    for name, field in t.fields.items():
        if name in skip or field.deprecation_reason:
            continue
        inner = _named(field.type)
        if isinstance(inner, GraphQLObjectType):
            parts.append(f"{name} {{ {_selection(inner)} }}")
        else:
            parts.append(name)
    return " ".join(parts)


def _typed_events() -> str:
    """A fragment on every event type selecting every typed field."""
    interface = schema._schema.get_type("GameEvent")
    assert isinstance(interface, GraphQLInterfaceType)
    kinds = schema._schema.get_possible_types(interface)
    common = frozenset(interface.fields)
    return " ".join(f"... on {k.name} {{ {_selection(k, common)} }}" for k in kinds)


TYPED_EVENTS = _typed_events()
"""Every typed field of every kind of event (built from the schema)."""
EVENT = f"__typename gameId seq at type data {TYPED_EVENTS}"
"""An event as a test selects it: every field."""

CHANGE = (
    "__typename ... on Refusal { code message } "
    f"... on GameChange {{ version gameId events {{ {EVENT} }} }}"
)

CARD = "id kind house value rare"

GAME_FIELDS = f"""
  id status hostId seatCount version lastSeq ratSeat createdAt practice seedCommitment
  deadline
  seats {{ seat playerId playerName bot bankSeconds left }}
  options {{ format abilityTrigger refillHands turnSeconds bankSeconds timeoutsToTakeover }}
  table {{
    phase toAct ratSeat ratDeckSize prizePoolSize
    seats {{ seat house isRat handSize score won {{ id }} prizes {{ id }} }}
    trick {{
      number leader leadSuit trump sleepy sassy passes skipped prize {{ {CARD} }}
      plays {{
        __typename
        ... on FaceUpPlay {{ seat value card {{ {CARD} }} secondCard {{ id }} }}
        ... on FaceDownPlay {{ seat hasSecondCard }}
      }}
    }}
    pending {{ kind seat source }}
    discard {{ id }}
    messages {{ id messageId trick fromSeat toSeat status }}
    outcome {{ termination winners disqualified scores }}
  }}
  viewer {{
    seat messageTargets
    hand {{ {CARD} }}
    faceDownPlays {{ card {{ id }} secondCard {{ id }} }}
    decisionCards {{ id }}
    messages {{ id messageId trick fromSeat toSeat status text }}
    legalActions {{
      kind mutation arguments card discard seat cards messageId gifts {{ to card }}
    }}
    choices {{
      kind mutation cards {{ id }} discards {{ id }} seats giftCount messageIds
      gifts {{ to cards {{ id }} }}
    }}
  }}
"""

GAME = (
    "query($id: ID!) { game(id: $id) { __typename ... on Refusal { code message } "
    f"... on Game {{ {GAME_FIELDS} }} }} }}"
)


def mutation_text(name: str, arg_names: Iterable[str]) -> str:
    """The operation for mutation ``name`` with the named arguments as
    variables, typed from the schema (so a listed action is sent as is)."""
    field = schema._schema.mutation_type.fields[name]  # type: ignore[union-attr]
    names = list(arg_names)
    decl = ", ".join(f"${a}: {field.args[a].type}" for a in names)
    call = ", ".join(f"{a}: ${a}" for a in names)
    head = f"mutation({decl})" if names else "mutation"
    args = f"({call})" if names else ""
    selection = CHANGE
    if name == "createPlayer":
        selection = (
            "__typename ... on Refusal { code message } "
            "... on NewPlayer { token player { id name } }"
        )
    elif name == "rotateToken":
        selection = (
            "__typename ... on Refusal { code message } ... on NewToken { token player { id } }"
        )
    elif name == "revokeToken":
        selection = (
            "__typename ... on Refusal { code message } ... on TokenRevoked { player { id } }"
        )
    elif name == "issuePlayerToken":
        selection = (
            "__typename ... on Refusal { code message } "
            "... on IssuedPlayerToken { token created player { id } }"
        )
    elif name == "createSession":
        selection = (
            "__typename ... on Refusal { code message } "
            "... on NewSession { token session { id label current } }"
        )
    elif name == "revokeSession":
        selection = "__typename ... on Refusal { code message } ... on SessionRevoked { sessionId }"
    elif name in ("linkIdentity", "updateProfile"):
        selection = "__typename ... on Refusal { code message } ... on Player { id name }"
    elif name == "markNotificationsRead":
        selection = (
            "__typename ... on Refusal { code message } ... on NotificationsRead { upToSeq marked }"
        )
    elif "Webhook" in name or name == "updateNotificationSettings":
        selection = "__typename ... on Refusal { code message }"
    elif name == "openBoosterPack":
        selection = (
            "__typename ... on Refusal { code message } "
            f"... on BoosterPack {{ id gameId house commons {{ {CARD} }} rares {{ {CARD} }} }}"
        )
    return f"{head} {{ r: {name}{args} {{ {selection} }} }}"


async def call(client: Client, token: str | None, name: str, /, **args: Any) -> dict[str, Any]:
    """Run mutation ``name``; its result union member (GraphQL errors fail)."""
    data = await client.run(mutation_text(name, args), token, **args)
    result: dict[str, Any] = data["r"]
    return result


async def ok(client: Client, token: str | None, name: str, /, **args: Any) -> dict[str, Any]:
    r = await call(client, token, name, **args)
    assert r["__typename"] != "Refusal", r
    return r


async def refused(client: Client, token: str | None, name: str, code: str, /, **args: Any) -> str:
    """Mutation ``name`` is refused with ``code``; returns the message."""
    r = await call(client, token, name, **args)
    assert r["__typename"] == "Refusal", r
    assert r["code"] == code, r
    assert r["message"]
    message: str = r["message"]
    return message


async def errors_of(client: Client, token: str | None, name: str, /, **args: Any) -> list[Any]:
    """Mutation ``name`` fails with GraphQL errors; returns them formatted."""
    return await client.errors(mutation_text(name, args), token, **args)


async def game(client: Client, token: str | None, game_id: str) -> dict[str, Any]:
    data = await client.run(GAME, token, id=game_id)
    g: dict[str, Any] = data["game"]
    assert g["__typename"] == "Game", g
    return g


async def new_game(client: Client, token: str, **input: Any) -> str:
    r = await ok(
        client, token, "createGame", input={"seatCount": 3, "seed": "s1", "practice": True, **input}
    )
    game_id: str = r["gameId"]
    return game_id


async def players(client: Client, n: int) -> list[str]:
    return [(await client.new_player(f"p{i}"))[0] for i in range(n)]


async def start(client: Client, tokens: list[str], bots: Iterable[str] = (), **input: Any) -> str:
    """A started game: the tokens' players at seats 0.. (the first is the
    host), then the bots."""
    bots = list(bots)
    game_id = await new_game(client, tokens[0], seatCount=len(tokens) + len(bots), **input)
    for t in tokens[1:]:
        await ok(client, t, "joinGame", gameId=game_id)
    for strategy in bots:
        await ok(client, tokens[0], "addBot", gameId=game_id, strategy=strategy)
    await ok(client, tokens[0], "startGame", gameId=game_id)
    return game_id


async def started(
    client: Client, people: int = 3, bots: Iterable[str] = (), **input: Any
) -> tuple[str, list[str]]:
    """A started game of ``people`` new players (token i sits at seat i)."""
    tokens = await players(client, people)
    return await start(client, tokens, bots, **input), tokens


async def seeded(
    client: Client, tokens: list[str], fits: Callable[[GameState], bool], **input: Any
) -> str:
    """A started game whose first state ``fits``: tries seeds in turn."""
    for i in range(200):
        game_id = await start(client, tokens, seed=f"seed-{i}", **input)
        state = client.h.store.games[game_id].state
        assert state is not None
        if fits(state):
            return game_id
    raise AssertionError("no seed gives such a game")


async def play_to_end(client: Client, game_id: str, tokens: list[str | None]) -> int:
    """Every seat ``table.toAct`` names sends its first listed action until
    the game is over (bot seats: ``None``, driven by the harness)."""
    for step in range(2_000):
        await client.h.drain()
        table = (await game(client, None, game_id))["table"]
        if table["outcome"] is not None:
            return step
        token = tokens[table["toAct"]]
        assert token is not None, "a bot did not move"
        action = (await game(client, token, game_id))["viewer"]["legalActions"][0]
        assert (await send_action(client, token, game_id, action))["__typename"] == "GameChange"
    raise AssertionError("the game did not end")


async def send_action(
    client: Client, token: str, game_id: str, action: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    """Send a listed legal action as is: its mutation, its arguments."""
    return await call(
        client, token, action["mutation"], gameId=game_id, **action["arguments"], **extra
    )


def mark(client: Client, game_id: str) -> tuple[Any, ...]:
    """What the store holds of a game: equal marks mean nothing changed."""
    store = client.h.store
    g = store.games[game_id]
    state = None if g.state is None else encode(g.state)
    events = sorted(s for (gid, s) in store.events if gid == game_id)
    return g.version, g.last_seq, g.status, list(g.seats), state, events, len(store.keys)


def hands(client: Client, game_id: str) -> list[list[str]]:
    """Every seat's hand as the store holds it."""
    state = client.h.store.games[game_id].state
    assert state is not None
    return [list(s.hand) for s in state.seats]


def strings(value: Any) -> set[str]:
    """Every string anywhere in a JSON value (keys excluded)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value)) if value else set()
    return set()


def seat_of(g: dict[str, Any], player_id: str) -> int:
    seat: int = next(s["seat"] for s in g["seats"] if s["playerId"] == player_id)
    return seat
