"""Query and mutation results completed by compiled plans
(api/fast/frames.py, ``SharedFrames.complete_value``) are exactly what
graphql-core's executor completes: random selections over ``Game`` (nested
objects, lists, enums, unions, aliases, repeats, fragments), for every kind
of caller, in a lobby, at several points of a running game and once it is
over; and mutation results, compared through idempotent repeats."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson
import pytest
from graphql import GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType
from hypothesis import given, settings
from hypothesis import strategies as st

from api.fast.frames import SharedFrames
from api.graphql.schema import schema
from tests.api.conftest import Client
from tests.api.support import game, new_game, players, send_action, start
from tests.fakes import harness
from tests.property.budget import examples

SKIP = {"seats"}  # async, reads the players: never compiled (tested apart below)


@contextlib.contextmanager
def executor_only() -> Iterator[None]:
    """Every root completed by graphql-core's executor, as before the plans."""
    original = SharedFrames._root_completion
    SharedFrames._root_completion = lambda *_: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        SharedFrames._root_completion = original  # type: ignore[method-assign]


def _named(kind: Any) -> Any:
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    return kind


def _object(name: str) -> GraphQLObjectType:
    found = schema._schema.get_type(name)
    assert isinstance(found, GraphQLObjectType)
    return found


@st.composite
def _selection(draw: st.DrawFn, kind: GraphQLObjectType, depth: int) -> str:
    names = [n for n, f in kind.fields.items() if n not in SKIP and not f.args]
    picked = draw(st.lists(st.sampled_from(names), min_size=1, max_size=7))
    parts = []
    for name in picked:
        alias = draw(st.none() | st.sampled_from(["a", "b", name]))
        head = f"{alias}: {name}" if alias else name
        inner = _named(kind.fields[name].type)
        if isinstance(inner, GraphQLObjectType):
            if depth >= 3:
                continue
            head += " { " + draw(_selection(inner, depth + 1)) + " }"
        elif isinstance(inner, GraphQLInterfaceType):
            continue
        parts.append(head)
    if draw(st.booleans()):
        parts.append("__typename")
    return " ".join(parts) or "__typename"


@st.composite
def _document(draw: st.DrawFn) -> str:
    body = draw(_selection(_object("Game"), 0))
    if draw(st.booleans()):
        on_game = f"...G fragment G on Game {{ {body} }}"
        head, fragment = on_game.split(" fragment ", 1)
        return (
            "query($id: ID!) { game(id: $id) { __typename ... on Refusal { code } "
            f"{head} }} }} fragment {fragment}"
        )
    return (
        "query($id: ID!) { game(id: $id) { __typename ... on Refusal { code message } "
        f"... on Game {{ {body} }} }} }}"
    )


STAGES = (0, 7, 25, 10_000)  # started, running, running further, over
GAME_COUNT = 1 + len(STAGES) + 1  # a lobby, the started ones, one that does not exist
CALLER_COUNT = 1 + 4  # nobody, and four players


class World(NamedTuple):
    """Games at several stages and callers of every kind."""

    client: Client
    games: list[str]
    callers: list[str | None]  # None: nobody signed in


async def _world() -> World:
    c = Client(harness())
    tokens = await players(c, CALLER_COUNT - 1)
    games = [await new_game(c, tokens[0], seatCount=3)]  # a lobby
    for moves in STAGES:
        gid = await start(c, tokens[:3])
        for _ in range(moves):
            table = (await game(c, None, gid))["table"]
            if table["outcome"] is not None:
                break
            token = tokens[table["toAct"]]
            action = (await game(c, token, gid))["viewer"]["legalActions"][0]
            await send_action(c, token, gid, action)
        games.append(gid)
    games.append("no-such-game")
    assert len(games) == GAME_COUNT
    return World(c, games, [None, *tokens])


@pytest.fixture(scope="module")
def world() -> World:
    """Built once per worker that runs one of the module's tests, not at
    collection (every pytest-xdist worker collects the module)."""
    return asyncio.run(_world())


async def _both(
    client: Client, text: str, variables: dict[str, Any], token: str | None
) -> tuple[bytes, bytes]:
    def run() -> Any:
        return client.schema.execute(
            text, variable_values=variables, context_value=client.context(token)
        )

    planned = await run()
    with executor_only():
        executed = await run()
    return (
        orjson.dumps([planned.data, [e.formatted for e in planned.errors or []]]),
        orjson.dumps([executed.data, [e.formatted for e in executed.errors or []]]),
    )


@settings(max_examples=examples(200), deadline=None)
@given(
    text=_document(),
    game_index=st.integers(0, GAME_COUNT - 1),
    caller=st.integers(0, CALLER_COUNT - 1),
)
def test_a_game_query_completes_as_the_executor_completes_it(
    world: World, text: str, game_index: int, caller: int
) -> None:
    variables = {"id": world.games[game_index]}
    planned, executed = asyncio.run(_both(world.client, text, variables, world.callers[caller]))
    assert planned == executed


def test_the_plans_are_used(world: World) -> None:
    """The common selections are compiled (not everything left to the
    executor, which would make the comparison above say nothing)."""
    text = (
        "query($id: ID!) { game(id: $id) { ... on Game { id viewer { seat "
        "choices { kind cards { id house } } } table { toAct phase } } } }"
    )
    calls: list[object] = []
    original = SharedFrames._root_completion

    def spy(self: SharedFrames, *args: Any) -> Any:
        plan = original(self, *args)
        calls.append(plan)
        return plan

    SharedFrames._root_completion = spy  # type: ignore[method-assign,assignment]
    try:
        variables = {"id": world.games[2]}
        planned, executed = asyncio.run(_both(world.client, text, variables, world.callers[1]))
    finally:
        SharedFrames._root_completion = original  # type: ignore[method-assign]
    assert calls and all(p is not None for p in calls)
    assert planned == executed and b'"choices"' in planned


def test_seats_are_left_to_the_executor_and_agree(world: World) -> None:
    text = "query($id: ID!) { game(id: $id) { ... on Game { id seats { seat playerName } } } }"
    planned, executed = asyncio.run(_both(world.client, text, {"id": world.games[2]}, None))
    assert planned == executed and b"playerName" in planned


def test_a_move_result_completes_as_the_executor_completes_it(world: World) -> None:
    """The same move sent twice with one idempotency key: the first result
    completed by the plan, the repeat (the stored result) by the executor."""

    async def go() -> tuple[bytes, bytes]:
        gid = world.games[2]
        table = (await game(world.client, None, gid))["table"]
        token = world.callers[1 + table["toAct"]]
        assert token is not None
        g = await game(world.client, token, gid)
        action = g["viewer"]["legalActions"][0]
        args = {"gameId": gid, **action["arguments"], "idempotencyKey": "root-plan-1"}
        decl = ", ".join(f"${k}: {t}" for k, t in _arg_types(action["mutation"], args).items())
        call = ", ".join(f"{k}: ${k}" for k in args)
        text = (
            f"mutation({decl}) {{ r: {action['mutation']}({call}) {{ __typename "
            "... on Refusal { code } ... on GameChange { id version gameId "
            "events { __typename seq ... on CardPlayed { seat card { id house value } } "
            "... on ActionRequired { seat phase } } "
            "game { id version viewer { seat hand { id } } table { toAct } } } } }"
        )
        return await _both(world.client, text, args, token)

    planned, executed = asyncio.run(go())
    assert planned == executed and b"GameChange" in planned


def _arg_types(mutation: str, args: dict[str, Any]) -> dict[str, str]:
    root = schema._schema.mutation_type
    assert root is not None
    field = root.fields[mutation]
    return {name: str(field.args[name].type) for name in args}


def test_refused_moves_and_bad_ids_agree(world: World) -> None:
    async def go() -> tuple[bytes, bytes]:
        text = (
            "mutation($g: ID!) { r: startGame(gameId: $g) { __typename ... on Refusal { code } } }"
        )
        return await _both(world.client, text, {"g": world.games[2]}, world.callers[1])

    planned, executed = asyncio.run(go())
    assert planned == executed and b"Refusal" in planned
