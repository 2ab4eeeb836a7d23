"""Requests leave no reference cycles behind (issue #13): their garbage goes
by reference counting, so the process can run its cyclic collector rarely
(api/app.py ``GC_THRESHOLDS``, docs/decisions/0036). A document's first
validation is not counted: its result is cached per document."""

from __future__ import annotations

import gc
from collections import Counter

from tests.api.conftest import Client
from tests.api.support import game, players, send_action, start

OURS = ("api.", "domain.", "infra.", "graphql.", "strawberry.", "starlette.")


async def _play(client: Client, tokens: list[str], game_id: str, moves: int) -> None:
    for _ in range(moves):
        g = await game(client, None, game_id)
        seat = g["table"]["toAct"]
        g = await game(client, tokens[seat], game_id)
        await send_action(client, tokens[seat], game_id, g["viewer"]["legalActions"][0])
        await client.run("{ me { id } }", tokens[seat])


async def test_queries_and_moves_leave_no_cycles(client: Client) -> None:
    tokens = await players(client, 3)
    game_id = await start(client, tokens)
    await _play(client, tokens, game_id, 2)  # every document validated once
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        await _play(client, tokens, game_id, 12)
        gc.collect()
        found = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    ours = {k: n for k, n in found.items() if k.startswith(OURS)}
    assert ours == {}, f"left for the cyclic collector: {ours}"
