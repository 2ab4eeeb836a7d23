"""A subscriber that stops reading (issue #6, "Faults"): on a real server
process, it cannot stall other subscribers or HTTP, it is dropped once its
TCP buffers are full for ``MMK_WS_SEND_TIMEOUT`` seconds
(``api/fast/ws_protocol.py``), and the server's memory stays bounded."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.client import Api, Person, metric
from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, own_server
from tests.e2e.play import read_until, subscribe_events
from tests.e2e.stuck_ws import StuckSubscriber
from tests.e2e.wsclient import TRANSPORT_WS, GraphQLWebSocket

pytestmark = pytest.mark.e2e

SEND_TIMEOUT = 3  # MMK_WS_SEND_TIMEOUT of the server under test, seconds
# Backlog replays the stuck client asks for (~110 KB each on the wire): more
# than the kernel's socket buffers take (~2-3 MB on loopback), so the
# server's own writes block. At most 20 subscriptions per connection: it
# completes the oldest and subscribes again.
OPEN_REPLAYS, MORE_REPLAYS = 18, 40
SEATS = 8  # bots per game: the longest games, the most events


def bots_only_env() -> dict[str, str]:
    return {
        "MMK_WS_SEND_TIMEOUT": str(SEND_TIMEOUT),
        "MMK_BUS_QUEUE_LIMIT": "100",
        # no request limits: this test is about buffers, not rates
        "MMK_RATE_SUBSCRIPTIONS_TOKEN": "0",
        "MMK_RATE_SUBSCRIPTIONS_IP": "0",
        "MMK_RATE_MUTATIONS_TOKEN": "0",
        "MMK_RATE_MUTATIONS_IP": "0",
        "MMK_REPLAY_RATE": "0",
    }


async def bots_game(api: Api, seed: str) -> tuple[str, Person]:
    """A lobby of bots only (its host watches), not started."""
    host = await api.new_person(f"host-{seed}")
    game_id = await api.create_game(host, seatCount=SEATS, seed=seed, practice=True, takeSeat=False)
    for _ in range(SEATS):
        await api.add_bot(host, game_id, "RANDOM")
    return game_id, host


async def test_a_subscriber_that_stops_reading_is_dropped_and_stalls_nobody(
    tmp_path: Path,
) -> None:
    with own_server(tmp_path, f"sqlite:///{tmp_path}/stuck.sqlite3", **bots_only_env()) as (
        srv,
        _,
    ):
        await _scenario(srv)
    assert_no_leak(srv)
    # Dropped for not reading: its buffers full for MMK_WS_SEND_TIMEOUT, or,
    # when a loaded machine made the replays too slow to fill them first,
    # its pings unanswered (it reads nothing, pongs included)
    dropped = re.search(
        r"WebSocket (dropped: client (not reading|no pong)|closed: client answered no ping)",
        srv.log.read_text(),
    )
    assert dropped is not None, "the server never said why it dropped the stuck client"


async def _scenario(srv: Server) -> None:
    async with httpx.AsyncClient(base_url=srv.base_url, timeout=10, trust_env=False) as http:
        api = Api(http)
        # A finished game: each subscription from seq 0 replays its whole log.
        done, host = await bots_game(api, "stuck-done")
        await api.start(host, done)
        deadline = time.monotonic() + 90  # a wait, not a bound: ~3 s alone, 30+ under load
        while (await api.game(done))["status"] != "FINISHED":
            assert time.monotonic() < deadline, "the bots-only game does not end"
            await asyncio.sleep(0.1)
        rss_before = await metric(http, "process_resident_memory_bytes", default=None)

        live, host = await bots_game(api, "stuck-live")
        watcher = GraphQLWebSocket(srv.ws_url, TRANSPORT_WS)
        await watcher.connect()
        stuck = StuckSubscriber(srv.ws_url)
        try:
            watching = await subscribe_events(watcher, live)
            stuck.subscribe(live)
            replays = [stuck.subscribe(done) for _ in range(OPEN_REPLAYS)]
            for _ in range(MORE_REPLAYS):  # megabytes the client never reads
                await asyncio.sleep(0.05)
                stuck.complete(replays.pop(0))
                replays.append(stuck.subscribe(done))
            await api.start(host, live)
            # The healthy watcher gets every event of the live game, promptly,
            # and HTTP answers fast, while the stuck client's buffers are full.
            started = time.monotonic()
            events: list[dict[str, object]] = []
            reading = asyncio.create_task(read_until(watching, events, silence=5))
            slowest = 0.0
            while not reading.done():
                t = time.monotonic()
                assert (await http.get("/healthz")).status_code == 200
                await api.game(live)
                slowest = max(slowest, time.monotonic() - t)
                await asyncio.sleep(0.05)
            await reading
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            assert time.monotonic() - started < 30, "the live game was slowed down"
            assert slowest < 2.0, f"an HTTP round trip took {slowest:.2f} s"

            # The stuck connection is dropped: its subscriptions end, on the
            # bus too; only the watcher's remains, untouched.
            deadline = time.monotonic() + SEND_TIMEOUT + 15
            while (
                await metric(http, "mmk_subscriptions_active", 'subscription="gameEvents"', None)
                > 1
            ):
                assert time.monotonic() < deadline, "the stuck subscriber was never dropped"
                with contextlib.suppress(OSError):  # more pressure (larger kernel buffers)
                    stuck.complete(replays.pop(0))
                    replays.append(stuck.subscribe(done))
                await asyncio.sleep(0.2)
            assert await metric(http, "mmk_bus_subscribers", default=None) <= 1
            # Its subscriptions may end first (a slow subscriber's), its
            # unsent bytes still reset the connection: a wait of its own, as
            # long as a loaded machine needs (it ends as soon as it happens).
            deadline = time.monotonic() + SEND_TIMEOUT + 60
            while not stuck.dropped():
                assert time.monotonic() < deadline, "the server never reset the stuck connection"
                await asyncio.sleep(0.2)
            assert not watcher.closed.is_set(), "the healthy watcher was dropped too"
            rss_after = await metric(http, "process_resident_memory_bytes", default=None)
            assert rss_after - rss_before < 64 * 2**20, (rss_before, rss_after)
        finally:
            stuck.close()
            await watcher.close()
