"""Rate limits at the schema (api.graphql.rate_limits): mutations and
subscription starts over budget are refused with ``RATE_LIMITED`` and
``extensions.retryAfter``, and nothing runs; queries are not limited."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from api.graphql.context import Context
from api.graphql.rate_limits import LocalRateLimits, RateLimits
from api.graphql.schema import build_schema
from infra.rate_limit import Limits, LocalLimiter
from infra.settings import Settings
from tests.api.conftest import Client
from tests.api.support import mark, new_game, started


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def limited(**limits: int) -> tuple[Any, Clock]:
    clock = Clock()
    return build_schema(rate_limiter=LocalLimiter(Limits(**limits), clock)), clock


def context(client: Client, token: str | None, ip: str = "10.0.0.1") -> Context:
    headers = [] if token is None else [(b"authorization", f"Bearer {token}".encode())]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers, "client": (ip, 1)}
    return Context(client.h.deps, Settings(), Request(scope), Response())


def codes(result: Any) -> list[str]:
    return [e.extensions["code"] for e in result.errors or []]


CREATE = 'mutation { createPlayer(name: "x") { __typename } }'
JOIN = (
    "mutation($g: ID!) { joinGame(gameId: $g) { __typename ... on Refusal { code message } "
    "... on GameChange { version gameId events { __typename seq } } } }"
)


async def test_a_token_over_its_budget_is_rate_limited_and_nothing_changes(
    client: Client,
) -> None:
    schema, clock = limited(mutations_per_token=2)
    host, _ = await client.new_player("host")
    game_id = await new_game(client, host)
    joiner, _ = await client.new_player("joiner")
    ctx = context(client, joiner)
    for _ in range(2):  # joins (the second is refused by the rules, but costs)
        r = await schema.execute(JOIN, variable_values={"g": game_id}, context_value=ctx)
        assert r.errors is None, r.errors
    before = mark(client, game_id)
    ctx = context(client, joiner)
    r = await schema.execute(JOIN, variable_values={"g": game_id}, context_value=ctx)
    assert codes(r) == ["RATE_LIMITED"] and r.data is None
    assert r.errors[0].extensions["retryAfter"] == 30.0  # 2 a minute
    assert "retry in 30 s" in r.errors[0].message
    assert isinstance(ctx.response, Response) and ctx.response.headers["Retry-After"] == "30"
    assert mark(client, game_id) == before
    other, _ = await client.new_player("other")  # another token, same IP: its own budget
    r = await schema.execute(
        JOIN, variable_values={"g": game_id}, context_value=context(client, other)
    )
    assert r.errors is None
    clock.now += 30
    r = await schema.execute(JOIN, variable_values={"g": game_id}, context_value=ctx)
    assert r.errors is None


async def test_anonymous_callers_are_limited_by_ip(client: Client) -> None:
    schema, _ = limited(mutations_per_ip=3, mutations_per_token=100)
    for _ in range(3):
        r = await schema.execute(CREATE, context_value=context(client, None, "10.0.0.7"))
        assert r.errors is None
    r = await schema.execute(CREATE, context_value=context(client, None, "10.0.0.7"))
    assert codes(r) == ["RATE_LIMITED"] and r.errors[0].extensions["retryAfter"] == 20.0
    assert len(client.h.store.players) == 3
    r = await schema.execute(CREATE, context_value=context(client, None, "10.0.0.8"))
    assert r.errors is None and len(client.h.store.players) == 4


async def test_each_aliased_mutation_costs_one(client: Client) -> None:
    schema, _ = limited(mutations_per_ip=5)
    four = (
        'mutation { ...F a: createPlayer(name: "a") { __typename } '
        'b: createPlayer(name: "b") { __typename } '
        '... on Mutation { c: createPlayer(name: "c") { __typename } } __typename } '
        'fragment F on Mutation { d: createPlayer(name: "d") { __typename } }'
    )
    r = await schema.execute(four, context_value=context(client, None))
    assert r.errors is None and len(client.h.store.players) == 4
    r = await schema.execute(four, context_value=context(client, None))
    assert codes(r) == ["RATE_LIMITED"] and len(client.h.store.players) == 4
    r = await schema.execute(CREATE, context_value=context(client, None))
    assert r.errors is None and len(client.h.store.players) == 5


async def test_queries_are_not_limited(client: Client) -> None:
    schema, _ = limited(mutations_per_ip=1, mutations_per_token=1, subscriptions_per_ip=1)
    token, _ = await client.new_player()
    for _ in range(20):
        r = await schema.execute("{ me { player { id } } }", context_value=context(client, token))
        assert r.errors is None


async def test_subscription_starts_are_limited(client: Client) -> None:
    schema, _ = limited(subscriptions_per_token=2, subscriptions_per_ip=100)
    game_id, tokens = await started(client, 3)
    query = "subscription($g: ID!) { gameEvents(gameId: $g) { seq } }"
    for _ in range(2):
        stream = await schema.subscribe(
            query, variable_values={"g": game_id}, context_value=context(client, tokens[0])
        )
        first = await anext(stream)
        assert first.errors is None and first.data["gameEvents"]["seq"] == 1
        await stream.aclose()
    stream = await schema.subscribe(
        query, variable_values={"g": game_id}, context_value=context(client, tokens[0])
    )
    refused = await anext(stream)
    assert codes(refused) == ["RATE_LIMITED"] and refused.errors[0].extensions["retryAfter"] > 0
    await stream.aclose()
    r = await schema.subscribe(  # a spectator: the IP's budget only
        query, variable_values={"g": game_id}, context_value=context(client, None)
    )
    assert (await anext(r)).errors is None
    await r.aclose()


def test_without_limits_the_schema_has_no_rate_limit_extension() -> None:
    def factories(schema: Any) -> list[Any]:
        return [getattr(f, "func", f) for f in schema.extensions]

    assert not {RateLimits, LocalRateLimits} & set(factories(build_schema()))
    limiter = LocalLimiter(Limits(mutations_per_ip=1))
    assert LocalRateLimits in factories(build_schema(rate_limiter=limiter))


class BrokenLimiter(LocalLimiter):
    """A limiter whose check fails (a bug, a lost connection)."""

    def check_now(self, *_: Any) -> float:
        raise RuntimeError("secret detail of the failure")


async def test_a_failing_limiter_lets_the_request_through_and_leaks_nothing(
    client: Client,
) -> None:
    schema = build_schema(rate_limiter=BrokenLimiter(Limits(mutations_per_token=1)))
    result = await schema.execute(CREATE, context_value=context(client, None))
    assert result.errors is None, result.errors
    assert result.data == {"createPlayer": {"__typename": "NewPlayer"}}


async def test_a_service_keys_calls_have_their_own_budget(client: Client) -> None:
    """Issue #24: each root field of a service key's operations (queries too)
    counts against MMK_RATE_SERVICE_KEY_CALLS, not a player's budgets; over
    it, RATE_LIMITED and nothing runs; a player's mutations go on."""
    from domain.services.service_keys import create_service_key

    schema, clock = limited(service_calls_per_key=3, mutations_per_token=100)
    key = await create_service_key(client.h.deps, "backend", ["players:write", "players:read"])
    ctx = context(client, key.secret)
    issue = 'mutation { a: issuePlayerToken(externalId: "u1", name: "Ann") { __typename } }'
    look = '{ playerByExternalId(externalId: "u1") { __typename } }'
    assert codes(await schema.execute(issue, context_value=ctx)) == []
    two = 'mutation { a: issuePlayerToken(externalId: "u2", name: "B") { __typename } '
    two += 'b: issuePlayerToken(externalId: "u3", name: "C") { __typename } }'
    assert codes(await schema.execute(two, context_value=ctx)) == []
    players = len(client.h.store.players)
    refused = await schema.execute(look, context_value=ctx)
    assert codes(refused) == ["RATE_LIMITED"] and refused.data is None
    refused = await schema.execute(issue.replace("u1", "u4"), context_value=ctx)
    assert codes(refused) == ["RATE_LIMITED"] and len(client.h.store.players) == players
    ann, _ = await client.new_player("ann")
    assert codes(await schema.execute(CREATE, context_value=context(client, ann))) == []
    clock.now += 60  # a minute later, the budget is back
    assert codes(await schema.execute(look, context_value=ctx)) == []
