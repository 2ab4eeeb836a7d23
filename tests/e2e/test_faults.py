"""Faults on a real server process (issue #6, "Faults").

- The database goes away (a TCP proxy between the server and PostgreSQL is
  cut, or swallows packets): ``/readyz`` says so, calls fail fast with a
  clear retryable error, nothing is half-written, and play goes on once the
  database is back.
- A client drops its connection mid-mutation and retries with the same
  ``idempotencyKey`` on a new one: the move is applied exactly once.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy.engine import make_url

from domain.log import SeatCommand
from domain.replay import replay_state
from infra.db.engine import make_engine
from infra.db.state_codec import encode
from infra.db.uow import SqlUnitOfWorkFactory
from tests.e2e.client import GAME, Api, Person, action_document
from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, log_records, own_server
from tests.e2e.play import new_game
from tests.e2e.tcp_proxy import TcpProxy, tcp_proxy
from tests.integration.databases import fresh_postgres
from tests.services import service_address

pytestmark = pytest.mark.e2e

RETRY_PAUSE = 0.05  # seconds between a client's retries while the database is away
RECOVERY = 15.0  # seconds for the server to be ready again once the database is back
UNAVAILABLE = "Service temporarily unavailable"


# ------------------------------------------------------------------ helpers
def keyed_mutation(action: dict[str, Any]) -> str:
    """A listed legal action as a mutation that also takes ``$idempotencyKey``."""
    return action_document(action["mutation"], action["arguments"], {"idempotencyKey": "String"})


def keyed_body(game_id: str, action: dict[str, Any], key: str) -> dict[str, Any]:
    return {
        "query": keyed_mutation(action),
        "variables": {"gameId": game_id, "idempotencyKey": key, **action["arguments"]},
    }


def unavailable(body: dict[str, Any]) -> bool:
    """The answer is the coded "database unavailable, retry" error."""
    errors = body.get("errors") or []
    return bool(errors) and all(
        e["extensions"] == {"code": "INTERNAL", "retryable": True}
        and e["message"].startswith(UNAVAILABLE)
        for e in errors
    )


async def post(http: httpx.AsyncClient, body: dict[str, Any], token: str) -> dict[str, Any]:
    r = await http.post("/graphql", json=body, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, (r.status_code, r.text)
    out: dict[str, Any] = r.json()
    assert "Traceback" not in r.text, r.text
    return out


async def until_ok(http: httpx.AsyncClient, body: dict[str, Any], token: str) -> dict[str, Any]:
    """What a mobile client does: retry the same request (same key) while the
    server says the database is unavailable; any other error fails the test."""
    while True:
        out = await post(http, body, token)
        if not unavailable(out):
            assert not out.get("errors"), out
            return out
        await asyncio.sleep(RETRY_PAUSE)


class Players:
    """Everyone seated plays what ``legalActions`` lists, one move at a time,
    retrying through outages; each move has its own idempotency key."""

    def __init__(self, http: httpx.AsyncClient, game_id: str, persons: list[Person]) -> None:
        self.http, self.game_id, self.persons = http, game_id, persons
        self.moves = 0  # moves the server confirmed
        self.failures_seen = 0  # unavailable answers got on the way

    async def look(self, person: Person) -> dict[str, Any]:
        out = await until_ok(
            self.http, {"query": GAME, "variables": {"id": self.game_id}}, person.token
        )
        game: dict[str, Any] = out["data"]["game"]
        assert game["__typename"] == "Game", game
        return game

    async def play_to_end(self, moves: int | None = None) -> dict[str, Any]:
        """Play until the game ends, or ``moves`` more moves are made."""
        until = None if moves is None else self.moves + moves
        while True:
            game = await self.look(self.persons[0])
            if game["status"] == "FINISHED" or self.moves == until:
                return game
            person = self.persons[game["table"]["toAct"]]
            viewer = (await self.look(person))["viewer"]
            if not viewer["legalActions"]:
                continue  # moved on between the two looks
            action = viewer["legalActions"][0]
            body = keyed_body(self.game_id, action, f"move-{uuid.uuid4()}")
            out = await until_ok(self.http, body, person.token)
            change = out["data"][action["mutation"]]
            if change["__typename"] == "Refusal":
                # Only possible if the game moved between look and act: never here.
                raise AssertionError(change)
            self.moves += 1


def log_and_state_agree(database_url: str, game_id: str) -> tuple[int, int]:
    """Read straight from the database: the log is 1..last_seq with no gap,
    and the stored state equals a replay of the log. Returns (last_seq,
    number of commands in the log)."""
    engine = make_engine(database_url)
    try:
        with SqlUnitOfWorkFactory(engine)() as uow:
            game = uow.games.get(game_id)
            log = uow.events.read(game_id, 0, 1_000_000, None, causes=True)
    finally:
        engine.dispose()
    assert game is not None and game.state is not None
    assert [e.seq for e in log] == list(range(1, game.last_seq + 1)), "a gap or a duplicate"
    replayed = replay_state(game, log)
    assert replayed is not None and encode(replayed) == encode(game.state)
    commands = sum(1 for e in log if isinstance(e.cause, SeatCommand))
    return game.last_seq, commands


async def wait_ready(http: httpx.AsyncClient, timeout: float = RECOVERY) -> None:
    deadline = time.monotonic() + timeout
    while True:
        r = await http.get("/readyz")
        if r.status_code == 200:
            return
        assert time.monotonic() < deadline, f"not ready {timeout} s after the restore: {r.text}"
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
def pg_behind_proxy(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, TcpProxy, str]]:
    """A server on a fresh PostgreSQL database reached through a proxy (one
    for the module: each test makes its own games, and leaves the proxy
    forwarding); yields the server, the proxy and the database's direct URL."""
    address = service_address(database_url)
    assert address is not None
    with fresh_postgres(database_url) as direct, tcp_proxy(address.host, address.port) as proxy:
        proxied = (
            make_url(direct)
            .set(host="127.0.0.1", port=proxy.port)
            .render_as_string(hide_password=False)
        )
        with own_server(tmp_path_factory.mktemp("outage"), proxied) as (srv, _):
            yield srv, proxy, direct
        assert_no_leak(srv)
        # A database outage is expected: logged as warnings, no error, no traceback.
        records = log_records(srv)
        assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL")], records[-3:]
        assert not [r for r in records if "exception" in r], "no traceback"
        assert any("database unavailable" in r["message"] for r in records)


# ------------------------------------------------------------------ database
@pytest.mark.services
async def test_a_database_outage_is_reported_refused_cleanly_and_survived(
    pg_behind_proxy: tuple[Server, TcpProxy, str],
) -> None:
    srv, proxy, direct = pg_behind_proxy
    async with httpx.AsyncClient(base_url=srv.base_url, timeout=30, trust_env=False) as http:
        api = Api(http)
        game_id, persons = await new_game(api, "outage", 3, [], ratSeat=0)
        await api.start(persons[0], game_id)
        players = Players(http, game_id, persons)
        playing = asyncio.create_task(players.play_to_end())
        try:
            while players.moves < 5:
                assert not playing.done(), playing
                await asyncio.sleep(0.01)

            # Cut: the database refuses. Health is fine, readiness is not.
            proxy.cut()
            r = await http.get("/readyz")
            assert r.status_code == 503, r.text
            assert r.json()["database"] == "down"
            assert (await http.get("/healthz")).status_code == 200
            # Queries and mutations fail fast, with the coded retryable error.
            host = persons[0]
            started = time.monotonic()
            look = await post(http, {"query": GAME, "variables": {"id": game_id}}, host.token)
            again = await post(
                http,
                keyed_body(game_id, {"mutation": "leaveGame", "arguments": {}}, "k-leave"),
                host.token,
            )
            assert unavailable(look) and unavailable(again), (look, again)
            assert time.monotonic() - started < 2.0, "refusals must not wait on the database"
            await asyncio.sleep(0.5)  # the players keep retrying meanwhile
            proxy.restore()
            await wait_ready(http)

            # Three short outages more, at whatever point the moves are at
            # (mid-transaction, mid-commit): each move still applies once.
            for pause in (0.05, 0.13, 0.21):
                await asyncio.sleep(pause)
                proxy.cut()
                await asyncio.sleep(0.3)
                proxy.restore()
            await wait_ready(http)
            final = await asyncio.wait_for(playing, 60)
        finally:
            playing.cancel()
            proxy.restore()
    assert final["status"] == "FINISHED"
    last_seq, commands = log_and_state_agree(direct, game_id)
    assert commands == players.moves, "every confirmed move is in the log exactly once"
    assert final["lastSeq"] == last_seq


@pytest.mark.services
async def test_a_partitioned_database_fails_calls_in_bounded_time(
    pg_behind_proxy: tuple[Server, TcpProxy, str],
) -> None:
    """Packets swallowed (no refusal): the connect timeout bounds the wait."""
    srv, proxy, direct = pg_behind_proxy
    async with httpx.AsyncClient(base_url=srv.base_url, timeout=30, trust_env=False) as http:
        api = Api(http)
        game_id, persons = await new_game(api, "partition", 3, [], ratSeat=0)
        await api.start(persons[0], game_id)
        players = Players(http, game_id, persons)
        proxy.blackhole()
        try:
            started = time.monotonic()
            r = await http.get("/readyz")
            assert r.status_code == 503 and r.json()["database"] == "down", r.text
            game = await post(http, {"query": GAME, "variables": {"id": game_id}}, persons[0].token)
            assert unavailable(game), game
            assert time.monotonic() - started < 15.0, "a partition must not hang requests"
        finally:
            proxy.restore()
        await wait_ready(http)
        await asyncio.wait_for(players.play_to_end(moves=10), 60)
    _, commands = log_and_state_agree(direct, game_id)
    assert commands == players.moves == 10


# ------------------------------------------------------------------ disconnects
def raw_request(server: Server, body: dict[str, Any], token: str) -> tuple[bytes, bytes]:
    """The head and body of ``POST /graphql`` as they go over the wire."""
    payload = orjson.dumps(body)
    host = server.base_url.removeprefix("http://")
    head = (
        f"POST /graphql HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode()
    return head, payload


def open_socket(server: Server) -> socket.socket:
    host, port = server.base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    # Closing sends a reset, not a polite FIN: the phone is just gone.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return sock


async def first_move(api: Api, tag: str) -> tuple[str, Person, dict[str, Any], dict[str, Any]]:
    """A started 3-person game (no bots, so nothing else moves), its host
    (the Rat, to lead), the host's first legal action and the game."""
    game_id, persons = await new_game(api, tag, 3, [], ratSeat=0)
    await api.start(persons[0], game_id)
    game = await api.game(game_id, persons[0].token)
    assert game["table"]["toAct"] == 0
    return game_id, persons[0], game["viewer"]["legalActions"][0], game


async def applied_once(
    api: Api, game_id: str, host: Person, before: dict[str, Any], retried: dict[str, Any]
) -> None:
    """The retry got a result (not a refusal), the game moved by exactly one
    version, and the log holds that result's events once."""
    assert retried["__typename"] == "GameChange", retried
    after = await api.game(game_id, host.token)
    assert after["version"] == before["version"] + 1 == retried["version"]
    log = await api.events(game_id, host.token)
    assert [e["seq"] for e in log] == list(range(1, after["lastSeq"] + 1))
    mine = [(e["seq"], e["type"]) for e in retried["events"]]
    assert mine and [(e["seq"], e["type"]) for e in log[before["lastSeq"] :]] == mine


async def wait_version(api: Api, game_id: str, token: str, version: int) -> None:
    deadline = time.monotonic() + 10
    while (await api.game(game_id, token))["version"] < version:
        assert time.monotonic() < deadline, "the first attempt was never applied"
        await asyncio.sleep(0.02)


async def test_a_client_gone_before_the_response_gets_the_first_result_on_retry(
    server: Server, api: Api
) -> None:
    game_id, host, action, before = await first_move(api, "gone-after")
    key = f"retry-{uuid.uuid4()}"
    body = keyed_body(game_id, action, key)
    head, payload = raw_request(server, body, host.token)
    sock = open_socket(server)
    sock.sendall(head + payload)
    await wait_version(api, game_id, host.token, before["version"] + 1)
    sock.close()  # the response is never read
    first = (await api.data(body["query"], body["variables"], host.token))[action["mutation"]]
    await applied_once(api, game_id, host, before, first)
    again = (await api.data(body["query"], body["variables"], host.token))[action["mutation"]]
    assert again == first, "every retry gets the first result"


async def test_a_client_gone_while_the_server_works_is_applied_once_on_retry(
    server: Server, api: Api
) -> None:
    """The reset arrives while the server reads or runs the mutation; the
    retry races the first attempt: one of them applies, both agree."""
    game_id, host, action, before = await first_move(api, "gone-during")
    body = keyed_body(game_id, action, f"retry-{uuid.uuid4()}")
    head, payload = raw_request(server, body, host.token)
    sock = open_socket(server)
    sock.sendall(head + payload)
    sock.close()
    retried = (await api.data(body["query"], body["variables"], host.token))[action["mutation"]]
    await applied_once(api, game_id, host, before, retried)


async def test_a_request_cut_before_its_body_ends_is_never_applied_and_the_retry_is(
    server: Server, api: Api
) -> None:
    game_id, host, action, before = await first_move(api, "gone-midbody")
    body = keyed_body(game_id, action, f"retry-{uuid.uuid4()}")
    head, payload = raw_request(server, body, host.token)
    sock = open_socket(server)
    sock.sendall(head + payload[: len(payload) // 2])
    await asyncio.sleep(0.2)
    sock.close()
    await asyncio.sleep(0.3)
    assert (await api.game(game_id, host.token))["version"] == before["version"], (
        "half a request must not be applied"
    )
    retried = (await api.data(body["query"], body["variables"], host.token))[action["mutation"]]
    await applied_once(api, game_id, host, before, retried)
