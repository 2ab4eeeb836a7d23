"""HTTP speed of one uvicorn process on SQLite, run by ``make bench``.

In one run, 32 concurrent clients (one keep-alive connection each, in this
process; the server is its own process) send ``{ __typename }`` or game moves,
in turns: a trivial-query slice, then a moves slice, three times, each slice
timed after a short warm-up; each figure sums its three slices. Taking turns
exposes both figures alike to whatever else the machine does meanwhile (on a
shared 2-core machine its speed drifts by 10-20% over a minute). A first
trivial slice, not counted, sizes the move pools. Issue target: moves/s >=
30% of the trivial query's requests/s, and a move's p99 latency under 50 ms.

Moves: each client drives one 4-seat game at a time, each seat a player the
client created; its games are made with known seeds and ``ratSeat: 0``, fully
joined and started before the clock runs (through httpx, not timed). The
client keeps a local copy of its game's engine (``new_game(4, seed, rat=0)``
deals the same game, checked once against the server's hand), picks the seat
to act and its move (the first PlayCard listed, else the first legal action),
applies it locally and sends the matching mutation with that seat's token.
A finished game is followed by the client's next prepared game: the pools are
made before the clock runs, so the timed window holds nothing but moves. A
pool holds enough moves for the client to keep moving at twice the target
rate (60% of the trivial query's); a client that still runs dry stops, which
is reported, and then the moves figure is a lower bound (and the ratio target
met). Any refusal fails.

Server CPU per request (from /proc) is printed too: unlike the rates, it
hardly moves when other processes share the machine.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import httpx
import pytest

from api.graphql.types.actions import mutation_and_arguments
from domain.game.cards import Card, sorted_cards
from domain.game.commands import PlayCard
from domain.game.engine import apply, to_act
from domain.game.legal import legal_actions
from domain.game.setup import new_game
from domain.game.state import GameState
from tests.bench.http_load import (
    Call,
    Driver,
    HttpConnection,
    PhaseResult,
    Server,
    gather_limited,
    graphql,
    run,
    run_phase,
    uvicorn_server,
)
from tests.e2e.client import action_document

CLIENTS = 32
SEATS = 4
WARMUP_S = 0.5
SLICE_S = 2.0
SLICES = 3
POOL_HEADROOM = 0.6  # of the trivial rate: twice the 30% target
MAX_GAMES_PER_CLIENT = 40
TRIVIAL = json.dumps({"query": "{ __typename }"}).encode()
TRIVIAL_ANSWER = {"data": {"__typename": "Query"}}


# ---------------------------------------------------------------- phase A


class TrivialClient:
    def __init__(self, conn: HttpConnection) -> None:
        self.conn = conn
        self.call = Call(conn.request(TRIVIAL), "__typename")

    def next_call(self) -> Call:
        return self.call

    def check(self, call: Call, status: int, body: bytes) -> None:
        if status != 200 or json.loads(body) != TRIVIAL_ANSWER:
            raise AssertionError(f"{{ __typename }}: {status} {body[:300]!r}")


# ---------------------------------------------------------------- phase B


@dataclass(frozen=True, slots=True)
class PreparedGame:
    game_id: str
    seed: str


@dataclass(frozen=True, slots=True)
class Seats:
    """A client's players: seat i is played with tokens[i]."""

    tokens: list[str]
    games: list[PreparedGame]


@cache
def move_document(mutation: str, arguments: tuple[str, ...]) -> str:
    """The mutation with variables (so the server's parse and validation
    caches hit) and the smallest selection that tells a refusal."""
    return action_document(mutation, arguments, selection=REFUSAL_ONLY)


REFUSAL_ONLY = "__typename ... on Refusal { code message }"


class GameClient:
    """Drives its own games: the local engine copy picks each move."""

    def __init__(self, conn: HttpConnection, seats: Seats) -> None:
        self.conn = conn
        self.tokens = seats.tokens
        self.pool = deque(seats.games)
        self.state: GameState | None = None
        self.game_id = ""

    def next_call(self) -> Call | None:
        while self.state is None or (seat := to_act(self.state)) is None:
            if not self.pool:
                return None
            game = self.pool.popleft()
            self.state, self.game_id = mirror(game.seed), game.game_id
        legal = legal_actions(self.state, seat)
        cmd = next((c for c in legal if isinstance(c, PlayCard)), legal[0])
        apply(self.state, seat, cmd)
        mutation, arguments = mutation_and_arguments(cmd)
        document = move_document(mutation, tuple(arguments))
        body = {"query": document, "variables": {"gameId": self.game_id, **arguments}}
        return Call(self.conn.request(json.dumps(body).encode(), self.tokens[seat]), mutation)

    def check(self, call: Call, status: int, body: bytes) -> None:
        payload = json.loads(body)
        result = (payload.get("data") or {}).get(call.label) or {}
        if status != 200 or result.get("__typename") != "GameChange":
            raise AssertionError(f"{call.label} in game {self.game_id}: {status} {payload}")


def mirror(seed: str) -> GameState:
    return new_game(SEATS, seed, rat=0).state


def moves_in(seed: str) -> int:
    """How many moves the clients' policy makes in this game."""
    state, moves = mirror(seed), 0
    while (seat := to_act(state)) is not None:
        legal = legal_actions(state, seat)
        apply(state, seat, next((c for c in legal if isinstance(c, PlayCard)), legal[0]))
        moves += 1
    return moves


NEW_PLAYER = """mutation($name: String!) { createPlayer(name: $name) {
  __typename ... on NewPlayer { token } ... on Refusal { code message } } }"""
CHANGE = "{ __typename ... on GameChange { gameId } ... on Refusal { code message } }"
CREATE = f"mutation($input: CreateGameInput!) {{ createGame(input: $input) {CHANGE} }}"
JOIN = f"mutation($g: ID!, $seat: Int!) {{ joinGame(gameId: $g, seat: $seat) {CHANGE} }}"
START = f"mutation($g: ID!) {{ startGame(gameId: $g) {CHANGE} }}"
HAND = "query($g: ID!) { game(id: $g) { ... on Game { viewer { seat hand { id } } } } }"


def _changed(data: dict[str, object], field: str) -> str:
    result = data[field]
    assert isinstance(result, dict) and result["__typename"] == "GameChange", result
    return str(result["gameId"])


async def prepare(client: httpx.AsyncClient, index: int, moves_needed: int) -> Seats:
    """Four players, then started games (known seeds, the Rat at seat 0)
    until they hold ``moves_needed`` moves."""
    tokens = []
    for seat in range(SEATS):
        data = await graphql(client, NEW_PLAYER, {"name": f"bench {index}.{seat}"})
        assert data["createPlayer"]["__typename"] == "NewPlayer", data
        tokens.append(data["createPlayer"]["token"])
    games: list[PreparedGame] = []
    moves = 0
    while moves < moves_needed:
        assert len(games) < MAX_GAMES_PER_CLIENT, "the game pool grows without bound"
        seed = f"api-bench-{index}-{len(games)}"
        spec = {"seatCount": SEATS, "seed": seed, "practice": True, "ratSeat": 0}
        game_id = _changed(await graphql(client, CREATE, {"input": spec}, tokens[0]), "createGame")
        for seat in range(1, SEATS):
            data = await graphql(client, JOIN, {"g": game_id, "seat": seat}, tokens[seat])
            _changed(data, "joinGame")
        _changed(await graphql(client, START, {"g": game_id}, tokens[0]), "startGame")
        games.append(PreparedGame(game_id, seed))
        moves += moves_in(seed)
    return Seats(tokens, games)


async def check_mirror(client: httpx.AsyncClient, seats: Seats) -> None:
    """The local engine deals what the server dealt: seat 0's hand."""
    game = seats.games[0]
    data = await graphql(client, HAND, {"g": game.game_id}, seats.tokens[0])
    viewer = data["game"]["viewer"]
    assert viewer["seat"] == 0, viewer
    served = sorted_cards([Card(c["id"]) for c in viewer["hand"]])
    assert served == sorted_cards(mirror(game.seed).seats[0].hand), (served, game.seed)


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class Figures:
    trivial: PhaseResult
    moves: PhaseResult
    games: int
    setup_s: float


async def _connections(server: Server) -> list[HttpConnection]:
    return [await HttpConnection.open(server.port) for _ in range(CLIENTS)]


async def _bench(server: Server) -> Figures:
    trivial_clients = [TrivialClient(c) for c in await _connections(server)]
    calibration = await _slice(server, trivial_clients, warmup=1.0)
    needed = math.ceil(POOL_HEADROOM * calibration.rate * SLICES * (WARMUP_S + SLICE_S) / CLIENTS)
    limits = httpx.Limits(max_connections=CLIENTS)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as client:
        jobs = [lambda i=i: prepare(client, i, needed) for i in range(CLIENTS)]
        pools = await gather_limited(CLIENTS, jobs)
        await check_mirror(client, pools[0])
    setup_s = time.perf_counter() - started
    game_clients = [
        GameClient(c, s) for c, s in zip(await _connections(server), pools, strict=True)
    ]
    trivial, moves = [], []
    for _ in range(SLICES):
        trivial.append(await _slice(server, trivial_clients))
        moves.append(await _slice(server, game_clients))
    games = sum(len(p.games) for p in pools)
    return Figures(PhaseResult.merged(trivial), PhaseResult.merged(moves), games, setup_s)


async def _slice(
    server: Server, clients: Sequence[Driver], warmup: float = WARMUP_S
) -> PhaseResult:
    """One timed slice; its connections are closed after it, and the next
    slice of these clients opens new ones in its warm-up: the server closes
    a keep-alive connection idle for 5 s, and the game set-up takes about as
    long."""
    for client in clients:
        if client.conn.closed:
            client.conn = await HttpConnection.open(server.port)
    try:
        return await run_phase(
            clients, warmup=warmup, duration=SLICE_S, server_cpu=server.cpu_seconds
        )
    finally:
        for client in clients:
            await client.conn.close()


@pytest.mark.timeout(180)
def test_http_moves_vs_trivial_query(tmp_path: Path) -> None:
    with uvicorn_server(tmp_path) as server:
        try:
            figures = run(_bench(server))
        except Exception as e:
            raise AssertionError(f"the bench failed; server log:\n{server.log_tail()}") from e
    trivial, moves = figures.trivial, figures.moves
    ratio = moves.rate / trivial.rate
    play_share = moves.labels["playCard"] / max(1, moves.count) * 100
    p99 = moves.percentile_ms(99)
    print(
        f"\nHTTP, one uvicorn process, SQLite, {CLIENTS} clients; {SLICES} slices of "
        f"{SLICE_S:.0f} s of each kind in turns, each after a {WARMUP_S} s warm-up:\n"
        f"  {{ __typename }}: {trivial.rate:,.0f} req/s, "
        f"p50 {trivial.percentile_ms(50):.1f} ms, p99 {trivial.percentile_ms(99):.1f} ms\n"
        f"      {trivial.cpu_summary()}\n"
        f"  moves: {moves.rate:,.0f} moves/s ({play_share:.0f}% playCard), "
        f"p50 {moves.percentile_ms(50):.1f} ms, p99 {p99:.1f} ms\n"
        f"      {moves.cpu_summary()}\n"
        f"      by mutation: {dict(moves.labels.most_common())}; "
        f"{figures.games} games prepared in {figures.setup_s:.1f} s (not timed)\n"
        f"  moves / trivial: {ratio:.0%} (target >= 30%); move p99 target < 50 ms"
    )
    cpu_trivial, cpu_move = trivial.server_cpu_per_request(), moves.server_cpu_per_request()
    if cpu_trivial is not None and cpu_move is not None:
        print(
            f"  server CPU per trivial request / per move: {cpu_trivial / cpu_move:.0%} "
            "(the ratio a saturated server on an otherwise idle machine would show)"
        )
    if moves.ran_dry:
        print(f"  {moves.ran_dry} clients ran out of prepared games: moves/s is a lower bound")
    assert ratio >= 0.30, f"moves at {ratio:.0%} of the trivial query's rate, target 30%"
    assert p99 < 50, f"move p99 {p99:.1f} ms, target under 50 ms"
