"""Spectators at scale (issue #28 part 2): one game, a move a second,
watched by many spectators spread over two instances, against the bare
broadcaster of #13 fanning out the same frames to as many clients, in the
same run.

MMK: two ``mmk serve`` processes on one fresh PostgreSQL database and one
Redis (as the ramp's ``pg2`` target). Bare: two bare broadcasters
(:mod:`tests.bench.capacity.bare`) relaying each event through Redis to
both. Every spectator is a real graphql-transport-ws WebSocket subscribed to
the game's public stream (``afterSeq``: the game's last seq, no replay),
half on each instance, held by a few client processes of lean sockets
(:mod:`tests.bench.capacity.wire`). The moves go through the first instance.

Delivery runs from the move to each spectator's receipt of each of its
events, against two clocks (both printed). The first is the event's own
``at``: the server's clock as the move was decided, before its commit (so
MMK's figure counts its PostgreSQL transaction too; the bare broadcaster's
is when it emits). The second is the move's response, as the mover gets it:
a move's frames may arrive before it (counted as 0), and under load the
response waits behind the answering instance's own fan-out, so it flatters
both. "last" is, per move, the last spectator's receipt of its last event,
from ``at``. The bare broadcaster emits MMK's very events of each move (its
``Emit``), so both fan out the same frames; MMK plays a seeded practice game
(the same deal every run). CPU per frame: both server processes' CPU time
(``/proc``) over the measured moves, by the frames the spectators received.

    python -m tests.bench.capacity.spectators --spectators 10000 --moves 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from tests.bench.capacity.ramp import percentile
from tests.bench.capacity.server_stats import cpu_seconds
from tests.bench.capacity.wire import Feed, Http
from tests.bench.capacity.workload import (
    CREATE_GAME,
    CREATE_PLAYER,
    JOIN_GAME,
    LOOK,
    MOVES,
    SEATS,
    START_GAME,
    SUBSCRIBE,
)
from tests.bench.http_load import RATE_LIMITS_OFF, ROOT, free_port, serving
from tests.e2e.cluster import channel_prefix, cluster, fresh_backend
from tests.stream_policy import action_for

WATCH = SUBSCRIBE
"""A spectator screen's selection: the capacity ramp's feed, plain, so MMK
pushes it (docs/decisions/0038)."""

SERVER_ENV = {
    **RATE_LIMITS_OFF,
    "MMK_MAX_CONNECTIONS": "0",
    "MMK_LOG_LEVEL": "warning",  # no line per connection
}
"""The per-IP caps off: every spectator comes from this machine's address."""
OPENING = 64
"""Sockets a client process opens at a time."""
WARMUP_MOVES = 3
GAME = {"seatCount": SEATS, "seed": "spectators", "practice": True}
"""The same deal every run (a practice game): the same events, move by move."""
SETTLE_S = 30.0


# -- the client processes ------------------------------------------------------


class Watchers:
    """One client process's spectators: arrival times per seq (its own
    ``perf_counter``, CLOCK_MONOTONIC: the same clock in every process), and
    each event's ``at`` on that clock."""

    def __init__(self) -> None:
        self.feeds: list[Feed] = []
        self.arrivals: dict[int, list[float]] = {}
        self.at: dict[int, float] = {}
        self.lost: list[str] = []
        self.offset = time.time() - time.perf_counter()  # wall clock -> perf_counter

    def on_next(self, op: str, payload: dict[str, Any], now: float) -> None:
        event = (payload.get("data") or {}).get("gameEvents")
        if event is None:
            self.lost.append(f"stream: {json.dumps(payload)[:200]}")
            return
        seq = event["seq"]
        seen = self.arrivals.get(seq)
        if seen is None:
            seen = self.arrivals[seq] = []
            at = datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()
            self.at[seq] = at - self.offset
        seen.append(now)

    def on_lost(self, reason: str) -> None:
        if len(self.lost) < 20:
            self.lost.append(reason)

    async def open(self, ports: list[int], count: int, game: str, after: int) -> None:
        gate = asyncio.Semaphore(OPENING)
        variables = {"gameId": game, "afterSeq": after}

        async def one(i: int) -> None:
            async with gate:
                feed = await Feed.open(ports[i % len(ports)], None, self.on_next, self.on_lost)
                feed.subscribe("s", WATCH, variables)
                self.feeds.append(feed)

        results = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                self.on_lost(f"open: {type(r).__name__}: {r}")

    async def command(self, c: dict[str, Any]) -> dict[str, Any]:
        if "open" in c:
            o = c["open"]
            await self.open(o["ports"], o["count"], o["game"], o["after"])
            return {"opened": len(self.feeds), "lost": self.lost}
        if "await" in c:  # every feed has had this seq, or the timeout
            seq, deadline = c["await"], time.perf_counter() + c.get("timeout", SETTLE_S)
            while len(self.arrivals.get(seq, ())) < len(self.feeds):
                if time.perf_counter() > deadline:
                    break
                await asyncio.sleep(0.05)
            return {"missing": len(self.feeds) - len(self.arrivals.get(seq, ()))}
        if "reset" in c:
            self.arrivals.clear()
            self.at.clear()
            return {}
        if "report" in c:
            return {"arrivals": self.arrivals, "at": self.at, "lost": self.lost}
        for feed in self.feeds:
            feed.close()
        return {"closed": len(self.feeds)}


async def client_main() -> None:
    watchers = Watchers()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        answer = await watchers.command(command)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if "close" in command:
            return


class Client:
    """A client process, driven over its stdin and stdout."""

    def __init__(self, log: Path) -> None:
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.capacity.spectators", "--client"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def send(self, command: dict[str, Any]) -> None:
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(command) + "\n")
        stdin.flush()

    def answer(self) -> dict[str, Any]:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"a client process ended: {self.process.wait()}")
        result: dict[str, Any] = json.loads(line)
        return result

    def stop(self) -> None:
        with suppress(Exception):
            self.send({"close": True})
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


async def all_of(clients: list[Client], command: dict[str, Any]) -> list[dict[str, Any]]:
    """One command to every client process at once; their answers (awaited
    off the event loop: the mover's sockets go on answering pings)."""
    for c in clients:
        c.send(command)
    return await answers(clients)


async def answers(clients: list[Client]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(asyncio.to_thread(c.answer) for c in clients)))


# -- the servers ---------------------------------------------------------------


@dataclass
class Server:
    port: int
    pid: int


@contextmanager
def mmk_pair(directory: Path) -> Iterator[list[Server]]:
    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url or not database_url.startswith("postgresql"):
        raise SystemExit("the spectators' benchmark needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    with (
        fresh_backend(database_url, redis_url, "spectators", **SERVER_ENV) as backend,
        cluster(backend, directory) as instances,
    ):
        yield [Server(urlsplit(i.server.base_url).port or 0, i.proc.pid) for i in instances]


@contextmanager
def bare_pair(directory: Path) -> Iterator[list[Server]]:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        raise SystemExit("the spectators' benchmark needs REDIS_URL")
    channel = channel_prefix("bare-spectators") + "relay"
    with ExitStack() as stack:
        servers = []
        for name in ("bareA", "bareB"):
            port = free_port()
            cmd = [sys.executable, "-m", "tests.bench.capacity.bare", "--port", str(port)]
            cmd += ["--redis", redis_url, "--channel", channel]
            running = stack.enter_context(
                serving(cmd, dict(os.environ), directory / f"{name}.log", port)
            )
            servers.append(Server(port, running.process.pid))
        yield servers


# -- the game and its mover ----------------------------------------------------


@dataclass
class Move:
    sent: float
    responded: float
    seqs: list[int]


@dataclass
class Game:
    """One game of 4 people on the first instance, moved one move at a time."""

    http: Http
    tokens: list[str]
    id: str = ""
    last_seq: int = 0
    turn: int = 0
    moves: list[Move] = field(default_factory=list)
    script: list[list[dict[str, Any]]] | None = None  # another server's moves, to emit

    @classmethod
    async def start(cls, port: int) -> Game:
        http = await Http.open(port, idle_s=60.0)
        tokens = []
        for seat in range(SEATS):
            r = await mutate(http, CREATE_PLAYER, "CreatePlayer", {"name": f"s{seat}"}, None)
            tokens.append(r["token"])
        game = cls(http, tokens)
        r = await mutate(http, CREATE_GAME, "CreateGame", {"input": GAME}, tokens[0])
        game.id = r["gameId"]
        for token in tokens[1:]:
            await mutate(http, JOIN_GAME, "JoinGame", {"gameId": game.id}, token)
        r = await mutate(http, START_GAME, "StartGame", {"gameId": game.id}, tokens[0])
        game.last_seq = max(e["seq"] for e in r["events"])
        return game

    async def move(self) -> Move:
        """The next move, by whoever is to act (asked in turn); with a
        ``script``, its next move's events, emitted as they are (bare)."""
        if self.script is not None:
            return await self._emit(self.script.pop(0))
        for k in range(SEATS):
            seat = (self.turn + k) % SEATS
            token = self.tokens[seat]
            look = await self.http.graphql(LOOK, "Look", {"id": self.id}, token)
            viewer = ((look.get("data") or {}).get("game") or {}).get("viewer")
            if not viewer or not viewer.get("choices"):
                continue
            try:
                mutation, arguments = action_for(viewer["choices"])
            except StopIteration:  # messages only (the Rat's window): not this seat's turn
                continue
            sent = time.perf_counter()
            answer = await self.http.graphql(
                MOVES[mutation], "Move", {"gameId": self.id, **arguments}, token
            )
            responded = time.perf_counter()
            r = answer["data"]["r"]
            if r.get("__typename") == "Refusal":
                if r.get("code") == "NOT_YOUR_TURN":
                    continue
                raise RuntimeError(f"move refused: {r}")
            self.turn = (seat + 1) % SEATS
            seqs = [e["seq"] for e in r["events"]]
            self.last_seq = max(seqs)
            move = Move(sent, responded, seqs)
            self.moves.append(move)
            return move
        raise RuntimeError("nobody may move")

    async def _emit(self, events: list[dict[str, Any]]) -> Move:
        sent = time.perf_counter()
        r = await mutate(
            self.http, "Emit", "Emit", {"gameId": self.id, "events": events}, self.tokens[0]
        )
        move = Move(sent, time.perf_counter(), [e["seq"] for e in r["events"]])
        self.last_seq = max(move.seqs)
        self.moves.append(move)
        return move


class Probe:
    """One more spectator, in the mover's process: every event of the game
    as spectators get it (what the bare broadcaster then emits)."""

    def __init__(self) -> None:
        self.events: dict[int, dict[str, Any]] = {}
        self.lost: list[str] = []

    def on_next(self, op: str, payload: dict[str, Any], now: float) -> None:
        event = (payload.get("data") or {}).get("gameEvents")
        if event is not None:
            self.events[event["seq"]] = event

    def script(self, moves: list[Move]) -> list[list[dict[str, Any]]]:
        missed = [seq for m in moves for seq in m.seqs if seq not in self.events]
        if missed:
            raise RuntimeError(f"the probe missed events {missed[:5]} ({self.lost[:2]})")
        return [[self.events[seq] for seq in m.seqs] for m in moves]


async def mutate(
    http: Http, query: str, op: str, variables: dict[str, Any], token: str | None
) -> dict[str, Any]:
    answer = await http.graphql(query, op, variables, token)
    result: dict[str, Any] = (answer.get("data") or {}).get("r") or {}
    if answer.get("errors") or result.get("__typename") == "Refusal":
        raise RuntimeError(f"{op}: {json.dumps(answer)[:300]}")
    return result


# -- one target ----------------------------------------------------------------


@dataclass
class Figures:
    target: str
    spectators: int
    moves: int
    frames: int  # received by the spectators over the measured moves
    missing: int  # frames not received by the end
    from_at: list[float]  # each frame's delivery from its event's `at`, s
    from_response: list[float]  # from its move's response (0 when first)
    last_from_at: list[float]  # per move: the last spectator's last event
    last_from_response: list[float]
    commit: list[float]  # per move: its response from its first event's `at`
    server_cpu: float  # s, both processes, over the measured moves
    seconds: float
    lost: list[str]

    @property
    def cpu_per_frame_us(self) -> float:
        return self.server_cpu / max(1, self.frames) * 1e6

    def row(self) -> str:
        ms = [
            percentile(values, p) * 1e3
            for values in (self.from_at, self.last_from_at, self.from_response)
            for p in (50, 99)
        ]
        cells = " ".join(f"{v:>7.1f}" for v in ms)
        return (
            f"{self.target:>5} {self.spectators:>6} {self.moves:>5} {self.frames:>8} "
            f"{self.missing:>6} {cells} {percentile(self.commit, 50) * 1e3:>7.1f} "
            f"{self.server_cpu / self.seconds * 100:>5.0f}% {self.cpu_per_frame_us:>8.2f}"
        )


HEADER = (
    "   to  specs moves   frames missed  at p50  at p99 last50  last99 rsp p50 rsp p99 "
    "at>rsp   cpu  us/frame\n"
    "                                      (ms)    (ms)    (ms)    (ms)    (ms)    (ms)    (ms)"
)
"""``at``: each frame from its event's ``at`` (the server's clock as the move
was decided, before its commit); ``last``: per move, from its first event's
``at`` to the last spectator's receipt of its last event; ``rsp``: each
frame from its move's response (0 when it came first); ``at>rsp``: per
move, p50 from its first event's ``at`` to its response."""


async def measure(
    target: str,
    servers: list[Server],
    spectators: int,
    moves: int,
    processes: int,
    path: Path,
    script: list[list[dict[str, Any]]] | None = None,
) -> tuple[Figures, list[list[dict[str, Any]]]]:
    """The target's figures, and every move's events as a spectator got
    them (warm-up first); ``script``: those of another target, emitted."""
    game = await Game.start(servers[0].port)
    game.script = None if script is None else list(script)
    probe = Probe()
    feed = await Feed.open(servers[-1].port, None, probe.on_next, probe.lost.append)
    feed.subscribe("p", WATCH, {"gameId": game.id, "afterSeq": game.last_seq})
    played: list[Move] = []
    ports = [s.port for s in servers]
    clients = [Client(path / f"{target}-client{i}.log") for i in range(processes)]
    try:
        shares = [spectators // processes + (i < spectators % processes) for i in range(processes)]
        for client, share in zip(clients, shares, strict=True):
            client.send(
                {"open": {"ports": ports, "count": share, "game": game.id, "after": game.last_seq}}
            )
        opened = await answers(clients)
        lost = [x for o in opened for x in o["lost"]]
        for _ in range(WARMUP_MOVES):  # every spectator live before the measure
            await game.move()
            await asyncio.sleep(0.5)
        missing = sum(a["missing"] for a in await all_of(clients, {"await": game.last_seq}))
        if missing:
            raise RuntimeError(f"{target}: {missing} spectators not live after the warm-up")
        await all_of(clients, {"reset": True})
        played += game.moves
        game.moves.clear()
        cpu0 = sum(cpu_seconds(s.pid) for s in servers)
        began = time.perf_counter()
        for i in range(moves):
            await game.move()
            await asyncio.sleep(max(0.0, began + i + 1 - time.perf_counter()))
        missing = sum(a["missing"] for a in await all_of(clients, {"await": game.last_seq}))
        cpu = sum(cpu_seconds(s.pid) for s in servers) - cpu0
        seconds = time.perf_counter() - began
        reports = await all_of(clients, {"report": True})
        played += game.moves
    finally:
        for client in clients:
            client.stop()
        feed.close()
        await game.http.close()
    found = figures(target, spectators, game.moves, reports, cpu, seconds, missing, lost)
    return found, probe.script(played) if script is None else script


def figures(
    target: str,
    spectators: int,
    moves: list[Move],
    reports: list[dict[str, Any]],
    cpu: float,
    seconds: float,
    missing: int,
    lost: list[str],
) -> Figures:
    arrivals: dict[int, list[float]] = {}
    at: dict[int, float] = {}
    for r in reports:
        for seq, times in r["arrivals"].items():
            arrivals.setdefault(int(seq), []).extend(times)
        for seq, t in r["at"].items():
            at.setdefault(int(seq), t)
        lost += r["lost"]
    from_at, from_response, last_at, last_response, commit = [], [], [], [], []
    frames = 0
    for move in moves:
        latest = 0.0
        for seq in move.seqs:
            times = arrivals.get(seq, [])
            frames += len(times)
            if not times:
                continue
            from_at += [t - at[seq] for t in times]
            from_response += [max(0.0, t - move.responded) for t in times]
            latest = max(latest, max(times))
        last_at.append(latest - min(at.get(s, latest) for s in move.seqs))
        last_response.append(max(0.0, latest - move.responded))
        if move.seqs[0] in at:
            commit.append(move.responded - at[move.seqs[0]])
    return Figures(
        target,
        spectators,
        len(moves),
        frames,
        missing,
        from_at,
        from_response,
        last_at,
        last_response,
        commit,
        cpu,
        seconds,
        lost,
    )


def run(
    spectators: int = 1_000,
    moves: int = 20,
    processes: int = 4,
    targets: tuple[str, ...] = ("mmk", "bare"),
    directory: Path | None = None,
) -> dict[str, Figures]:
    """Each target in turn, in this order; prints the table as it goes. The
    first target's moves are the script of the others: the bare broadcaster
    emits MMK's very events (the same frames, move by move)."""
    results: dict[str, Figures] = {}
    script: list[list[dict[str, Any]]] | None = None
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # servers and clients inherit it
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with ExitStack() as stack:
        path = directory or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        print("\n" + HEADER, flush=True)
        for target in targets:
            pair = mmk_pair if target == "mmk" else bare_pair
            with pair(path) as servers:
                f, script = asyncio.run(
                    measure(target, servers, spectators, moves, processes, path, script)
                )
            results[target] = f
            print(f.row(), flush=True)
            if f.lost:
                print("       lost:", "; ".join(f.lost[:3]), flush=True)
    if "mmk" in results and "bare" in results:
        print(ratios(results["mmk"], results["bare"]), flush=True)
    return results


def ratios(mmk: Figures, bare: Figures) -> str:
    def r(key: str, p: float) -> float:
        a, b = getattr(mmk, key), getattr(bare, key)
        return float(percentile(a, p) / max(1e-4, percentile(b, p)))

    return (
        f"mmk/bare: delivery from at p50 {r('from_at', 50):.2f}x p99 {r('from_at', 99):.2f}x; "
        f"last spectator p99 {r('last_from_at', 99):.2f}x; "
        f"from the response p99 {r('from_response', 99):.2f}x; "
        f"CPU/frame {mmk.cpu_per_frame_us / bare.cpu_per_frame_us:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--client", action="store_true", help="(a client process)")
    parser.add_argument("--spectators", type=int, default=10_000)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--processes", type=int, default=4, help="client processes")
    parser.add_argument("--targets", default="mmk,bare")
    args = parser.parse_args()
    if args.client:
        asyncio.run(client_main())
        return
    run(args.spectators, args.moves, args.processes, tuple(args.targets.split(",")))


if __name__ == "__main__":
    main()
