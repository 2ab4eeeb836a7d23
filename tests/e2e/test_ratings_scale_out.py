"""Rated games on two instances (PostgreSQL + Redis, issue #26): two people
play three rated games at once, each through both instances (one person on
each); each game is rated exactly once as it ends, each player's and the
GREEDY bot's games chain 1 to 3 in the games' ``GameEnded`` (none lost, none
counted twice), the players' ratings read on either instance agree, and
``mmk ratings rebuild --check`` finds the live ratings equal to the log's."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.conftest import ROOT
from tests.e2e.play import autoplay, together

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(240)]

GAMES = 3
ENDED = "seq type ... on GameEnded { ratings { seat games after } }"
RATINGS = """query($p: ID!) { player(id: $p) { ratings { pool rating games } } }"""


def _first(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    return actions[0]


async def test_rated_games_ending_at_once_on_two_instances_are_rated_once(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    with fresh_backend(database_url, redis_url, "rated") as backend:
        with cluster(backend, tmp_path) as (a, b):
            chains, seen = await _play(a.base_url, b.base_url)
        env = {**os.environ, "DATABASE_URL": backend.database_url}
        check = subprocess.run(
            [sys.executable, "-m", "api.cli", "ratings", "rebuild", "--check"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    for seat, chain in chains.items():  # ann, bob, the GREEDY bot
        assert sorted(chain) == list(range(1, GAMES + 1)), (seat, chain)
    assert seen[:2] == seen[2:]  # either instance reads the same ratings
    assert all(p["ratings"][0]["games"] == GAMES for p in seen)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"from {GAMES} rated game(s); 0 differed" in check.stderr


async def _play(url_a: str, url_b: str) -> tuple[dict[int, list[int]], list[dict[str, Any]]]:
    """The games, played at once; each seat's games counts, and both
    players' ratings as each instance reads them."""
    async with (
        httpx.AsyncClient(base_url=url_a, timeout=15, trust_env=False) as ha,
        httpx.AsyncClient(base_url=url_b, timeout=15, trust_env=False) as hb,
    ):
        api_a, api_b = Api(ha), Api(hb)
        ann, bob = await api_a.new_person("ann"), await api_b.new_person("bob")
        games = []
        for k in range(GAMES):
            host = api_a if k % 2 else api_b
            game_id = await host.create_game(ann, seatCount=3, rated=True)
            await api_b.join(bob, game_id)
            await host.add_bot(ann, game_id, "GREEDY")
            await host.start(ann, game_id)
            games.append(game_id)
        rng = random.Random(26)
        await together(
            *(autoplay(api_a, ann, 0, g, rng, choose=_first) for g in games),
            *(autoplay(api_b, bob, 1, g, rng, choose=_first) for g in games),
            timeout=180,
        )
        chains: dict[int, list[int]] = {0: [], 1: [], 2: []}
        for g in games:
            (ended,) = [e for e in await api_b.events(g, None, ENDED) if e["type"] == "GameEnded"]
            assert [r["seat"] for r in ended["ratings"]] == [0, 1, 2]
            for r in ended["ratings"]:
                chains[r["seat"]].append(r["games"])
        seen = [
            await api.ok("player", RATINGS, {"p": p.id})
            for api in (api_a, api_b)
            for p in (ann, bob)
        ]
        return chains, seen
