"""schemathesis against the real app, in process (docs/operations.md "Fuzzing"): every
query and mutation, valid and invalid documents, as anonymous, as two real
players and with bad tokens, aimed at real games, cards and messages. Zero
server errors: :func:`tests.fuzz.support.no_server_error` says what counts."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import graphql
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.python import asgi
from schemathesis.specs.graphql.scalars import CUSTOM_SCALARS
from schemathesis.specs.graphql.schemas import GraphQLSchema
from schemathesis.specs.openapi.checks import response_schema_conformance

from api.app import create_app
from api.graphql.schema import schema as strawberry_schema
from infra.settings import Settings
from tests.fuzz.support import (
    EXAMPLES,
    PLAYERS,
    ErrorLogs,
    World,
    build_world,
    no_server_error,
)

_SDL = graphql.build_schema(strawberry_schema.as_str())
OPERATIONS = [
    f"{root.name}.{name}"
    for root in (_SDL.query_type, _SDL.mutation_type)
    if root is not None
    for name in root.fields
]
# Players most of the time, so that authenticated paths are what gets fuzzed.
CALLERS = ("host", "host", "host", "guest", "guest", "anonymous", "unknown-token", "bad-scheme")
CHECKS = [no_server_error, response_schema_conformance]
# These end the caller's token: a player made for the one example calls
# them, so that the world's players keep theirs for the other operations.
TOKEN_ENDING = frozenset({"Mutation.rotateToken", "Mutation.revokeToken"})
SPARE = "spare"
# [decision] Rate limits stay on (the limiter sees every fuzzed document) but
# so high that the fuzzer's thousands of moves a minute from one address are
# not drowned in RATE_LIMITED refusals.
UNTHROTTLED = {
    **{
        f"MMK_RATE_{kind}_{who}": "1000000"
        for kind in ("MUTATIONS", "SUBSCRIPTIONS")
        for who in ("TOKEN", "IP")
    },
    "MMK_RATE_QUERY_COST_TOKEN": str(10**12),
    "MMK_RATE_QUERY_COST_IP": str(10**12),
    # ...and no per-player caps: the world's one host makes its games all
    # along (the caps have tests of their own, docs/decisions/0051)
    "MMK_MAX_OPEN_GAMES": "0",
    "MMK_MAX_QUICK_PLAY_WAITS": "0",
    "MMK_BOOSTER_PACKS_PER_DAY": "0",
}


@dataclass
class Fuzz:
    schema: GraphQLSchema
    world: World
    logs: ErrorLogs
    calls: Counter[str] = field(default_factory=Counter)


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    """The app as ``mmk serve`` runs it by default (SQLite file, in-process
    bus), its schema introspected by schemathesis, which runs its lifespan."""
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.sqlite3"
    app = create_app(Settings.from_env({"DATABASE_URL": f"sqlite:///{path}", **UNTHROTTLED}))
    logs = ErrorLogs()
    logging.getLogger().addHandler(logs)
    try:
        schema = schemathesis.graphql.from_asgi("/graphql", app)
        world = build_world(app)
        schemathesis.graphql.scalar("ID", world.id_values())
        yield Fuzz(schema, world, logs)
    finally:
        CUSTOM_SCALARS.pop("ID", None)
        logging.getLogger().removeHandler(logs)
        asgi.shutdown_lifespans()


def test_every_operation_is_fuzzed(fuzz: Fuzz) -> None:
    live = {r.ok().label for r in fuzz.schema.get_all_operations() if isinstance(r, Ok)}
    assert set(OPERATIONS) == live
    assert len(OPERATIONS) == 54  # gameReplay and featuredGames (#27)


@pytest.mark.parametrize("label", OPERATIONS)
def test_no_server_error(fuzz: Fuzz, label: str) -> None:
    fuzz_operation(fuzz, label)


def fuzz_operation(fuzz: Fuzz, label: str) -> None:
    """Fuzz one operation (EXAMPLES documents) and count it as fuzzed."""
    operation = fuzz.schema.find_operation_by_label(label)
    assert operation is not None
    cases = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=cases, caller=st.sampled_from(CALLERS), data=st.data())
    def run(case: schemathesis.Case[Any], caller: str, data: st.DataObject) -> None:
        if label in TOKEN_ENDING and caller in PLAYERS:
            fuzz.world.create_player(SPARE)
            caller = SPARE
        if case.meta is not None and case.meta.generation.mode.is_positive:
            assert isinstance(case.body, str)
            case.body = fuzz.world.aim(case.body, caller, data)
        case.call_and_validate(headers=fuzz.world.headers(caller), checks=CHECKS)
        assert fuzz.logs.take() == []
        fuzz.world.refresh()

    run()
    fuzz.calls[label] += 1


def test_the_fuzz_made_moves(fuzz: Fuzz) -> None:
    """The fuzzing above was not all refusals: real moves went through (this
    reads the app's counter of accepted mutations). pytest-xdist may have run
    some of them on another worker (another app): those are fuzzed here too."""
    for label in OPERATIONS:
        if label not in fuzz.calls:
            fuzz_operation(fuzz, label)
    assert set(fuzz.calls) == set(OPERATIONS)
    text = fuzz.world.client.get("/metrics").text
    accepted = {
        s.labels["mutation"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mmk_moves_accepted_total"
    }
    assert accepted.get("playCard", 0) >= 1, accepted
    # Beyond the set-up's own: 2 players, 3 games, 2 bots, 1 start, 1 join.
    assert sum(accepted.values()) > 9 + 5, accepted
