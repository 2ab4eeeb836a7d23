"""Why ``LeanRunner`` (api/fast/lean_runner.py) replaces Strawberry's own
extension runner: CPU per subscription frame with each, in the same run
(docs/decisions/0019 and 0032), run by ``make bench``.

In process, over the use cases on fakes: ``SUBSCRIBERS`` spectator
subscriptions (``schema.subscribe``) of a game in its lobby receive the
events of a finished bots-only game (but its ``GameEnded``, which ends a
stream), published live on the lobby game's public channel (as the
publisher does: one object per audience), once on the schema as built
(``LeanRunner``) and once on the same schema with Strawberry's
``SchemaExtensionsRunner``, in turns, ``ROUNDS`` times. Frames are shared
per audience (api/fast/frames.py) in both, so what differs is the
per-frame work of the runner. The decision stands while LeanRunner saves
more than 5 % of the CPU per frame.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import replace
from typing import Any

from strawberry.extensions.runner import SchemaExtensionsRunner

from api.graphql.schema import GameSchema, build_schema
from domain.bots.strategy import Strategy
from domain.channels import game_channel
from domain.game.events import GameEnded
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import create_player
from domain.services.transaction import Request
from tests.api.conftest import Client
from tests.fakes import Harness, harness

SUBSCRIBERS = 60
ROUNDS = 5
MIN_SAVING = 0.05
BATCH = 10  # events a move publishes at most, about
EVENTS = """subscription($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after) { gameId seq type at data } }"""


async def _lobby_game(h: Harness) -> str:
    host = (await create_player(h.deps, "watcher")).player.id
    made = await create_game(h.deps, Request(host, "op", {}), NewGame(4, take_seat=False))
    return made.game_id


async def _finished_game(h: Harness) -> tuple[str, int]:
    host = (await create_player(h.deps, "host")).player.id
    made = await create_game(h.deps, Request(host, "op", {}), NewGame(4, take_seat=False))
    for strategy in (Strategy.GREEDY, Strategy.RANDOM) * 2:
        await add_bot(h.deps, Request(host, "op", {}), made.game_id, strategy, None)
    await start_game(h.deps, Request(host, "op", {}), made.game_id)
    await h.drain()
    return made.game_id, h.store.games[made.game_id].last_seq


class Replay:
    """A finished game's public events (but ``GameEnded``), published on the
    public channel of a new game in its lobby each round (its streams stay
    open, and no frame of a round is cached yet)."""

    def __init__(self, h: Harness, source: str) -> None:
        self.h = h
        self.events = [
            e.seen_by(None) for e in h.store.log(source) if not isinstance(e.event, GameEnded)
        ]

    async def fan_out(self, schema: GameSchema, client: Client, events: str = EVENTS) -> float:
        """CPU seconds for every subscriber to receive every event live."""
        game_id = await _lobby_game(self.h)
        first = self.h.store.games[game_id].last_seq + 1
        streams: list[Any] = []
        for _ in range(SUBSCRIBERS):
            stream = await schema.subscribe(
                events,
                variable_values={"id": game_id, "after": first - 1},
                context_value=client.context(websocket=True),
            )
            streams.append(stream)
        channel = game_channel(game_id, None)
        # a stream subscribes on its first read: start them all, then publish
        firsts: list[asyncio.Future[Any] | None] = [
            asyncio.ensure_future(stream.__anext__()) for stream in streams
        ]
        while self.h.bus.subscriber_count(channel) < SUBSCRIBERS:
            await asyncio.sleep(0)
        start = time.process_time()
        live = [replace(e, game_id=game_id, seq=first + i) for i, e in enumerate(self.events)]
        for k in range(0, len(live), BATCH):
            batch = live[k : k + BATCH]
            await self.h.bus.publish([(channel, e) for e in batch])
            for i, stream in enumerate(streams):
                for _ in batch:
                    pending, firsts[i] = firsts[i], None
                    result = await (pending if pending is not None else stream.__anext__())
                    assert result.errors is None, result.errors
        spent = time.process_time() - start
        for stream in streams:
            await stream.aclose()
        return spent


async def fan_outs(a: GameSchema, b: GameSchema) -> tuple[list[float], list[float], int]:
    """CPU seconds of :meth:`Replay.fan_out` on schema ``a`` and on ``b``,
    ``ROUNDS`` times in turns after a warm-up of each, and the events."""
    h = harness()
    game_id, _ = await _finished_game(h)
    client, replay = Client(h), Replay(h, game_id)
    await replay.fan_out(a, client)
    await replay.fan_out(b, client)
    with_a: list[float] = []
    with_b: list[float] = []
    for _ in range(ROUNDS):
        with_a.append(await replay.fan_out(a, client))
        with_b.append(await replay.fan_out(b, client))
    return with_a, with_b, len(replay.events)


def test_lean_runner_saves_cpu_per_frame() -> None:
    lean_schema, stock_schema = build_schema(), build_schema()
    stock_schema.create_extensions_runner = SchemaExtensionsRunner  # type: ignore[method-assign]
    with_lean, with_stock, events = asyncio.run(fan_outs(lean_schema, stock_schema))
    frames = SUBSCRIBERS * events
    lean = statistics.median(with_lean) / frames * 1e6
    stock = statistics.median(with_stock) / frames * 1e6
    saving = 1 - lean / stock
    print(
        f"\nlive subscription frames, {SUBSCRIBERS} spectators x {events} events, median of "
        f"{ROUNDS} rounds in turns: LeanRunner {lean:.1f} us CPU/frame, Strawberry's "
        f"runner {stock:.1f} us/frame; LeanRunner saves {saving:.0%} (decision kept above "
        f"{MIN_SAVING:.0%})"
    )
    assert saving > MIN_SAVING, f"LeanRunner saves only {saving:.0%}: remove it (0032)"
