"""What charging the measured cost costs (issue #22, docs/decisions/0049),
run by ``make bench``.

Two ``mmk serve`` processes in the same run: one charging every request what
it cost (the cost budgets on, so high that nothing is refused: the meter,
the reservation and the settlement all run), one with the cost budgets off
(nothing measured, nothing charged). Each answers ``{ __typename }`` over
one keep-alive connection, in alternating turns; the server's CPU time per
request is read from /proc. Target: charging adds under 5% to a
``{ __typename }`` request.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path

from tests.attacks import TRIVIAL, read_response
from tests.bench.http_load import HOST, Server, free_port, run, serving

REQUESTS = 4_000
TURNS = 8


async def _turn(server: Server) -> float:
    """Server CPU seconds per request, over :data:`REQUESTS` requests."""
    reader, writer = await asyncio.open_connection(HOST, server.port)
    request = (
        f"POST /graphql HTTP/1.1\r\nHost: {HOST}:{server.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(TRIVIAL)}\r\n\r\n"
    ).encode() + TRIVIAL
    for _ in range(200):  # warm
        writer.write(request)
        await read_response(reader)
    before = server.cpu_seconds()
    for _ in range(REQUESTS):
        writer.write(request)
        status, _ = await read_response(reader)
        assert status == 200
    after = server.cpu_seconds()
    writer.close()
    assert before is not None and after is not None
    return (after - before) / REQUESTS


def test_charging_adds_little_to_a_trivial_request(tmp_path: Path) -> None:
    servers: dict[str, list[float]] = {"charged": [], "not charged": []}
    budgets = {
        "charged": str(10**12),  # on: measured and charged, never refused
        "not charged": "0",
    }
    with ExitStack() as stack:
        running: dict[str, Server] = {}
        for name, budget in budgets.items():
            port = free_port()
            env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / name}.sqlite3"}
            env.pop("REDIS_URL", None)
            env.update(
                MMK_LOG_LEVEL="warning",
                MMK_ACCESS_LOG="off",
                MMK_RATE_QUERY_COST_TOKEN=budget,
                MMK_RATE_QUERY_COST_IP=budget,
            )
            cmd = [sys.executable, "-m", "api.cli", "serve", "--host", HOST, "--port", str(port)]
            running[name] = stack.enter_context(serving(cmd, env, tmp_path / f"{name}.log", port))
        for _ in range(TURNS):
            for name, server in running.items():
                servers[name].append(run(_turn(server)))
    charged = statistics.median(servers["charged"]) * 1e6
    plain = statistics.median(servers["not charged"]) * 1e6
    overhead = (charged - plain) / plain
    print(
        f"\n  {{ __typename }}: server CPU {plain:.1f} us a request not charged,"
        f" {charged:.1f} us charged: {overhead:+.1%}"
        f"\n  turns (us): charged {[round(x * 1e6, 1) for x in servers['charged']]},"
        f" not charged {[round(x * 1e6, 1) for x in servers['not charged']]}"
    )
    assert overhead < 0.05
