"""EXPERT's thinking off the event loop (issue #26), run by ``make bench``:
one ``mmk serve`` process (SQLite file, in-process bus) with games of four
EXPERT bots playing on, while a probe asks ``/healthz`` and a GraphQL
``serverTime`` every 20 ms. Measured in one run, in turn:

- EXPERT in its worker process (``MMK_BOT_WORKERS=1``, as served);
- reference: EXPERT inline on the event loop (``MMK_BOT_WORKERS=0``),
  what the worker pool exists to avoid.

Target: with the worker, the probe's p99 under 20 ms (the capacity ramp's
/healthz bound) while the bots keep moving."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

import httpx

from tests.e2e.client import Api
from tests.e2e.own_server import own_server
from tests.integration.databases import sqlite_url

GAMES = 6
MEASURE = float(os.environ.get("EXPERT_BENCH_MEASURE", "20"))  # seconds a mode
PROBE_EVERY = 0.02
HEALTH_P99_MS = 20.0


async def _probe(base_url: str) -> tuple[list[float], list[float], int]:
    """Latencies of /healthz and serverTime (ms), and the EXPERT moves made."""
    async with httpx.AsyncClient(base_url=base_url, timeout=30, trust_env=False) as http:
        api = Api(http)
        host = await api.new_person("host")
        games = []
        for _ in range(GAMES):
            game_id = await api.create_game(host, seatCount=4, takeSeat=False)
            for _ in range(4):
                await api.add_bot(host, game_id, "EXPERT")
            await api.start(host, game_id)
            games.append(game_id)
        start = [(await api.game(g))["lastSeq"] for g in games]
        health: list[float] = []
        query: list[float] = []
        end = time.monotonic() + MEASURE
        while time.monotonic() < end:
            t = time.perf_counter()
            r = await http.get("/healthz")
            health.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200
            t = time.perf_counter()
            await api.data("{ serverTime }")
            query.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(PROBE_EVERY)
        last = [(await api.game(g))["lastSeq"] for g in games]
        moved = sum(last) - sum(start)
        return health, query, moved


def _line(name: str, ms: list[float]) -> str:
    p99 = statistics.quantiles(ms, n=100)[98]
    return f"{name:<22} p50 {statistics.median(ms):7.2f} ms  p99 {p99:7.2f} ms"


def test_expert_thinks_off_the_event_loop(tmp_path: Path) -> None:
    results = {}
    for workers in ("1", "0"):
        here = tmp_path / f"workers-{workers}"
        here.mkdir()
        with own_server(here, sqlite_url(here), MMK_BOT_WORKERS=workers) as (srv, _):
            results[workers] = asyncio.run(_probe(srv.base_url))
    print(
        f"\n{GAMES} games of 4 EXPERT bots, probes every {PROBE_EVERY * 1000:.0f} ms, "
        f"{MEASURE:.0f} s a mode"
    )
    for workers, label in (("1", "worker process"), ("0", "inline (reference)")):
        health, query, moved = results[workers]
        print(f"EXPERT {label}: {moved} events logged")
        print("  " + _line("/healthz", health))
        print("  " + _line("serverTime", query))
    health, query, moved = results["1"]
    inline = statistics.quantiles(results["0"][0], n=100)[98]
    served = statistics.quantiles(health, n=100)[98]
    print(f"p99 /healthz inline / worker: {inline / served:.1f}x")
    assert moved > 0, "the bots did not move"
    assert served <= HEALTH_P99_MS, f"/healthz p99 {served:.1f} ms with EXPERT in a worker"
