"""A bounded load test on loopback against ONE real server process (issue #6,
"Load"); ``make load``, not part of ``make test``.

For ``--duration`` seconds, ``--bot-games`` slots each run bots-only games
back to back (createGame, addBot per seat, startGame through the API) with
``--spectators`` WebSocket subscribers per game, and ``--human-games`` slots
each run games where one person plays from ``legalActions`` against bots,
watched by one spectator. Then every slot finishes its game and the run
reports: games finished, moves/s (commands in the log, bots' and people's),
events delivered, subscribers, mutation latency p50/p99 by mutation, event
delivery latency from commit (the event's ``at``) to subscriber, errors, and
the server's peak RSS. Any error (a GraphQL error, a refusal, a gap or
duplicate in a stream, a timeout) fails the run with exit status 1.

The server is the embedded default (SQLite + in-process bus) unless
``--backend postgres``, which takes ``DATABASE_URL`` (a fresh database is
made on that server and dropped afterwards) and ``REDIS_URL``. Request rate
limits are turned off for the run: every client is on 127.0.0.1.

    python -m tests.load.run --duration 60 --bot-games 16 --spectators 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from domain.log import SeatCommand
from infra.db.engine import make_engine
from infra.db.uow import SqlUnitOfWorkFactory
from tests.e2e.client import Api, Person
from tests.e2e.conftest import Server
from tests.e2e.own_server import own_server
from tests.e2e.wsclient import TRANSPORT_WS, GraphQLWebSocket, Operation
from tests.integration.databases import fresh_postgres

SUBSCRIBE = """
subscription($gameId: ID!) { gameEvents(gameId: $gameId, afterSeq: 0) { seq type at } }"""
GAME_TIMEOUT = 120.0  # seconds for one game, start to GameEnded on every stream
POLL = 0.02  # seconds between a person's looks at the table while others act
LOOK = """
query($id: ID!) {
  game(id: $id) {
    ... on Game { status table { toAct } viewer { seat legalActions { mutation arguments } } }
    ... on Refusal { code message }
  }
}"""


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    games: int = 0
    game_ids: list[str] = field(default_factory=list)
    events: int = 0
    subscribers: int = 0
    peak_subscribers: int = 0
    mutations: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    delivery: list[float] = field(default_factory=list)
    health: list[float] = field(default_factory=list)  # GET /healthz round trips
    errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors.append(what)
        if len(self.errors) <= 5:
            print(f"error: {what}", file=sys.stderr, flush=True)


class TimedApi(Api):
    """Records each mutation's round trip by name."""

    def __init__(self, http: httpx.AsyncClient, stats: Stats) -> None:
        super().__init__(http)
        self.stats = stats

    async def raw(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        start = time.perf_counter()
        body = await super().raw(query, variables, token)
        text = query.lstrip()
        if text.startswith("mutation"):
            name = text.split("{", 1)[1].split("(", 1)[0].strip()
            self.stats.mutations[name].append(time.perf_counter() - start)
        return body


# ------------------------------------------------------------------ watching
class Spectator:
    """One WebSocket connection following one game from seq 0."""

    def __init__(self, url: str, stats: Stats) -> None:
        self.ws = GraphQLWebSocket(url, TRANSPORT_WS)
        self.stats = stats
        self.op: Operation | None = None

    async def open(self, game_id: str) -> None:
        await self.ws.connect()
        self.op = await self.ws.subscribe(SUBSCRIBE, {"gameId": game_id})
        self.stats.subscribers += 1
        self.stats.peak_subscribers = max(self.stats.peak_subscribers, self.stats.subscribers)

    async def follow(self) -> int:
        """Read to GameEnded; checks 1, 2, 3, ... with no gap; returns the count."""
        assert self.op is not None
        seq = 0
        while True:
            payload = await self.op.next(GAME_TIMEOUT)
            now = time.time()
            if payload.get("errors"):
                raise AssertionError(f"subscription error: {payload['errors']}")
            event = payload["data"]["gameEvents"]
            seq += 1
            if event["seq"] != seq:
                raise AssertionError(f"stream gap or duplicate: got {event['seq']}, not {seq}")
            self.stats.delivery.append(now - datetime.fromisoformat(event["at"]).timestamp())
            self.stats.events += 1
            if event["type"] == "GameEnded":
                return seq

    async def close(self) -> None:
        self.stats.subscribers -= 1
        await self.ws.close()


# ------------------------------------------------------------------ playing
async def play_seat(api: Api, person: Person, game_id: str) -> None:
    """Play what ``legalActions`` offers (at random) until the game ends."""
    rng = random.Random(game_id)
    while True:
        game = (await api.data(LOOK, {"id": game_id}, person.token))["game"]
        if "status" not in game:
            raise AssertionError(f"game refused: {game}")
        if game["status"] == "FINISHED":
            return
        actions = game["viewer"]["legalActions"]
        if game["table"]["toAct"] != game["viewer"]["seat"] or not actions:
            await asyncio.sleep(POLL)
            continue
        action = rng.choice(actions)
        await api.act(person, game_id, action)


async def one_game(
    api: Api,
    server: Server,
    host: Person,
    stats: Stats,
    rng: random.Random,
    *,
    human: bool,
    spectators: int,
) -> None:
    seats = rng.randint(3, 8)
    game_id = await api.create_game(
        host, seatCount=seats, seed=f"load-{rng.random()}", practice=True, takeSeat=human
    )
    for _ in range(seats - 1 if human else seats):
        await api.add_bot(host, game_id, rng.choice(["RANDOM", "GREEDY"]))
    watchers = [Spectator(server.ws_url, stats) for _ in range(spectators)]
    try:
        for w in watchers:
            await w.open(game_id)
        await api.start(host, game_id)
        async with asyncio.timeout(GAME_TIMEOUT):
            work: list[Coroutine[Any, Any, int | None]] = [w.follow() for w in watchers]
            if human:
                work.append(play_seat(api, host, game_id))
            results = await asyncio.gather(*work)
        counts = {n for n in results if n is not None}
        if len(counts) != 1:
            raise AssertionError(f"spectators disagree on the game's length: {counts}")
        stats.games += 1
        stats.game_ids.append(game_id)
    finally:
        for w in watchers:
            await w.close()


async def slot(
    api: Api,
    server: Server,
    stats: Stats,
    index: int,
    until: float,
    *,
    human: bool,
    spectators: int,
) -> None:
    """Games back to back until ``until``; errors are counted, not raised."""
    rng = random.Random(f"slot-{index}")
    host = await api.new_person(f"load-{'h' if human else 'b'}{index}")
    while time.monotonic() < until:
        try:
            await one_game(api, server, host, stats, rng, human=human, spectators=spectators)
        except Exception as e:  # one bad game is reported, the others go on
            stats.error(f"{'human' if human else 'bots'} slot {index}: {type(e).__name__}: {e}")


# ------------------------------------------------------------------ report
def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 10) - 1]


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the process's peak resident set (Linux)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return float("nan")


def commands_in_log(database_url: str, game_ids: list[str]) -> int:
    """Moves applied: the log's commands (people's and bots'), read directly."""
    engine = make_engine(database_url)
    total = 0
    try:
        uow = SqlUnitOfWorkFactory(engine)
        for game_id in game_ids:
            with uow() as u:
                log = u.events.read(game_id, 0, 1_000_000, None, causes=True)
            total += sum(1 for e in log if isinstance(e.cause, SeatCommand))
    finally:
        engine.dispose()
    return total


def report(
    stats: Stats, elapsed: float, moves: int, usage: Usage, args: argparse.Namespace
) -> None:
    ms = 1000.0
    print(f"\nload test: {args.backend}, {elapsed:.1f} s, one server process")
    print(
        f"  CPU                   server {usage.server_cpu / elapsed:.0%},"
        f" load client {usage.client_cpu / elapsed:.0%} of one core"
        f" ({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )
    print(f"  games finished        {stats.games}")
    print(f"  moves                 {moves} ({moves / elapsed:.0f}/s)")
    print(f"  events delivered      {stats.events} ({stats.events / elapsed:.0f}/s)")
    print(f"  subscribers at peak   {stats.peak_subscribers}")
    everything = [t for ts in stats.mutations.values() for t in ts]
    print(
        f"  mutations             {len(everything)}: p50 {percentile(everything, 50) * ms:.1f} ms,"
        f" p99 {percentile(everything, 99) * ms:.1f} ms"
    )
    for name, ts in sorted(stats.mutations.items()):
        print(
            f"    {name:20}{len(ts):7}: p50 {percentile(ts, 50) * ms:.1f} ms,"
            f" p99 {percentile(ts, 99) * ms:.1f} ms"
        )
    h = stats.health
    print(
        f"  GET /healthz          p50 {percentile(h, 50) * ms:.1f} ms,"
        f" p99 {percentile(h, 99) * ms:.1f} ms (the event loop's lag, roughly)"
    )
    d = stats.delivery
    print(
        f"  commit -> subscriber  p50 {percentile(d, 50) * ms:.1f} ms,"
        f" p99 {percentile(d, 99) * ms:.1f} ms, max {max(d, default=0) * ms:.0f} ms"
    )
    print(f"  errors                {len(stats.errors)}")
    print(f"  server peak RSS       {usage.peak_rss_mb:.0f} MB")


# ------------------------------------------------------------------ main
@contextlib.contextmanager
def database(backend: str, directory: Path) -> Iterator[tuple[str, str | None]]:
    if backend == "sqlite":
        yield f"sqlite:///{directory}/load.sqlite3", None
        return
    server_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not server_url or not server_url.startswith("postgresql") or not redis_url:
        raise SystemExit("--backend postgres needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    with fresh_postgres(server_url) as url:
        yield url, redis_url


async def probe_health(http: httpx.AsyncClient, stats: Stats) -> None:
    """Time a trivial request every 0.1 s: how long the server takes to get
    to anything."""
    while True:
        start = time.perf_counter()
        r = await http.get("/healthz")
        if r.status_code != 200:
            stats.error(f"/healthz answered {r.status_code}")
        stats.health.append(time.perf_counter() - start)
        await asyncio.sleep(0.1)


@dataclass(frozen=True)
class Usage:
    server_cpu: float
    client_cpu: float
    peak_rss_mb: float


async def run(args: argparse.Namespace, server: Server, pid: int) -> tuple[Stats, float, Usage]:
    stats = Stats()
    cpu_before, own_before = cpu_seconds(pid), time.process_time()
    limits = httpx.Limits(max_connections=args.bot_games + args.human_games + 4)
    async with httpx.AsyncClient(
        base_url=server.base_url, timeout=30, trust_env=False, limits=limits
    ) as http:
        api = TimedApi(http, stats)
        start = time.monotonic()
        until = start + args.duration
        slots = [
            slot(api, server, stats, i, until, human=False, spectators=args.spectators)
            for i in range(args.bot_games)
        ] + [
            slot(api, server, stats, i, until, human=True, spectators=1)
            for i in range(args.human_games)
        ]
        probe = asyncio.create_task(probe_health(http, stats))
        await asyncio.gather(*slots)
        elapsed = time.monotonic() - start
        probe.cancel()
    usage = Usage(cpu_seconds(pid) - cpu_before, time.process_time() - own_before, peak_rss_mb(pid))
    return stats, elapsed, usage


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=60.0, help="seconds of new games")
    p.add_argument("--bot-games", type=int, default=16, help="bots-only games at once")
    p.add_argument(
        "--spectators",
        type=int,
        default=3,
        choices=range(1, 21),
        metavar="1..20",
        help="WebSocket spectators per bots-only game (they tell when it ends)",
    )
    p.add_argument("--human-games", type=int, default=2, help="games with a person playing")
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = p.parse_args(argv)
    off = {name: "0" for name in RATE_LIMITS}
    with tempfile.TemporaryDirectory(prefix="mmk-load-") as tmp:
        directory = Path(tmp)
        with database(args.backend, directory) as (db_url, redis_url):
            with own_server(directory, db_url, redis_url, MMK_LOG_LEVEL="warning", **off) as (
                server,
                proc,
            ):
                stats, elapsed, usage = asyncio.run(run(args, server, proc.pid))
            moves = commands_in_log(db_url, stats.game_ids)
        report(stats, elapsed, moves, usage, args)
    if stats.errors or stats.games == 0:
        print(f"FAILED: {len(stats.errors)} error(s), {stats.games} game(s)", file=sys.stderr)
        return 1
    return 0


# Request limits and per-IP connection caps the run turns off (every client
# is on loopback, which is no trusted proxy: docs/decisions/0052).
RATE_LIMITS = (
    "MMK_RATE_MUTATIONS_TOKEN",
    "MMK_RATE_MUTATIONS_IP",
    "MMK_RATE_SUBSCRIPTIONS_TOKEN",
    "MMK_RATE_SUBSCRIPTIONS_IP",
    "MMK_RATE_QUERY_COST_TOKEN",
    "MMK_RATE_QUERY_COST_IP",
    "MMK_MAX_CONNECTIONS_PER_IP",
    "MMK_MAX_WS_PER_IP",
    "MMK_MAX_SUBSCRIPTIONS_PER_IP",
)

if __name__ == "__main__":
    sys.exit(main())
