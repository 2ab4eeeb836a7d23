"""Scale-out on a Redis Cluster, end to end (docs/decisions/0068): two
``mmk serve`` instances on one PostgreSQL database and a local Redis Cluster
(three masters, three replicas: tests/redis_cluster.py), ``REDIS_URL``
naming it with ``redis+cluster://``.

In the middle of a game, the master that owns the game's hash slot is
SIGKILLed. Moves keep committing through both instances while its replica
takes over; the buses subscribe again on the new master and their
subscribers backfill from the log. Afterwards every stream (seats and
spectators, on both instances, over real WebSockets) equals its audience's
log, read with the ``gameEvents`` query, and nothing of another audience
leaked (tests/e2e/test_scale_out.py's checks).
"""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.e2e.client import metric
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.play import Seen, assert_quiet, new_game
from tests.e2e.test_scale_out import (
    STEP_TIMEOUT,
    check_streams,
    final_views,
    follow,
    nodes,
    play_moves,
)
from tests.e2e.wsclient import LEGACY_WS
from tests.redis_cluster import local_cluster, slot_of

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(120)]

MOVES_BEFORE = 6  # people's moves before the master dies
MOVES_DURING = 4  # ... and while its replica takes over


async def test_the_master_of_a_games_slot_dies_mid_game_and_no_stream_loses_an_event(
    database_url: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    with (
        local_cluster(tmp_path / "redis") as redis_cluster,
        fresh_backend(database_url, redis_cluster.url, "redis-cluster") as backend,
        cluster(backend, tmp_path) as pair,
    ):
        async with nodes(pair) as (a, b), AsyncExitStack() as stack:
            game_id, people = await new_game(a.api, "failover", 3, ["GREEDY"], ratSeat=0)
            followers = [
                await follow(stack, a, "seat0@A", people[0], game_id),
                await follow(stack, b, "seat1@B", people[1], game_id, LEGACY_WS),
                await follow(stack, a, "seat2@A", people[2], game_id),
                await follow(stack, b, "seat2@B", people[2], game_id),
                await follow(stack, a, "anon@A", None, game_id, LEGACY_WS),
                await follow(stack, b, "anon@B", None, game_id),
            ]
            readers = [asyncio.create_task(f.read_to_end()) for f in followers]
            stack.callback(lambda: [t.cancel() for t in readers])
            await b.api.start(people[0], game_id)
            seen = {seat: Seen() for seat in range(3)}
            rng = random.Random("cluster-failover")
            await play_moves([a, b], people, game_id, rng, seen, moves=MOVES_BEFORE)

            slot = slot_of(game_id)
            master = redis_cluster.owner(slot)
            redis_cluster.kill(master)  # SIGKILL, by pid
            killed = time.monotonic()
            made = await play_moves([b, a], people, game_id, rng, seen, moves=MOVES_DURING)
            assert made == MOVES_DURING, "moves commit while the master is away"
            promoted = await asyncio.to_thread(redis_cluster.wait_failover, slot, master)
            failover = time.monotonic() - killed
            assert promoted is not master

            await play_moves([a, b], people, game_id, rng, seen)  # to the end
            async with asyncio.timeout(STEP_TIMEOUT + 30):
                await asyncio.gather(*readers)
            await asyncio.gather(*(assert_quiet(f.op) for f in followers if f.op))
            await final_views(a.api, people, game_id, seen)
            await check_streams(a.api, game_id, followers, people, seen)
            reconnects = [await metric(n.api.http, "mmk_bus_reconnects_total") for n in (a, b)]
    assert all(r >= 1 for r in reconnects), f"each bus subscribed again: {reconnects}"
    print(
        f"\nfailover of the game's master took {failover:.1f} s; bus reconnects {reconnects}; "
        f"the whole test {time.monotonic() - started:.1f} s"
    )
