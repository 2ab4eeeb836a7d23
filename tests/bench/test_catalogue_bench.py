"""The attack catalogue of issue #22 at the default budgets, measured (``make
bench``).

One ``mmk serve`` (SQLite, default settings). For each family of
tests/attacks.py, four abusers (another process, each from a loopback
address of its own) send it for :data:`SECONDS` as fast as they are
answered, while two neighbours (this process, 127.0.0.1 and 127.0.0.2,
budgets of their own) each send ``{ __typename }`` every 50 ms; their
latencies alone, in the same run, are the reference. Targets: beside every
family, the neighbours' p99 is under 50 ms and within 3x their p99 alone,
and every abuser ends ``RATE_LIMITED``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from api.graphql.subscriptions import REPLAYED
from tests.attacks import FAMILIES, Outcome, Target, abuser_address, neighbour, prepare
from tests.bench.http_load import HOST, free_port, run, serving
from tests.e2e.client import Api

SECONDS = 10.0
SETUP = "127.0.0.9"
NEIGHBOURS = ("127.0.0.1", "127.0.0.2")
ABUSERS_NICE = 10
"""The abusers' process yields its CPU to the neighbours' when both are ready:
the neighbours' latency is the server's, not the load generator's."""
PAUSE = 0.05  # the neighbour's pause between two requests: 20 a second, within its budget


def _abusers(port: int, target: Target, family: str, seconds: float, out: object) -> None:
    """In a process of its own: the family's four abusers for ``seconds``."""

    async def main() -> list[Outcome]:
        stop = asyncio.Event()
        number = list(FAMILIES).index(family)
        outcomes = [Outcome() for _ in range(4)]
        tasks = [
            asyncio.create_task(
                FAMILIES[family](target, abuser_address(number, i), stop, outcomes[i], i)
            )
            for i in range(4)
        ]
        await asyncio.sleep(seconds)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return outcomes

    out.put(asyncio.run(main()))  # type: ignore[attr-defined]


async def _alone(port: int, seconds: float) -> list[float]:
    """Two neighbours (addresses and budgets of their own), their latencies."""
    quiet = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, quiet.set)
    both = await asyncio.gather(*(neighbour(port, quiet, PAUSE, a) for a in NEIGHBOURS))
    return [t for times in both for t in times]


def _ms(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] * 1e3


async def _target(base_url: str, port: int) -> Target:
    """Set up from an address of its own: the neighbour's budget is its own."""
    transport = httpx.AsyncHTTPTransport(local_address=SETUP)
    async with httpx.AsyncClient(
        base_url=base_url, trust_env=False, timeout=30, transport=transport
    ) as http:
        api = Api(http)

        async def finished(game_id: str) -> None:
            deadline = time.monotonic() + 60
            while (await api.game(game_id))["status"] != "FINISHED":
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)

        return await prepare(api, port, finished)


def _families() -> list[str]:
    """Every family, or those named in ``CATALOGUE_FAMILIES`` (comma-separated)."""
    named = os.environ.get("CATALOGUE_FAMILIES")
    if not named:
        return list(FAMILIES)
    chosen = [f.strip() for f in named.split(",")]
    unknown = set(chosen) - set(FAMILIES)
    assert not unknown, f"no such families: {unknown} (known: {list(FAMILIES)})"
    return chosen


@contextmanager
def _pinned(cmd: list[str]) -> Iterator[list[str]]:
    """The server on a CPU of its own, this process (the neighbours) and the
    abusers' on the others: what is measured is how the server shares its
    loop, not how the machine's few cores are shared with the load (the
    abusers decode every event they replay). Unpinned on one CPU."""
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2 or shutil.which("taskset") is None:
        yield cmd
        return
    server, *others = sorted(cpus)
    os.sched_setaffinity(0, others)
    try:
        yield ["taskset", "-c", str(server), *cmd]
    finally:
        os.sched_setaffinity(0, cpus)


def test_a_neighbour_is_served_beside_every_family(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'catalogue.sqlite3'}"}
    env.pop("REDIS_URL", None)
    env["MMK_LOG_LEVEL"] = "warning"
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port)]
    context = multiprocessing.get_context("spawn")
    failures: list[str] = []
    print()
    with _pinned(cmd) as cmd, serving(cmd, env, tmp_path / "server.log", port) as server:
        target = run(_target(server.url, port))
        time.sleep(REPLAYED)  # the finished game's events are replays now, not live ones
        for family in _families():
            alone = run(_alone(port, SECONDS - 2))  # as many samples as beside
            results = context.Queue()
            abusers = context.Process(
                target=_abusers, args=(port, target, family, SECONDS, results)
            )
            abusers.start()
            assert abusers.pid is not None
            os.setpriority(os.PRIO_PROCESS, abusers.pid, ABUSERS_NICE)
            time.sleep(1.0)  # the abusers connect and start
            beside = run(_alone(port, SECONDS - 2))
            outcomes: list[Outcome] = results.get(timeout=SECONDS + 30)
            abusers.join(30)
            p99_alone, p99_beside = _ms(alone, 99), _ms(beside, 99)
            ended = sum(o.ended_limited for o in outcomes)
            sent = sum(o.sent for o in outcomes)
            print(
                f"  {family:17s} neighbour alone p50 {_ms(alone, 50):5.2f} p99 {p99_alone:6.2f} ms"
                f" | beside p50 {_ms(beside, 50):5.2f} p99 {p99_beside:6.2f} ms"
                f" ({p99_beside / p99_alone:4.1f}x) | abusers: {sent} answered,"
                f" {ended}/4 ended RATE_LIMITED"
            )
            if p99_beside >= 50.0 or p99_beside > 3 * p99_alone:
                failures.append(f"{family}: p99 {p99_beside:.1f} ms vs {p99_alone:.1f} ms alone")
            if ended < 4:
                failures.append(f"{family}: {4 - ended} abusers not RATE_LIMITED at the end")
    assert not failures, failures
