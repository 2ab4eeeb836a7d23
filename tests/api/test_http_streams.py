"""Subscriptions streamed over HTTP, in process: the heartbeat merge that
always closes its source (api/fast/http_transports.py), the multipart and
SSE framing, and a client that leaves while frames wait for it."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing

import pytest

from api.fast.http_transports import with_heartbeats
from domain.channels import game_channel
from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, MULTIPART, http_stream, next_result, view_of
from tests.api.support import start
from tests.api.test_subscriptions import EVENTS


class Source:
    """A text source that says when it was closed."""

    def __init__(self, chunks: int, pause: float = 0.0) -> None:
        self.chunks, self.pause = chunks, pause
        self.closed = asyncio.Event()

    async def __call__(self) -> AsyncGenerator[str, None]:
        try:
            for i in range(self.chunks):
                if self.pause:
                    await asyncio.sleep(self.pause)
                yield f"c{i}"
            await asyncio.Event().wait()  # then quiet: live and nothing happens
        finally:
            self.closed.set()


def merged(source: Source, interval: float = 60.0) -> AsyncGenerator[str, None]:
    return with_heartbeats(source(), lambda: "hb", interval, initial=True, opening="open|")


async def test_the_opening_and_heartbeats_frame_the_chunks() -> None:
    source = Source(2, pause=0.03)
    stream = merged(source, interval=0.01)
    got = [await anext(stream) for _ in range(12)]
    await stream.aclose()
    assert got[0] == "open|hb"
    assert [c for c in got if c != "hb"][1:] == ["c0", "c1"]
    assert got.count("hb") >= 4  # beats while the source was quiet
    assert source.closed.is_set()


async def test_leaving_while_a_chunk_waits_closes_the_source_at_once() -> None:
    source = Source(10)
    stream = merged(source)
    assert await anext(stream) == "open|hb"
    assert await anext(stream) == "c0"
    await asyncio.sleep(0.01)  # the reader has c1 queued and waits to put c2
    await stream.aclose()
    assert source.closed.is_set()


async def test_a_cancelled_consumer_that_closes_its_stream_closes_the_source() -> None:
    source = Source(10)

    async def consume() -> None:  # as ClosingStreamingResponse does
        async with aclosing(merged(source)) as stream:
            async for _ in stream:
                await asyncio.sleep(10)  # a response stuck sending

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.closed.is_set()


@pytest.mark.parametrize("reading", [True, False], ids=["reading", "stuck"])
@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_a_client_leaving_mid_backlog_lets_go_of_everything(
    client: Client, transport: str, reading: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The regression: a client gone while frames waited to be taken left
    the subscription's generators to the garbage collector, which failed to
    close them (tracebacks) and kept the bus subscription until then. A
    ``stuck`` client takes no byte more after the first result: the response
    waits in a send when the client leaves."""
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    view = view_of(client.h)
    channel = game_channel(game_id, 1)
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        async with http_stream(
            view,
            transport,
            EVENTS,
            {"id": game_id, "after": 0},
            f"Bearer {tokens[1]}",
            stuck=not reading,
        ) as items:
            first = await next_result(items, 2)
            assert first is not None and first["data"]["gameEvents"]["seq"] == 1
            assert client.h.bus.subscriber_count(channel) == 1
            await asyncio.sleep(0.02)  # the server goes on sending, or waits to
        assert client.h.bus.subscriber_count(channel) == 0  # at once, not at the next GC
    gc.collect()
    await asyncio.sleep(0.05)  # any finalizer the collector scheduled runs now
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def test_multipart_parts_and_sse_events_carry_the_same_results(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    last = client.h.store.games[game_id].last_seq
    view = view_of(client.h)
    seen = {}
    for transport in HTTP_TRANSPORTS:
        async with http_stream(
            view, transport, EVENTS, {"id": game_id, "after": 0}, f"Bearer {tokens[2]}"
        ) as items:
            seen[transport] = [await next_result(items, 2) for _ in range(last)]
    assert seen[MULTIPART] == seen["sse"]
    assert [r["data"]["gameEvents"]["seq"] for r in seen[MULTIPART] if r] == list(
        range(1, last + 1)
    )
