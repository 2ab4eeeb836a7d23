"""The cost budget before the expensive work (issue #14, docs/operations.md "Limits"):
length before lexing, shape and cost before validation, query budgets per
token and IP. Each refusal is ``BAD_INPUT`` (or ``RATE_LIMITED`` with
``retryAfter``) and the refused document is never validated."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    parse,
)
from starlette.responses import Response

from api.graphql import limits
from api.graphql.cost import CALLS, LIST_SIZES, ROWS, cost_of, priced
from api.graphql.limits import BASE_COST, Checks, parse_charge, parse_document
from api.graphql.schema import build_schema, schema
from api.graphql.shape import FragmentCycle, shape_of
from domain.game.cards import catalogue
from infra.rate_limit import Limits, LocalLimiter
from tests.api.conftest import Client
from tests.api.test_rate_limits import Clock, codes, context

CATALOG = "cardCatalog { id house value rare }"


def _refusal(result: Any) -> str:
    assert result.data is None
    assert codes(result) == ["BAD_INPUT"], result.errors
    message: str = result.errors[0].message
    return message


async def test_a_document_over_the_length_limit_is_refused_unparsed(client: Client) -> None:
    text = "{ __typename } #" + "x" * limits.MAX_CHARS
    r = await schema.execute(text, context_value=context(client, None))
    assert "characters; the limit is 16,384" in _refusal(r)
    assert text not in limits._documents  # never parsed, so never cached


async def test_the_issue_s_validation_attack_is_refused_by_its_length(client: Client) -> None:
    text = "{ " + "__typename " * 1985 + "x1: __typename }"
    r = await schema.execute(text, context_value=context(client, None))
    assert "characters" in _refusal(r)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{ " + "__typename " * 150 + "}", "pairs of fields"),
        ("{ " + "cardCatalog { house } " * 70 + "}", "pairs of fields"),
        ("{ " + " ".join(f"a{i}: __typename" for i in range(16)) + " }", "16 aliases"),
        # "billion laughs": 10 spreads of the next fragment, 12 deep
        (
            "{ ...F0 } "
            + " ".join(
                f"fragment F{i} on Query {{ " + f"...F{i + 1} " * 10 + "}" for i in range(11)
            )
            + " fragment F11 on Query { __typename }",
            "fields, fragments expanded",
        ),
        ("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "spreads itself"),
    ],
)
async def test_a_document_whose_validation_would_be_costly_is_refused_unvalidated(
    client: Client, text: str, said: str
) -> None:
    checks = Checks()
    document = parse_document(text)
    assert checks.of(document).refusal is not None
    r = await schema.execute(text, context_value=context(client, None))
    assert said in _refusal(r)
    assert checks.of(document).errors is None  # validation never ran


async def test_an_operation_over_the_cost_limit_is_refused(client: Client) -> None:
    aliased = " ".join(f"a{i}: {CATALOG}" for i in range(15))
    r = await schema.execute("{ " + aliased + " }", context_value=context(client, None))
    assert "would complete about 16,800 values; the limit is 10,000" in _refusal(r)
    ok = await schema.execute("{ " + CATALOG + " }", context_value=context(client, None))
    assert ok.errors is None and ok.data
    assert len(ok.data["cardCatalog"]) == len(catalogue())


async def test_queries_are_charged_their_cost_to_the_token_and_the_ip(client: Client) -> None:
    clock = Clock()
    limited = build_schema(
        rate_limiter=LocalLimiter(Limits(query_cost_per_ip=6_000), clock), max_cost=10_000
    )
    ctx = context(client, None)
    one = BASE_COST + cost_of(limited._schema, parse("{ " + CATALOG + " }"), None, {})
    assert 3 * one < 6_000 < 4 * one
    for _ in range(3):  # three fit, the first's parse included; a fourth does not
        r = await limited.execute("{ " + CATALOG + " }", context_value=context(client, None))
        assert r.errors is None
    r = await limited.execute("{ " + CATALOG + " }", context_value=ctx)
    assert codes(r) == ["RATE_LIMITED"] and r.errors
    assert (r.errors[0].extensions or {})["retryAfter"] > 0
    assert isinstance(ctx.response, Response) and ctx.response.headers["Retry-After"]
    other = await limited.execute(
        "{ " + CATALOG + " }", context_value=context(client, None, "10.0.0.2")
    )
    assert other.errors is None  # another IP has its own budget
    clock.now += 60
    r = await limited.execute("{ " + CATALOG + " }", context_value=context(client, None))
    assert r.errors is None


async def test_every_operation_is_charged_its_base_a_mutation_no_more(client: Client) -> None:
    create = 'mutation { createPlayer(name: "base") { __typename } }'
    budget = parse_charge(create) + 2 * BASE_COST + BASE_COST // 2
    limited = build_schema(rate_limiter=LocalLimiter(Limits(query_cost_per_ip=budget), Clock()))
    for _ in range(2):  # the first also pays for its parse
        r = await limited.execute(create, context_value=context(client, None))
        assert r.errors is None
    r = await limited.execute(create, context_value=context(client, None))
    assert codes(r) == ["RATE_LIMITED"]


async def test_refusals_are_charged_too_so_a_flood_of_them_is_cut_off(client: Client) -> None:
    bad = "{ " + "__typename " * 151 + "}"  # unseen: its parse is paid for once
    budget = parse_charge(bad) + 10 * BASE_COST + BASE_COST // 2
    limited = build_schema(rate_limiter=LocalLimiter(Limits(query_cost_per_ip=budget), Clock()))
    seen = []
    for _ in range(12):
        r = await limited.execute(bad, context_value=context(client, None))
        seen.append(codes(r)[0])
    assert seen[:10] == ["BAD_INPUT"] * 10 and seen[10:] == ["RATE_LIMITED"] * 2
    broken = "{ __typename"  # a syntax error: parsed once, then refused from the cache
    r = await limited.execute(broken, context_value=context(client, None, "10.0.0.9"))
    assert codes(r) == ["BAD_INPUT"] and r.errors and "Syntax Error" in r.errors[0].message


def test_cost_counts_values_times_list_sizes() -> None:
    s = schema._schema
    assert cost_of(s, parse("{ __typename }"), None, {}) == 1
    assert cost_of(s, parse("{ " + CATALOG + " }"), None, {}) == len(catalogue()) * 5
    page = '{{ gameEvents(gameId: "g"{}) {{ ... on GameEventPage {{ events {{ seq }} }} }} }}'
    row = 2 + ROWS["GameEventPage.events"]  # each event: its values and its row's read
    call = 1 + CALLS["Query.gameEvents"]  # the field, and its transaction
    assert cost_of(s, parse(page.format(", first: 100")), None, {}) == call + 100 * row
    assert cost_of(s, parse(page.format("")), None, {}) == call + 50 * row  # the default
    by_variable = page.format(", first: $n").replace("{ gameEvents", "query($n: Int!) { gameEvents")
    assert cost_of(s, parse(by_variable), None, {"n": 7}) == call + 7 * row


def test_fragments_on_different_types_are_alternatives() -> None:
    s = schema._schema
    one = '{ gameEvents(gameId: "g", first: 10) { ... on GameEventPage { events { %s } } } }'
    seq = cost_of(s, parse(one % "seq"), None, {})
    both = cost_of(
        s, parse(one % "seq ... on TrickWon { scores } ... on CardPlayed { seat }"), None, {}
    )
    # the dearer type's own fields (TrickWon: a score per seat) once per event
    assert both == seq + 10 * (1 * LIST_SIZES["TrickWon.scores"])


def test_every_list_is_paged_or_has_its_most_items_known() -> None:
    """Issue #22: no unbounded list; the estimate prices each list at its
    real maximum (api/graphql/cost.py LIST_SIZES) or its page size."""
    missing = []
    for name, kind in schema._schema.type_map.items():
        if name.startswith("__") or not isinstance(kind, GraphQLObjectType | GraphQLInterfaceType):
            continue
        for field_name, f in kind.fields.items():
            paged = "first" in f.args or "last" in f.args
            in_a_page = f"{name}.{field_name}" in PAGE_LISTS
            known = f"{name}.{field_name}" in LIST_SIZES
            if _is_list(f.type) and not paged and not in_a_page and not known:
                missing.append(f"{name}.{field_name}")
    assert missing == []
    assert set(LIST_SIZES) <= _all_fields(), "no entry for a field that is gone"


PAGE_LISTS = {
    "GameConnection.edges",
    "GameEventPage.events",
    "BoosterPackConnection.edges",
    "MyGameConnection.edges",
    "InvitationConnection.edges",
    "NotificationPage.notifications",
    "WebhookMessagePage.messages",
    "Leaderboard.standings",
    "ReplayPage.steps",
}
"""Lists inside a page: the paged field hands them its page size."""


def _is_list(kind: GraphQLOutputType) -> bool:
    while isinstance(kind, GraphQLNonNull):
        kind = kind.of_type
    return isinstance(kind, GraphQLList)


def _all_fields() -> set[str]:
    return {
        f"{name}.{field}"
        for name, kind in schema._schema.type_map.items()
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType)
        for field in kind.fields
    }


def test_a_choice_costs_its_dearest_two_lists() -> None:
    """A choice lists one kind's options: at most two of its lists hold
    anything (DISCARD_AND_PLAY), so the others add nothing."""
    s = schema._schema
    game = '{ game(id: "g") { ... on Game { viewer { choices { %s } } } } }'
    one = cost_of(s, parse(game % "cards { id }"), None, {})
    two = cost_of(s, parse(game % "cards { id } discards { id }"), None, {})
    five = cost_of(
        s, parse(game % "cards { id } discards { id } seats messageIds gifts { to }"), None, {}
    )
    assert two > one and five == two


def test_shape_counts_each_fragment_once_and_finds_cycles() -> None:
    shape = shape_of(parse("{ a: __typename ...F ...F } fragment F on Query { b: __typename }"))
    assert shape.aliases == 2 and shape.fields == 3
    with pytest.raises(FragmentCycle):
        shape_of(parse("{ __typename } fragment A on Query { ...A }"))


def test_a_named_fragment_takes_its_page_size_and_variables_their_defaults() -> None:
    s = schema._schema
    inline = '{ gameEvents(gameId: "g", first: 100) { ... on GameEventPage { events { seq } } } }'
    named = (
        '{ gameEvents(gameId: "g", first: 100) { ...P } } '
        "fragment P on GameEventPage { events { seq } }"
    )
    call = 1 + CALLS["Query.gameEvents"]
    page = call + 100 * (2 + ROWS["GameEventPage.events"])
    assert cost_of(s, parse(named), None, {}) == cost_of(s, parse(inline), None, {}) == page
    by_default = (
        'query($n: Int! = 100) { gameEvents(gameId: "g", first: $n) '
        "{ ... on GameEventPage { events { seq } } } }"
    )
    assert cost_of(s, parse(by_default), None, {}) == page
    assert cost_of(s, parse(by_default), None, {"n": 100.0}) == page  # an Int sent as a float
    assert cost_of(s, parse(by_default), None, {"n": 3}) == call + 3 * (
        2 + ROWS["GameEventPage.events"]
    )


def test_every_operation_of_a_document_counts_and_spreads_nest_only_so_deep() -> None:
    fragment = "fragment F on Query { " + " ".join(f"a{i}: __typename" for i in range(10)) + " }"
    many = fragment + " " + " ".join(f"query Q{i} {{ ...F }}" for i in range(30))
    assert shape_of(parse(many)).fields == 30 * 10  # validation walks each operation
    more = fragment + " " + " ".join(f"query Q{i} {{ ...F }}" for i in range(33))
    assert "33 operations" in (Checks().of(parse(more)).refusal or _none()).message
    chain = (
        "{ ...F0 } "
        + " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(40))
        + " fragment F40 on Query { __typename }"
    )
    assert "over 32 deep" in (Checks().of(parse(chain)).refusal or _none()).message


def test_checks_of_a_kept_document_survive_a_flood_of_one_off_documents() -> None:
    checks = Checks()
    popular = parse("{ __typename me { id } }")
    first = checks.of(popular)
    assert checks.of(popular) is first  # asked again: kept
    for i in range(2_000):
        checks.of(parse(f"{{ a{i}: __typename }}"))
    assert checks.of(popular) is first


def _none() -> Any:
    raise AssertionError("no refusal")


def test_a_cost_is_kept_unless_a_variable_sized_a_list() -> None:
    s = schema._schema
    fixed = parse("query($g: ID!) { gameEvents(gameId: $g, first: 9) { __typename } }")
    call = 1 + CALLS["Query.gameEvents"]
    assert (
        priced(s, fixed, None, {"g": "a"})
        == priced(s, fixed, None, {"g": "b"})
        == (
            call + 1,
            False,
        )
    )
    sized = parse(
        'query($n: Int!) { gameEvents(gameId: "g", first: $n) '
        "{ ... on GameEventPage { events { seq } } } }"
    )
    assert priced(s, sized, None, {"n": 5}) == (call + 5 * (2 + ROWS["GameEventPage.events"]), True)
