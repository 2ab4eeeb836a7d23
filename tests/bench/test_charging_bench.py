"""What charging the measured cost costs (issue #22, docs/decisions/0049),
run by ``make bench``.

Two ``mmk serve`` processes in the same run, the cost budgets on in both
(so high that nothing is refused): one as served, charging every request
what it cost (the meter, the settlement, ``extensions.cost``, the share of
the loop that makes a caller dear), one without the settler (nothing
measured nor settled: a request is charged its estimate before it runs, as
before #22). Each answers ``{ __typename }`` from 40 callers (addresses) in
turn, in alternating turns; the server's CPU time per request is read from
/proc. Target: charging adds under 5% to a ``{ __typename }`` request. A
third server, as served, takes the same requests from one caller: a dear
one, held from its requests' start (docs/decisions/0055), reported beside.
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


CALLERS = 40
"""Addresses the requests come from, in turn, one keep-alive connection
each: each caller takes 1/40 of the loop, under the share that makes a
caller dear (5 %), as many players do."""


async def _turn(server: Server, callers: int) -> float:
    """Server CPU seconds per request, over :data:`REQUESTS` requests sent
    one at a time from ``callers`` addresses in turn."""
    connections = [
        await asyncio.open_connection(HOST, server.port, local_addr=(f"127.0.5.{i + 1}", 0))
        for i in range(callers)
    ]
    request = (
        f"POST /graphql HTTP/1.1\r\nHost: {HOST}:{server.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(TRIVIAL)}\r\n\r\n"
    ).encode() + TRIVIAL
    for i in range(200):  # warm
        reader, writer = connections[i % callers]
        writer.write(request)
        await read_response(reader)
    before = server.cpu_seconds()
    for i in range(REQUESTS):
        reader, writer = connections[i % callers]
        writer.write(request)
        status, _ = await read_response(reader)
        assert status == 200
    after = server.cpu_seconds()
    for _, writer in connections:
        writer.close()
    assert before is not None and after is not None
    return (after - before) / REQUESTS


NOT_CHARGED = (
    "import sys, api.app as a; build = a.build\n"
    "def unmetered(settings, **kwargs):\n"
    "    container = build(settings, **kwargs)\n"
    "    container.settler = None\n"
    "    return container\n"
    "a.build = unmetered\n"
    "from api.cli import main; sys.argv = ['mmk'] + sys.argv[1:]; main()"
)


def test_charging_adds_little_to_a_trivial_request(tmp_path: Path) -> None:
    servers: dict[str, list[float]] = {"charged": [], "not charged": [], "held": []}
    launchers = {
        "charged": ["-m", "api.cli"],
        "not charged": ["-c", NOT_CHARGED],
        "held": ["-m", "api.cli"],
    }
    # "held": one caller sending back to back takes the whole loop, so it is
    # dear and held from its requests' start (decision 0055): its price,
    # reported beside; the others' requests come from CALLERS addresses.
    callers = {"charged": CALLERS, "not charged": CALLERS, "held": 1}
    with ExitStack() as stack:
        running: dict[str, Server] = {}
        for name, launcher in launchers.items():
            port = free_port()
            env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / name}.sqlite3"}
            env.pop("REDIS_URL", None)
            env.update(
                MMK_LOG_LEVEL="warning",
                MMK_ACCESS_LOG="off",
                MMK_RATE_QUERY_COST_TOKEN=str(10**12),
                MMK_RATE_QUERY_COST_IP=str(10**12),
            )
            # both servers on the last CPU, this client on the others: where a
            # process runs (beside the client or not) costs more than charging
            cpu = str((os.cpu_count() or 1) - 1)
            cmd = ["taskset", "-c", cpu, sys.executable, *launcher, "serve", "--host", HOST]
            cmd += ["--port", str(port)]
            running[name] = stack.enter_context(serving(cmd, env, tmp_path / f"{name}.log", port))
        everywhere = os.sched_getaffinity(0)
        os.sched_setaffinity(0, set(range((os.cpu_count() or 2) - 1)) or {0})
        try:
            for _ in range(TURNS):
                for name, server in running.items():
                    servers[name].append(run(_turn(server, callers[name])))
        finally:
            os.sched_setaffinity(0, everywhere)
    charged = statistics.median(servers["charged"]) * 1e6
    plain = statistics.median(servers["not charged"]) * 1e6
    held = statistics.median(servers["held"]) * 1e6
    overhead = (charged - plain) / plain
    print(
        f"\n  {{ __typename }}: server CPU {plain:.1f} us a request not charged,"
        f" {charged:.1f} us charged: {overhead:+.1%};"
        f" {held:.1f} us charged and held (a dear caller): {(held - plain) / plain:+.1%}"
        f"\n  turns (us): charged {[round(x * 1e6, 1) for x in servers['charged']]},"
        f" not charged {[round(x * 1e6, 1) for x in servers['not charged']]},"
        f" held {[round(x * 1e6, 1) for x in servers['held']]}"
    )
    assert overhead < 0.05
