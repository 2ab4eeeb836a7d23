"""Pushed frames written at once (issue #28, api/fast/push.py): a frame
with nothing waiting before it goes to the connection's ``send_now`` in the
publisher's task, with no task; one the socket does not take at once waits
in the outbox, and every later frame waits behind it, so the order on the
wire stays the stream's; a frame of an operation the client stopped is
never written."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from api.fast.push import Outbox, Pusher
from api.fast.ws_protocol import PROTOCOL_KEY


class Connection:
    """The protocol's ``send_now`` (``takes``: whether it takes a frame now)
    and the socket's ``send_text`` (the outbox's writer)."""

    def __init__(self) -> None:
        self.takes = True
        self.wire: list[str] = []
        self.ws = self
        self.scope = {PROTOCOL_KEY: weakref.WeakMethod(self.send_now)}

    def send_now(self, text: str) -> bool:
        if self.takes:
            self.wire.append(text)
        return self.takes

    async def send_text(self, text: str) -> None:
        await asyncio.sleep(0)
        self.wire.append(text)


def pusher(outbox: Outbox, alive: list[bool] | None = None) -> Pusher:
    state = alive if alive is not None else [True]
    return Pusher(outbox, "1", "next", lambda: state[0])


def frames(conn: Connection) -> list[Any]:
    return [text.rsplit('"payload":', 1)[1][:-1] for text in conn.wire]


async def test_a_frame_with_nothing_before_it_is_written_at_once_without_a_task() -> None:
    conn = Connection()
    outbox = Outbox(conn, limit=10)
    p = pusher(outbox)
    p.send('{"data":1}')
    assert frames(conn) == ['{"data":1}']
    assert len(outbox) == 0 and outbox._writer is None  # no task was made


async def test_a_frame_the_socket_does_not_take_keeps_every_later_one_behind_it() -> None:
    conn = Connection()
    outbox = Outbox(conn, limit=10)
    p = pusher(outbox)
    p.send('{"data":1}')
    conn.takes = False  # the socket's buffers are full
    p.send('{"data":2}')
    conn.takes = True  # it would take the next one, but 2 waits
    p.send('{"data":3}')
    assert len(outbox) == 2
    await outbox.flushed()
    p.send('{"data":4}')  # the outbox is empty again: at once
    assert frames(conn) == ['{"data":1}', '{"data":2}', '{"data":3}', '{"data":4}']
    assert len(outbox) == 0


async def test_a_stopped_operation_is_never_written() -> None:
    conn = Connection()
    outbox = Outbox(conn, limit=10)
    alive = [False]
    p = pusher(outbox, alive)
    p.send('{"data":1}')
    await outbox.flushed()
    assert conn.wire == []


async def test_an_outbox_without_the_protocol_writes_through_its_task() -> None:
    conn = Connection()
    conn.scope = {}
    outbox = Outbox(conn, limit=10)
    p = pusher(outbox)
    p.send('{"data":1}')
    assert conn.wire == [] and len(outbox) == 1
    await outbox.flushed()
    assert frames(conn) == ['{"data":1}']
