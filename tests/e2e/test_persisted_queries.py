"""Automatic persisted queries (Apollo APQ) through real servers: the round
trip Apollo's ``PersistedQueryLink`` makes (hash alone, ``PersistedQueryNotFound``,
hash and text, then the hash alone works), over POST and GET, for
subscriptions over HTTP streams too; only valid operations are registered;
with Redis, a hash registered on one instance works on another; and one
client's registrations cannot flush another's."""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from infra.persisted_queries import PER_CLIENT
from tests.e2e.client import Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.conftest import Server
from tests.e2e.httpsub import HTTP_TRANSPORTS, HttpSubscription, streaming_client
from tests.e2e.play import EVENT_TIMEOUT, assert_ended, autoplay, new_game, read_until, together

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

NOT_FOUND = {
    "errors": [
        {"message": "PersistedQueryNotFound", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}
    ]
}
TTL = 3600  # MMK_PERSISTED_QUERY_TTL of the two-instance test


def sha(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


def apq(query: str) -> dict[str, Any]:
    return {"persistedQuery": {"version": 1, "sha256Hash": sha(query)}}


async def post(
    http: httpx.AsyncClient,
    query: str,
    *,
    with_text: bool,
    variables: dict[str, Any] | None = None,
    token: str | None = None,
) -> httpx.Response:
    body: dict[str, Any] = {"extensions": apq(query), "variables": variables or {}}
    if with_text:
        body["query"] = query
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    return await http.post("/graphql", json=body, headers=headers)


async def get(
    http: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None
) -> httpx.Response:
    params = {"extensions": json.dumps(apq(query))}
    if variables is not None:
        params["variables"] = json.dumps(variables)
    return await http.get("/graphql", params=params, headers={"accept": "application/json"})


def unique(query: str, tag: str) -> str:
    """The same operation with a text (so a hash) no other test has used."""
    return f"{query} # {tag}"


async def test_the_round_trip_of_apollos_link(
    server: Server, api: Api, http: httpx.AsyncClient
) -> None:
    game_id, (ann,) = await new_game(api, "apq", 1, [], seatCount=3)
    query = unique("query G($id: ID!) { game(id: $id) { ... on Game { id seatCount } } }", "rt")
    expected = {"data": {"game": {"id": game_id, "seatCount": 3}}}
    # 1. The hash alone: unknown, exactly as Apollo's link expects it, not cacheable.
    r = await post(http, query, with_text=False, variables={"id": game_id})
    assert r.status_code == 200 and r.json() == NOT_FOUND
    assert r.headers["cache-control"] == "no-store"
    r = await get(http, query, {"id": game_id})
    assert r.status_code == 200 and r.json() == NOT_FOUND
    # 2. The hash with its text: registered and run.
    r = await post(http, query, with_text=True, variables={"id": game_id})
    assert r.status_code == 200 and r.json()["data"] == expected["data"]
    # 3. The hash alone now works, by POST and by GET (a cacheable read).
    r = await post(http, query, with_text=False, variables={"id": game_id}, token=ann.token)
    assert r.json()["data"] == expected["data"]
    r = await get(http, query, {"id": game_id})
    assert r.status_code == 200 and r.json()["data"] == expected["data"]
    # One caller's answer is never another's (CORS adds Origin to Vary).
    assert "authorization" in {v.strip().lower() for v in r.headers["vary"].split(",")}
    r = await http.get(
        "/graphql",
        params={"extensions": json.dumps(apq(query)), "variables": json.dumps({"id": game_id})},
        headers={"authorization": f"Bearer {ann.token}", "accept": "application/json"},
    )
    assert r.json()["data"] == expected["data"] and r.headers["cache-control"] == "private"


async def test_a_persisted_mutation_runs_by_post_never_by_get(
    api: Api, http: httpx.AsyncClient
) -> None:
    query = unique('mutation { createPlayer(name: "apq") { __typename } }', "mutation")
    r = await post(http, query, with_text=True)
    assert r.json()["data"] == {"createPlayer": {"__typename": "NewPlayer"}}
    r = await post(http, query, with_text=False)
    assert r.json()["data"] == {"createPlayer": {"__typename": "NewPlayer"}}
    r = await get(http, query)
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("{ nosuchfield }", "BAD_INPUT"),  # does not validate
        ("{ cardCatalog { id ", "BAD_INPUT"),  # does not parse
        ("{ " + " ".join(f"a{i}: __typename" for i in range(20)) + " }", "BAD_INPUT"),  # aliases
    ],
    ids=["invalid", "unparsable", "over-the-limits"],
)
async def test_only_an_operation_the_schema_accepts_is_registered(
    http: httpx.AsyncClient, query: str, code: str
) -> None:
    r = await post(http, query, with_text=True)
    assert r.status_code in (200, 400)
    assert [e["extensions"]["code"] for e in r.json()["errors"]] == [code]
    assert (await post(http, query, with_text=False)).json() == NOT_FOUND


async def test_a_hash_mismatch_is_refused(http: httpx.AsyncClient) -> None:
    r = await http.post(
        "/graphql",
        json={"query": "{ cardCatalog { id } }", "extensions": apq("{ me { player { id } } }")},
    )
    assert r.status_code == 400
    (error,) = r.json()["errors"]
    assert error["extensions"] == {"code": "BAD_INPUT", "reason": "PERSISTED_QUERY_HASH_MISMATCH"}


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_a_persisted_subscription_streams(server: Server, api: Api, transport: str) -> None:
    game_id, (ann,) = await new_game(api, f"apq-sub-{transport}", 1, [], seatCount=3)
    query = unique(
        "subscription S($g: ID!) { gameEvents(gameId: $g) { gameId seq type data } }", transport
    )
    variables = {"g": game_id}
    async with streaming_client(server.base_url) as http:
        # Unknown: Apollo's answer (plain JSON whatever the Accept), so the link retries.
        r = await http.post(
            "/graphql",
            json={"extensions": apq(query), "variables": variables},
            headers={"accept": "text/event-stream"},
        )
        assert r.status_code == 200 and r.json() == NOT_FOUND
        for with_text in (True, False):
            text = query if with_text else None  # then the hash alone
            sub = HttpSubscription(http, transport, text, variables, ann.token, apq(query))
            await sub.start()
            got: list[dict[str, Any]] = []
            await read_until(sub, got, lambda e: e["type"] == "SeatTaken")
            assert [e["seq"] for e in got] == [1, 2]
            await sub.close()


@pytest.mark.services
async def test_a_hash_registered_on_one_instance_works_on_another(
    tmp_path: Path, database_url: str, redis_url: str
) -> None:
    query = unique("{ cardCatalog { id house value } }", "cluster")
    with (
        fresh_backend(database_url, redis_url, "apq", MMK_PERSISTED_QUERY_TTL=str(TTL)) as backend,
        cluster(backend, tmp_path) as (a, b),
    ):
        async with (
            httpx.AsyncClient(base_url=a.base_url, trust_env=False) as on_a,
            httpx.AsyncClient(base_url=b.base_url, trust_env=False) as on_b,
        ):
            assert (await post(on_b, query, with_text=False)).json() == NOT_FOUND
            registered = (await post(on_a, query, with_text=True)).json()
            assert len(registered["data"]["cardCatalog"]) > 10
            # B never saw the text: it has it from Redis.
            by_hash = (await post(on_b, query, with_text=False)).json()
            assert by_hash["data"] == registered["data"]
            assert (await get(on_b, query)).json()["data"] == registered["data"]
        client = redis.Redis.from_url(redis_url)
        try:
            key = f"{{{backend.prefix}apq}}:{sha(query)}"  # the store's hash tag (0068)
            assert client.get(key) == query.encode()
            assert 0 < client.ttl(key) <= TTL
        finally:
            client.delete(key)
            client.close()


async def test_a_stream_by_hash_ends_after_game_ended(server: Server, api: Api) -> None:
    """The whole chain at once: an APQ subscription of a finished game over
    SSE replays its tail and completes."""
    game_id, (ann,) = await new_game(api, "apq-end", 1, ["GREEDY", "RANDOM"])
    await api.start(ann, game_id)
    (game,) = await together(autoplay(api, ann, 0, game_id, random.Random("apq-end")))
    query = unique(
        "subscription($g: ID!, $a: Int!) { gameEvents(gameId: $g, afterSeq: $a) "
        "{ gameId seq type data } }",
        "end",
    )
    variables = {"g": game_id, "a": game["lastSeq"] - 2}
    async with streaming_client(server.base_url) as http:
        for transport in HTTP_TRANSPORTS:
            sub = await HttpSubscription(
                http, transport, query, variables, ann.token, apq(query)
            ).start()
            tail: list[dict[str, Any]] = []
            await read_until(sub, tail)
            assert [e["seq"] for e in tail] == [game["lastSeq"] - 1, game["lastSeq"]]
            await assert_ended(sub, EVENT_TIMEOUT)


async def test_one_clients_registrations_do_not_flush_anothers(server: Server) -> None:
    """The trial's 700 registrations pushed the first one out of the
    512-text store. Now each client (address) holds a share: beyond it, its
    own oldest text goes, never another client's (docs/decisions/0052)."""
    flood = [unique("{ __typename }", f"flood {i}") for i in range(PER_CLIENT + 36)]
    theirs = unique("{ cardCatalog { id } }", "theirs")
    async with (
        from_address(server, "127.0.0.81") as other,
        from_address(server, "127.0.0.82") as flooder,
    ):
        assert (await post(other, theirs, with_text=True)).json()["data"]["cardCatalog"]
        for query in flood:
            answer = (await post(flooder, query, with_text=True)).json()
            assert answer["data"] == {"__typename": "Query"}, answer
        assert (await post(other, theirs, with_text=False)).json()["data"]["cardCatalog"]
        gone = (await post(flooder, flood[0], with_text=False)).json()
        assert gone["errors"] == NOT_FOUND["errors"], gone  # its own oldest
        kept = (await post(flooder, flood[-1], with_text=False)).json()
        assert kept["data"] == {"__typename": "Query"}, kept


@contextlib.asynccontextmanager
async def from_address(server: Server, source: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(
        base_url=server.base_url, transport=transport, trust_env=False, timeout=10
    ) as http:
        yield http
