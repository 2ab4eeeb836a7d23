"""``GET /metrics`` through the real app: the numbers exist and move."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from infra.metrics import Metrics
from tests.adapters.app_support import (
    AsgiWebSocket,
    eventually,
    gql,
    metric,
    new_game,
    new_player,
    play_first_card,
    running_app,
)

NAMES = {
    "mmk_moves_accepted",
    "mmk_refusals",
    "mmk_subscriptions_active",
    "mmk_http_request_duration_seconds",
    "mmk_graphql_operation_duration_seconds",
    "mmk_events_published",
    "mmk_bus_reconnects",
    "mmk_bus_publish_failures",
    "mmk_bus_dropped_subscribers",
    "mmk_bus_subscribers",
    "mmk_webhook_attempts",
    "mmk_webhook_endpoints_disabled",
    "mmk_webhook_attempts_in_flight",
    "process_cpu_seconds",
}


async def test_metrics_are_served_in_the_prometheus_text_format(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        r = await client.get("/metrics")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/plain; version=")
        names = {f.name for f in text_string_to_metric_families(r.text)}
        assert names >= NAMES, NAMES - names
        assert await metric(client, "mmk_bus_reconnects_total") == 0
        assert await metric(client, "mmk_webhook_attempts_total", status="DELIVERED") == 0


async def test_a_move_counts_by_mutation_and_its_events_are_published(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        assert await metric(client, "mmk_events_published_total") == 0
        await play_first_card(client)
        moves = "mmk_moves_accepted_total"
        assert await metric(client, moves, mutation="playCard") == 1
        assert await metric(client, moves, mutation="addBot") == 2
        assert await metric(client, moves, mutation="createPlayer") == 1
        assert (
            await metric(client, moves) == 6
        )  # createPlayer createGame addBot*2 startGame playCard
        assert await metric(client, "mmk_events_published_total") > 0
        assert await metric(client, "mmk_refusals_total") == 0


async def test_only_result_unions_count_as_moves(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        r = await client.post("/graphql", json={"query": "mutation { __typename }"})
        assert r.json()["data"] == {"__typename": "Mutation"}
        assert await metric(client, "mmk_moves_accepted_total") == 0


async def test_latency_is_measured_per_route_and_per_operation_type(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        await play_first_card(client)
        await client.get("/healthz")
        await client.get("/nowhere")
        await client.request("BREW", "/graphql")
        http = "mmk_http_request_duration_seconds_count"
        assert await metric(client, http, route="/graphql", method="POST") == 7
        assert await metric(client, http, route="/healthz", method="GET") == 1
        assert await metric(client, http, route="unmatched", method="GET") == 1  # not the path
        assert await metric(client, http, route="/graphql", method="OTHER") == 1  # bounded
        op = "mmk_graphql_operation_duration_seconds_count"
        assert await metric(client, op, operation="mutation") == 6
        assert await metric(client, op, operation="query") == 1


async def test_a_streamed_subscription_is_not_a_latency_sample(tmp_path: Path) -> None:
    """An HTTP stream lasts as long as its subscription: like a WebSocket
    session it stays out of the latency histogram (api/middleware.py)."""
    async with running_app(tmp_path) as (_, client):
        http = "mmk_http_request_duration_seconds_count"
        before = await metric(client, http, route="/graphql", method="POST")
        query = "subscription($g: ID!) { gameEvents(gameId: $g, afterSeq: 1) { seq } }"
        for accept in ("text/event-stream", "multipart/mixed;subscriptionSpec=1.0"):
            # A stream that ends at once (an error), so that httpx has it whole.
            body = {"query": query, "variables": {"g": "no-such-game"}}
            r = await client.post("/graphql", json=body, headers={"accept": accept})
            assert r.status_code == 200 and "NOT_FOUND" in r.text
        assert await metric(client, http, route="/graphql", method="POST") == before
        await gql(client, "{ __typename }")
        assert await metric(client, http, route="/graphql", method="POST") == before + 1


async def test_refusals_count_by_code_typed_results_and_errors_alike(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (_, client):
        token = await new_player(client)
        join = 'mutation { joinGame(gameId: "nope") { ... on Refusal { code } } }'
        assert (await gql(client, join, token))["data"]["joinGame"]["code"] == "NOT_FOUND"
        errors = (await gql(client, join))["errors"]  # no token: a GraphQL error
        assert errors[0]["extensions"]["code"] == "UNAUTHENTICATED"
        await gql(client, "{ nope")  # a syntax error
        refusals = "mmk_refusals_total"
        assert await metric(client, refusals, code="NOT_FOUND", kind="refusal") == 1
        assert await metric(client, refusals, code="UNAUTHENTICATED", kind="error") == 1
        assert await metric(client, refusals, code="BAD_INPUT", kind="error") == 1
        assert await metric(client, "mmk_moves_accepted_total", mutation="joinGame") == 0


async def test_open_subscriptions_show_in_the_gauge_until_closed(tmp_path: Path) -> None:
    active = "mmk_subscriptions_active"
    async with running_app(tmp_path) as (app, client):
        token = await new_player(client)
        game = await new_game(client, token)
        async with AsgiWebSocket(app) as ws:
            assert any(name == b"x-request-id" for name, _ in ws.accept["headers"])
            await ws.send(
                {"type": "connection_init", "payload": {"authorization": f"Bearer {token}"}}
            )
            assert (await ws.receive())["type"] == "connection_ack"
            events = "subscription($g: ID!) { gameEvents(gameId: $g) { seq type } }"
            payload = {"query": events, "variables": {"g": game}}
            await ws.send({"id": "1", "type": "subscribe", "payload": payload})
            first = await ws.receive()  # the log first: the game's creation
            assert first["type"] == "next" and first["payload"]["data"]["gameEvents"]["seq"] == 1
            assert await metric(client, active, subscription="gameEvents") == 1
            await ws.send(
                {
                    "id": "2",
                    "type": "subscribe",
                    "payload": {"query": "subscription { lobby { gameId } }"},
                }
            )

            async def lobby_open() -> bool:
                return await metric(client, active, subscription="lobby") == 1

            await eventually(lobby_open)
            assert await metric(client, "mmk_bus_subscribers") == 2
            await ws.send({"id": "1", "type": "complete"})

            async def events_closed() -> bool:
                return await metric(client, active, subscription="gameEvents") == 0

            await eventually(events_closed)
            assert await metric(client, active, subscription="lobby") == 1

        async def all_closed() -> bool:
            return await metric(client, active) == 0

        await eventually(all_closed)
        assert (
            await metric(
                client, "mmk_graphql_operation_duration_seconds_count", operation="subscription"
            )
            == 0
        )


async def test_each_app_counts_only_its_own_requests(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with (
        running_app(tmp_path / "a") as (a, client_a),
        running_app(tmp_path / "b") as (b, client_b),
    ):
        await new_player(client_a)
        await new_player(client_b)
        await new_player(client_b)
        assert await metric(client_a, "mmk_moves_accepted_total") == 1
        assert await metric(client_b, "mmk_moves_accepted_total") == 2
    assert a.state.metrics.registry is not b.state.metrics.registry
    assert create_app().state.metrics.registry is not a.state.metrics.registry


async def test_operations_over_the_websocket_are_counted_too(tmp_path: Path) -> None:
    async with running_app(tmp_path) as (app, client), AsgiWebSocket(app) as ws:
        await ws.send({"type": "connection_init", "payload": {}})
        assert (await ws.receive())["type"] == "connection_ack"
        create = 'mutation { createPlayer(name: "ws") { __typename } }'
        await ws.send({"id": "1", "type": "subscribe", "payload": {"query": create}})
        assert (await ws.receive())["payload"]["data"]["createPlayer"]["__typename"] == "NewPlayer"
        await ws.send({"id": "2", "type": "subscribe", "payload": {"query": "{ nope }"}})
        error = await ws.receive()
        while error["type"] == "complete":  # the mutation's end
            error = await ws.receive()
        assert error["type"] == "error", error
        assert await metric(client, "mmk_moves_accepted_total", mutation="createPlayer") == 1
        assert await metric(client, "mmk_refusals_total", code="BAD_INPUT", kind="error") == 1
        assert await metric(client, "mmk_graphql_operation_duration_seconds_count") == 2


def test_bus_counters_are_read_from_the_bus_when_scraped() -> None:
    class RedisLike:
        published, dropped, reconnects, publish_failures = 40, 1, 3, 2

        def subscriber_count(self, channel: str | None = None) -> int:
            return 5

    text = Metrics(lambda: RedisLike()).render()[0].decode()
    values = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
    assert values["mmk_bus_reconnects_total"] == 3
    assert values["mmk_events_published_total"] == 40
    assert values["mmk_bus_publish_failures_total"] == 2
    assert values["mmk_bus_dropped_subscribers_total"] == 1
    assert values["mmk_bus_subscribers"] == 5
    assert "mmk_bus_reconnects_total" not in Metrics().render()[0].decode()  # not started yet
