"""Game mutations are declared once (api/graphql/declared.py, issue #23):
the arguments a declaration takes are the mutation's, and the idempotency
fingerprint is made from the very arguments given, by their GraphQL names."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any

import strawberry
from graphql import GraphQLNonNull, GraphQLObjectType, GraphQLUnionType

from api.fast.core_schema import core_schema
from api.graphql.declared import Run, change
from api.graphql.schema import schema as real_schema
from domain.errors import BadRequest
from domain.records import MutationResult
from domain.services.transaction import Request


@strawberry.enum
class Speed(Enum):
    SLOW = "slow"
    FAST = "fast"


@strawberry.input
class Wish:
    colour: str
    count: int = 1


@dataclass
class Player:
    id: str = "p1"


@dataclass
class Context:
    """What a declared mutation reads of the request's context."""

    deps: object = None
    asked: list[Request] = field(default_factory=list)

    async def require_player(self) -> Player:
        return Player()


@change("A toy change.")
def make_toy(
    game_id: strawberry.ID,
    speed: Speed,
    wish: Wish,
    count: Annotated[int | None, strawberry.argument(description="How many")] = None,
) -> Run:
    async def run(deps: Any, req: Request) -> MutationResult:
        if count == 13:
            raise BadRequest("not 13")
        CONTEXT.asked.append(req)
        return MutationResult(str(game_id), 7, ())

    return run


CONTEXT = Context()


@strawberry.type
class Query:
    ok: bool = True


@strawberry.type
class Mutation:
    make_toy = make_toy


TOY = strawberry.Schema(query=Query, mutation=Mutation)


def _run(document: str) -> dict[str, Any]:
    CONTEXT.asked.clear()
    result = asyncio.run(TOY.execute(document, context_value=CONTEXT))
    assert result.errors is None, result.errors
    assert result.data is not None
    return result.data


def test_a_declaration_is_a_mutation_with_its_arguments_a_key_and_a_version() -> None:
    args = core_schema(TOY).mutation_type.fields["makeToy"].args  # type: ignore[union-attr]
    assert list(args) == ["gameId", "speed", "wish", "count", "idempotencyKey", "expectedVersion"]
    assert args["count"].description == "How many"
    assert isinstance(args["speed"].type, GraphQLNonNull)


def test_the_fingerprint_is_made_of_the_arguments_given_by_their_graphql_names() -> None:
    data = _run(
        'mutation { makeToy(gameId: "g1", speed: FAST, wish: {colour: "red"}, count: 2, '
        'idempotencyKey: "k-1", expectedVersion: 6) { ... on GameChange { version } } }'
    )
    assert data == {"makeToy": {"version": 7}}
    (req,) = CONTEXT.asked
    assert (req.player_id, req.op, req.idempotency_key, req.expected_version) == (
        "p1",
        "makeToy",
        "k-1",
        6,
    )
    assert req.args == {
        "gameId": "g1",
        "speed": "fast",
        "wish": {"colour": "red", "count": 1},
        "count": 2,
    }
    other = _run(
        'mutation { makeToy(gameId: "g1", speed: FAST, wish: {colour: "blue"}, count: 2, '
        'idempotencyKey: "k-1", expectedVersion: 6) { __typename } }'
    )
    assert other == {"makeToy": {"__typename": "GameChange"}}
    assert CONTEXT.asked[0].fingerprint() != req.fingerprint()  # another wish, another print


def test_a_domain_error_is_a_typed_refusal_and_runs_nothing() -> None:
    data = _run(
        'mutation { makeToy(gameId: "g1", speed: SLOW, wish: {colour: "red"}, count: 13) '
        "{ ... on Refusal { code } } }"
    )
    assert data == {"makeToy": {"code": "BAD_INPUT"}}
    assert CONTEXT.asked == []


def test_a_bad_key_is_refused_before_the_declaration_runs() -> None:
    data = _run(
        'mutation { makeToy(gameId: "g1", speed: SLOW, wish: {colour: "red"}, '
        'idempotencyKey: "") { ... on Refusal { code } } }'
    )
    assert data == {"makeToy": {"code": "BAD_INPUT"}}
    assert CONTEXT.asked == []


def test_every_game_mutation_of_the_schema_takes_a_key_and_all_but_four_a_version() -> None:
    mutation = core_schema(real_schema).mutation_type
    assert isinstance(mutation, GraphQLObjectType)
    game_changes = {
        name: f
        for name, f in mutation.fields.items()
        if isinstance(f.type, GraphQLNonNull)
        and isinstance(f.type.of_type, GraphQLUnionType)
        and f.type.of_type.name == "GameChangeResult"
    }
    assert len(game_changes) == 22
    unversioned = {n for n, f in game_changes.items() if "expectedVersion" not in f.args}
    assert unversioned == {"createGame", "quickPlay", "rematch", "joinByInviteCode"}
    assert all(
        list(f.args)[-1] in ("idempotencyKey", "expectedVersion") for f in game_changes.values()
    )
    assert all("idempotencyKey" in f.args for f in game_changes.values())
