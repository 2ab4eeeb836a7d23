"""Introspection the cache has never seen, off the event loop or on it
(docs/decisions/0054), run by ``make bench``.

One ``mmk serve`` as served (misses run in the introspection thread) and
one whose introspection goes through Strawberry's own executor on the event
loop (the cache's hook left out), in turns in the same run. In each, a
client sends a new deep introspection document (its alias differs) as fast
as it is answered, with the cost budgets off (this measures the loop, not
the budgets), while a neighbour sends ``{ __typename }`` every 20 ms; the
neighbour alone is the reference. Target: off the loop, the neighbour's
p99 beside the misses is at most half what it is on the loop.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from tests.attacks import Outcome, Target, http_abuser, introspection, neighbour
from tests.bench.http_load import HOST, free_port, run, serving

SECONDS = 8.0
PAUSE = 0.02
ON_THE_LOOP = (
    "import sys, api.graphql.introspection as i; "
    "i.IntrospectionCache.idle = property(lambda self: True); "
    "from api.cli import main; sys.argv = ['mmk'] + sys.argv[1:]; main()"
)


async def _beside(port: int) -> tuple[list[float], Outcome]:
    stop, quiet = asyncio.Event(), asyncio.Event()
    out = Outcome()
    target = Target(port, "", "")
    sender = asyncio.create_task(http_abuser(target, introspection, "127.0.0.20", stop, out))
    await asyncio.sleep(0.5)
    asyncio.get_running_loop().call_later(SECONDS, quiet.set)
    times = await neighbour(port, quiet, PAUSE)
    stop.set()
    await asyncio.gather(sender, return_exceptions=True)
    return times, out


async def _alone(port: int) -> list[float]:
    quiet = asyncio.Event()
    asyncio.get_running_loop().call_later(SECONDS / 2, quiet.set)
    return await neighbour(port, quiet, PAUSE)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3


def test_introspection_misses_off_the_loop_spare_the_neighbours(tmp_path: Path) -> None:
    figures: dict[str, tuple[float, float, int]] = {}
    for name, launcher in (
        ("off the loop", ["-m", "api.cli"]),
        ("on the loop", ["-c", ON_THE_LOOP]),
    ):
        port = free_port()
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / name.replace(' ', '-')}.db"}
        env.pop("REDIS_URL", None)
        env.update(
            MMK_LOG_LEVEL="warning", MMK_RATE_QUERY_COST_TOKEN="0", MMK_RATE_QUERY_COST_IP="0"
        )
        cmd = [sys.executable, *launcher, "serve", "--host", HOST, "--port", str(port)]
        with serving(cmd, env, tmp_path / f"{port}.log", port):
            alone = run(_alone(port))
            start = time.monotonic()
            beside, out = run(_beside(port))
            rate = out.sent / (time.monotonic() - start)
        figures[name] = (_p99(alone), _p99(beside), out.sent)
        print(
            f"\n  {name:12s} neighbour p99 alone {_p99(alone):6.2f} ms, beside the misses"
            f" {_p99(beside):6.2f} ms ({out.sent} misses answered, {rate:.0f}/s)"
        )
    assert figures["off the loop"][1] <= figures["on the loop"][1] / 2
