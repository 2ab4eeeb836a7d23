"""The capacity benchmark's load process (issue #13), a separate process so
that its CPU is not the server's. It reads one JSON command a line on stdin
and answers one JSON line on stdout:

``{"target": "mmk", "ports": [8000], "pids": [123], "tables": 100, "warmup": 5, "measure": 15}``
brings that target's running tables up to ``tables`` (a new table: 4 new
players, a game created and joined, 8 subscriptions, started), pauses every
other target's tables (their seats stop acting; their sockets stay open),
waits ``warmup`` seconds, then measures for ``measure`` seconds: moves/s,
mutation and delivery latencies, ``/healthz`` round trips, errors, and this
process's own CPU. Delivery: from the move's response to a subscriber's
receiving the move's last event (0 when it came first), for every subscriber.
With ``"barrier": {"path": ..., "parties": 2}`` the step waits, once its
tables are up, until that many load processes reached the same barrier
(a file each in that directory): targets measured together share their
windows, and so the machine's drift.

    python -m tests.bench.capacity.load
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench.capacity import server_stats as stats
from tests.bench.capacity.wire import IDLE_S, Feed, Http
from tests.bench.capacity.workload import (
    CREATE_GAME,
    CREATE_PLAYER,
    JOIN_GAME,
    LOOK,
    MOVES,
    SEATS,
    SPECTATORS,
    START_GAME,
    SUBSCRIBE,
    THINK_S,
)
from tests.stream_policy import action_for

SETUP_CONCURRENCY = 8
BARRIER_TIMEOUT_S = 600.0
LATE_S = 5.0  # a delivery still missing this long after the move's response is an error
HEALTH_EVERY_S = 0.1


@dataclass
class Window:
    """What one step measures; figures count only inside [start, end)."""

    start: float = 0.0
    end: float = float("inf")
    moves: int = 0
    mutations: list[float] = field(default_factory=list)
    deliveries: list[float] = field(default_factory=list)
    health: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)

    def inside(self, t: float) -> bool:
        return self.start <= t < self.end

    def error(self, what: str) -> None:
        key = what.split(":")[0][:80]
        self.errors[key] += 1
        if len(self.samples) < 5:
            self.samples.append(what[:400])


class Load:
    def __init__(self) -> None:
        self.window = Window(start=float("inf"))
        self.active: dict[str, asyncio.Event] = {}
        self.tables: dict[str, list[Table]] = {}
        self.rng = random.Random(13)
        self.names = itertools.count()
        self.tasks: set[asyncio.Task[None]] = set()
        self.rss0: dict[str, int] = {}  # each target's RSS before its first table
        self.idle_s = IDLE_S  # the step's target: how long a seat's connection may idle

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` on its own, keeping a reference until it is done."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def error(self, what: str) -> None:
        """Errors count whenever they happen: outside a window they are the
        set-up's, and the step that set up reports them."""
        self.window.error(what)

    async def step(self, command: dict[str, Any]) -> dict[str, Any]:
        """One step; ``ports`` and ``pids``: the target's instances (one,
        or several sharing a database and a bus), its tables spread over
        them, their CPU, memory and metrics added up."""
        target = command["target"]
        ports = [int(p) for p in command["ports"]]
        pids = [int(p) for p in command["pids"]]
        self.idle_s = float(command.get("idle_s", IDLE_S))
        for name, event in self.active.items():
            if name != target:
                event.clear()
        self.rss0.setdefault(target, sum(stats.rss_bytes(p) for p in pids))
        active = self.active.setdefault(target, asyncio.Event())
        active.set()
        tables = self.tables.setdefault(target, [])
        self.window = Window(start=float("inf"))
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)

        async def add() -> None:
            async with gate:
                table = Table(self, ports, active, len(tables))
                tables.append(table)
                await table.open()

        await asyncio.gather(*(add() for _ in range(int(command["tables"]) - len(tables))))
        if command.get("barrier"):
            meeting = command["barrier"]
            await meet(Path(meeting["path"]), int(meeting["parties"]), f"{target}.{os.getpid()}")
        scrapers = [await Http.open(p) for p in ports]
        health, prefix = scrapers[0], command["metrics"]
        try:
            await asyncio.sleep(float(command["warmup"]))
            before = await self._scrape(scrapers, prefix)
            server0 = sum(stats.cpu_seconds(p) for p in pids)
            database = command.get("database")
            db0 = await asyncio.to_thread(stats.backend_cpu, database) if database else {}
            cpu0, t0 = time.process_time(), time.perf_counter()
            setup_errors = self.window
            self.window = Window(start=t0, end=t0 + float(command["measure"]))
            self.window.errors.update(setup_errors.errors)
            self.window.samples.extend(setup_errors.samples)
            while time.perf_counter() < self.window.end:
                sent = time.perf_counter()
                status, _ = await health.get("/healthz")
                if status != 200:
                    self.error(f"healthz: HTTP {status}")
                self.window.health.append(time.perf_counter() - sent)
                await asyncio.sleep(HEALTH_EVERY_S)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            server_cpu = sum(stats.cpu_seconds(p) for p in pids) - server0
            db_cpu = None
            if database:
                db1 = await asyncio.to_thread(stats.backend_cpu, database)
                db_cpu = sum(cpu - db0.get(pid, 0.0) for pid, cpu in db1.items())
            after = await self._scrape(scrapers, prefix)
            rss = sum(stats.rss_bytes(p) for p in pids)
            await asyncio.sleep(min(LATE_S, 2.0))  # let the window's deliveries land
            for table in tables:
                table.check_late(self.window)
        finally:
            for scraper in scrapers:
                await scraper.close()
        lag, pauses = (
            after["event_loop_lag"] - before["event_loop_lag"],
            after["gc_pause"] - before["gc_pause"],
        )
        connections = len(tables) * (SEATS + SPECTATORS)
        w = self.window
        return {
            "target": target,
            "tables": len(tables),
            "connections": connections,
            "seconds": wall,
            "moves": w.moves,
            "mutations": w.mutations,
            "deliveries": w.deliveries,
            "health": w.health,
            "errors": dict(w.errors),
            "error_samples": w.samples,
            "load_cpu": cpu / wall,
            "server_cpu": server_cpu / wall,
            "db_cpu": None if db_cpu is None else db_cpu / wall,
            "rss_per_connection": (rss - self.rss0[target]) / max(1, connections),
            "lag_p99_bound": lag.quantile_bound(0.99),
            "lag_max_bound": lag.quantile_bound(1.0),
            "gc_pauses": pauses.count,
            "gc_pauses_over_20ms": pauses.above(0.02),
            "gc_pause_max_bound": pauses.quantile_bound(1.0),
            "gc_collected": (after["gc_collected"] - before["gc_collected"]).count,
            "gc_full_passes": (after["gc_full"] - before["gc_full"]).count,
        }

    async def _scrape(self, servers: list[Http], prefix: str) -> dict[str, stats.Histogram]:
        """Every instance's histograms, added up."""
        total: dict[str, stats.Histogram] = {}
        for http in servers:
            status, body = await http.get("/metrics")
            if status != 200:
                raise RuntimeError(f"/metrics: HTTP {status}")
            for name, histogram in stats.histograms(body.decode(), prefix).items():
                total[name] = total[name] + histogram if name in total else histogram
        return total


async def meet(directory: Path, parties: int, name: str) -> None:
    """Waits until ``parties`` load processes have come to ``directory``
    (each leaves a file there); raises after :data:`BARRIER_TIMEOUT_S`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while sum(1 for _ in directory.iterdir()) < parties:
        if time.monotonic() > deadline:
            raise TimeoutError(f"barrier {directory}: the other targets never came")
        await asyncio.sleep(0.05)


@dataclass
class Person:
    token: str
    http: Http
    feed: Feed
    seat: int


class Table:
    """One table on one target: 4 people and 4 spectators, game after game;
    with several instances, each person and spectator connects to one of
    them in turn (a table's clients are spread over all)."""

    def __init__(self, load: Load, ports: list[int], active: asyncio.Event, number: int) -> None:
        self.load, self.ports, self.active, self.number = load, ports, active, number
        self.people: list[Person] = []
        self.spectators: list[Feed] = []
        self.game_id = ""
        self.op = ""
        self.games = 0
        self.arrivals: list[dict[int, float]] = []  # per feed (people, then spectators)
        self.awaited: dict[int, tuple[float, int]] = {}  # last seq -> (response time, feeds left)
        self.acting: set[int] = set()

    async def open(self) -> None:
        try:
            for seat in range(SEATS):
                port = self._port(seat)
                http = await Http.open(port, self.load.idle_s)
                name = f"t{self.number}s{seat}n{next(self.load.names)}"
                answer = await self._mutate(
                    http, CREATE_PLAYER, "CreatePlayer", {"name": name}, None
                )
                token = answer["token"]
                index = len(self.arrivals)
                self.arrivals.append({})
                feed = await Feed.open(port, token, self._on_next(index, seat), self._on_lost)
                self.people.append(Person(token, http, feed, seat))
            for k in range(SPECTATORS):
                index = len(self.arrivals)
                self.arrivals.append({})
                port = self._port(SEATS + k)
                self.spectators.append(
                    await Feed.open(port, None, self._on_next(index, None), self._on_lost)
                )
            await self.new_game()
        except Exception as e:  # a table that could not open is an error of its step
            self.load.error(f"open: {type(e).__name__}: {e}")

    def _port(self, client: int) -> int:
        return self.ports[(self.number + client) % len(self.ports)]

    def _on_lost(self, reason: str) -> None:
        self.load.error(f"socket: {reason}")

    async def _mutate(
        self, http: Http, query: str, op: str, variables: dict[str, Any], token: str | None
    ) -> dict[str, Any]:
        sent = time.perf_counter()
        answer = await http.graphql(query, op, variables, token)
        done = time.perf_counter()
        if self.load.window.inside(sent):
            self.load.window.mutations.append(done - sent)
        if answer.get("errors") or answer.get("data") is None:
            raise RuntimeError(f"{op}: {json.dumps(answer)[:300]}")
        result: dict[str, Any] = answer["data"]["r"]
        if result.get("__typename") == "Refusal":
            raise RuntimeError(f"{op}: refused {result.get('code')} {result.get('message')}")
        return result

    async def new_game(self) -> None:
        """A game at this table: created by seat 0, joined by 1, 2, 3 in
        turn, everyone subscribed, started."""
        await self.active.wait()
        host = self.people[0]
        change = await self._mutate(
            host.http, CREATE_GAME, "CreateGame", {"input": {"seatCount": SEATS}}, host.token
        )
        self.game_id = change["gameId"]
        for person in self.people[1:]:
            await self._mutate(
                person.http, JOIN_GAME, "JoinGame", {"gameId": self.game_id}, person.token
            )
        self.games += 1
        self.op = f"g{self.games}"
        self.awaited.clear()
        self.acting.clear()
        for arrivals in self.arrivals:
            arrivals.clear()
        variables = {"gameId": self.game_id, "afterSeq": 0}
        for feed in [p.feed for p in self.people] + self.spectators:
            feed.subscribe(self.op, SUBSCRIBE, variables)
        await self._mutate(host.http, START_GAME, "StartGame", {"gameId": self.game_id}, host.token)

    def _on_next(self, index: int, seat: int | None) -> Any:
        arrivals = self.arrivals[index]

        def on_next(op_id: str, payload: dict[str, Any], now: float) -> None:
            if op_id != self.op:
                return
            event = (payload.get("data") or {}).get("gameEvents")
            if event is None:
                self.load.error(f"stream: {json.dumps(payload)[:300]}")
                return
            seq = event["seq"]
            arrivals[seq] = now
            awaited = self.awaited.get(seq)
            if awaited is not None:
                responded, left = awaited
                if self.load.window.inside(responded):
                    self.load.window.deliveries.append(max(0.0, now - responded))
                if left <= 1:
                    del self.awaited[seq]
                else:
                    self.awaited[seq] = (responded, left - 1)
            kind = event["__typename"]
            if kind == "ActionRequired" and seat is not None and event["seat"] == seat:
                if seat not in self.acting:
                    self.acting.add(seat)
                    self.load.spawn(self._act(self.people[seat], self.op))
            elif kind == "GameEnded" and seat == 0:
                self.load.spawn(self._next_game())

        return on_next

    async def _act(self, person: Person, op: str) -> None:
        try:
            await self.active.wait()
            look = await person.http.graphql(LOOK, "Look", {"id": self.game_id}, person.token)
            game = (look.get("data") or {}).get("game") or {}
            viewer = game.get("viewer")
            if look.get("errors") or viewer is None or viewer["seat"] != person.seat:
                raise RuntimeError(f"Look: {json.dumps(look)[:300]}")
            mutation, arguments = action_for(viewer["choices"])
            await asyncio.sleep(self.load.rng.uniform(*THINK_S))
            await self.active.wait()
            if op != self.op:
                return
            self.acting.discard(person.seat)
            sent = time.perf_counter()
            change = await self._mutate(
                person.http,
                MOVES[mutation],
                "Move",
                {"gameId": self.game_id, **arguments},
                person.token,
            )
            responded = time.perf_counter()
            if self.load.window.inside(sent):
                self.load.window.moves += 1
            last = max(e["seq"] for e in change["events"])
            left = 0
            for arrivals in self.arrivals:
                arrived = arrivals.get(last)
                if arrived is None:
                    left += 1
                elif self.load.window.inside(responded):
                    self.load.window.deliveries.append(max(0.0, arrived - responded))
            if left:
                self.awaited[last] = (responded, left)
        except Exception as e:
            self.acting.discard(person.seat)
            self.load.error(f"move: {type(e).__name__}: {e}")

    async def _next_game(self) -> None:
        try:
            await self.new_game()
        except Exception as e:
            self.load.error(f"new game: {type(e).__name__}: {e}")

    def check_late(self, window: Window) -> None:
        now = time.perf_counter()
        for seq, (responded, left) in list(self.awaited.items()):
            if window.inside(responded) and now - responded > LATE_S:
                window.error(f"undelivered: seq {seq} to {left} subscribers after {LATE_S} s")
                del self.awaited[seq]


async def main() -> None:
    load = Load()
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if not line.strip():
            continue
        result = await load.step(json.loads(line))
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())
