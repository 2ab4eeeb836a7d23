"""Load generation for the HTTP bench: one real uvicorn process, and a cheap
client in this process (asyncio streams, one keep-alive HTTP/1.1 connection
per client, hand-written Content-Length framing) so the server keeps its GIL.

A phase runs every client for ``warmup + duration`` seconds; a request counts
when it completes inside the measured ``duration`` after the warm-up.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
MAX_CALLS_PER_CLIENT = 50_000  # a bound on count besides the one on time
T = TypeVar("T")


# ---------------------------------------------------------------- the server


@dataclass(frozen=True)
class Server:
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def cpu_seconds(self) -> float | None:
        """The server's CPU time so far (user + system), where /proc has it."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1]
        except OSError:
            return None
        utime, stime = fields.split()[11:13]
        return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


# Benchmarks drive ~1,300 moves/s (or thousands of subscriptions) from one
# address on loopback, far over the per-IP and per-token rate limits meant for
# players: they measure the server with the limits off (0). So are the per-IP
# connection caps: loopback is no trusted proxy (docs/decisions/0052).
RATE_LIMITS_OFF = {
    "MMK_RATE_MUTATIONS_TOKEN": "0",
    "MMK_RATE_MUTATIONS_IP": "0",
    "MMK_RATE_SUBSCRIPTIONS_TOKEN": "0",
    "MMK_RATE_SUBSCRIPTIONS_IP": "0",
    "MMK_RATE_QUERY_COST_TOKEN": "0",
    "MMK_RATE_QUERY_COST_IP": "0",
    "MMK_RATE_SERVICE_KEY_CALLS": "0",
    "MMK_MAX_CONNECTIONS_PER_IP": "0",
    "MMK_MAX_WS_PER_IP": "0",
    "MMK_MAX_SUBSCRIPTIONS_PER_IP": "0",
}


@contextmanager
def uvicorn_server(directory: Path) -> Iterator[Server]:
    """One ``mmk serve`` process (uvicorn) on a fresh SQLite file under
    ``directory``, serving once /healthz answers; always stopped on exit."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{directory / 'bench.sqlite3'}",
        **RATE_LIMITS_OFF,
    }
    env.pop("REDIS_URL", None)
    # `mmk serve` as deployed (its event loop, WebSocket protocol, limits),
    # without the per-request log lines
    env["MMK_LOG_LEVEL"] = "warning"
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port)]
    with serving(cmd, env, directory / "server.log", port) as server:
        yield server


@contextmanager
def serving(
    cmd: list[str], env: dict[str, str], log: Path, port: int, cwd: Path = ROOT
) -> Iterator[Server]:
    """The server process ``cmd`` on ``port``, serving once /healthz answers;
    always stopped on exit."""
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Server(port, process, log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        process.terminate()  # SIGTERM: uvicorn shuts down cleanly
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited at start-up:\n{server.log_tail()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer /healthz in time:\n{server.log_tail()}")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on uvloop when available (a cheaper client loop)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


# ---------------------------------------------------------------- the client


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response's status and body (it must carry Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lower = head.lower()
    at = lower.find(b"\r\ncontent-length:")
    if at < 0:
        raise RuntimeError(f"a response without Content-Length: {head[:200]!r}")
    end = lower.index(b"\r\n", at + 2)
    return status, await reader.readexactly(int(lower[at + 17 : end]))


class HttpConnection:
    """One keep-alive HTTP/1.1 connection; responses must carry Content-Length."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer = reader, writer
        self.head = f"POST /graphql HTTP/1.1\r\nHost: {HOST}:{port}\r\n".encode()

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        reader, writer = await asyncio.open_connection(HOST, port)
        return cls(reader, writer, port)

    def request(self, body: bytes, token: str | None = None) -> bytes:
        """A whole POST /graphql request, built once and sent as is."""
        auth = b"" if token is None else f"Authorization: Bearer {token}\r\n".encode()
        return b"%sContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s" % (
            self.head,
            auth,
            len(body),
            body,
        )

    async def send(self, raw: bytes) -> tuple[int, bytes]:
        """Send a request built by :meth:`request`; the status and the body."""
        self.writer.write(raw)
        return await read_response(self.reader)

    @property
    def closed(self) -> bool:
        return self.writer.is_closing()

    async def close(self) -> None:
        self.writer.close()
        with suppress(ConnectionError):
            await self.writer.wait_closed()


@dataclass(frozen=True, slots=True)
class Call:
    """One request to send: its bytes and what it is (for counting and checks)."""

    raw: bytes
    label: str


class Driver(Protocol):
    """A client's behaviour: the next request (None when it has nothing left
    to do) and the check of its answer (raise on failure)."""

    conn: HttpConnection

    def next_call(self) -> Call | None: ...

    def check(self, call: Call, status: int, body: bytes) -> None: ...


@dataclass
class PhaseResult:
    seconds: float
    latencies: list[float] = field(default_factory=list)
    labels: Counter[str] = field(default_factory=Counter)
    ran_dry: int = 0  # clients that had nothing left to send before the end
    server_cpu: float | None = None  # the server's CPU seconds in the window
    client_cpu: float = 0.0  # this process's CPU seconds in the window

    @property
    def count(self) -> int:
        return len(self.latencies)

    @classmethod
    def merged(cls, parts: Sequence[PhaseResult]) -> PhaseResult:
        """Several timed slices of one kind as one result."""
        cpu = [p.server_cpu for p in parts]
        out = cls(sum(p.seconds for p in parts))
        for p in parts:
            out.latencies += p.latencies
            out.labels += p.labels
            out.ran_dry += p.ran_dry
            out.client_cpu += p.client_cpu
        out.server_cpu = None if None in cpu else sum(c for c in cpu if c is not None)
        return out

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def percentile_ms(self, p: float) -> float:
        """Nearest-rank percentile of the latencies, in milliseconds."""
        ordered = sorted(self.latencies)
        index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
        return ordered[index] * 1000

    def server_cpu_per_request(self) -> float | None:
        """The server's CPU seconds per counted request, where known."""
        if self.server_cpu is None or not self.count:
            return None
        return self.server_cpu / self.count

    def cpu_summary(self) -> str:
        """Where CPU went in the window: per request on the server (robust
        to other load on the machine), and both processes' shares of a core."""
        client = f"client {self.client_cpu / self.seconds:.0%} of a core"
        per_request = self.server_cpu_per_request()
        if self.server_cpu is None or per_request is None:
            return client
        share = self.server_cpu / self.seconds
        return f"server {per_request * 1e6:,.0f} us CPU/request, {share:.0%} of a core; {client}"


async def run_phase(
    drivers: Sequence[Driver],
    *,
    warmup: float,
    duration: float,
    server_cpu: Callable[[], float | None] = lambda: None,
    max_calls: int = MAX_CALLS_PER_CLIENT,
    timeout: float = 30.0,
) -> PhaseResult:
    """Every driver in a loop for ``warmup + duration`` (or ``max_calls``);
    requests completing in the last ``duration`` seconds are counted, with
    their latency, and CPU is sampled at both ends of that window."""
    result = PhaseResult(duration)
    clock = time.perf_counter
    start_at = clock() + warmup
    stop_at = start_at + duration

    async def drive(d: Driver) -> None:
        send, check = d.conn.send, d.check
        for _ in range(max_calls):
            if clock() >= stop_at:
                return
            call = d.next_call()
            if call is None:
                result.ran_dry += 1
                return
            t0 = clock()
            status, body = await send(call.raw)
            t1 = clock()
            check(call, status, body)
            if start_at <= t1 < stop_at:
                result.latencies.append(t1 - t0)
                result.labels[call.label] += 1

    async def sample_cpu() -> None:
        await asyncio.sleep(start_at - clock())
        server0, client0 = server_cpu(), time.process_time()
        await asyncio.sleep(stop_at - clock())
        server1, client1 = server_cpu(), time.process_time()
        result.client_cpu = client1 - client0
        if server0 is not None and server1 is not None:
            result.server_cpu = server1 - server0

    async with asyncio.timeout(warmup + duration + timeout):
        await asyncio.gather(sample_cpu(), *(drive(d) for d in drivers))
    return result


async def gather_limited(limit: int, jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run ``jobs`` with at most ``limit`` at a time, results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[T]]) -> T:
        async with gate:
            return await job()

    return list(await asyncio.gather(*(one(j) for j in jobs)))


async def graphql(
    client: httpx.AsyncClient,
    query: str,
    variables: dict[str, Any] | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """A setup call through httpx: its ``data``; any error fails."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    body = {"query": query, "variables": variables or {}}
    r = await client.post("/graphql", json=body, headers=headers)
    payload = r.json()
    if r.status_code != 200 or payload.get("errors"):
        raise AssertionError(f"{query!r} failed: {r.status_code} {json.dumps(payload)[:500]}")
    data: dict[str, Any] = payload["data"]
    return data
