"""A TCP proxy on a free loopback port that a test can cut and restore: put
it between a server process and its database to fake an outage without
touching the shared database server.

It runs its own asyncio loop in a daemon thread, so the test's loop (and
blocking calls in the test) never slow it down. Two ways to fail:

- ``cut()``: every open connection is reset and new ones are accepted then
  reset at once (the database host refuses: errors come fast);
- ``blackhole()``: open connections are reset, new ones are accepted and
  held without a byte forwarded (a network partition: clients wait).

``restore()`` forwards again, for new connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

CHUNK = 64 * 1024
FORWARD, CUT, BLACKHOLE = "forward", "cut", "blackhole"


class TcpProxy:
    """``127.0.0.1:<port>`` forwarding to ``(host, port)`` until cut."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.mode = FORWARD
        self.accepted = 0  # connections accepted, whatever happened to them
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    # ------------------------------------------------------------ control
    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self) -> None:
        self._call(self._close_all(stop=True))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def cut(self) -> None:
        """Reset every connection; refuse (accept, then reset) new ones."""
        self._call(self._set(CUT))

    def blackhole(self) -> None:
        """Reset every connection; hold new ones silently."""
        self._call(self._set(BLACKHOLE))

    def restore(self) -> None:
        self._call(self._set(FORWARD))

    def connections(self) -> int:
        """Connections open through the proxy now."""
        return int(self._call(self._count()))

    def _call(self, coro: Any) -> Any:
        fut: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return fut.result(10)

    # ------------------------------------------------------------ the loop
    async def _count(self) -> int:
        return len(self._open)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _set(self, mode: str) -> None:
        self.mode = mode
        if mode != FORWARD:
            await self._close_all(stop=False)

    async def _close_all(self, *, stop: bool) -> None:
        if stop and self._server is not None:
            self._server.close()
        for writer in tuple(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.mode == CUT:
            writer.transport.abort()
            return
        self._open.add(writer)
        if self.mode == BLACKHOLE:
            return  # held until the next mode change resets it
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._open.discard(writer)
            writer.transport.abort()
            return
        self._open.add(up_writer)
        pair = (writer, up_writer)
        await asyncio.gather(
            self._pipe(reader, up_writer, pair), self._pipe(up_reader, writer, pair)
        )

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        pair: tuple[asyncio.StreamWriter, asyncio.StreamWriter],
    ) -> None:
        try:
            while data := await reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            # One side ended: end both (a half-open database link is useless).
            for w in pair:
                self._open.discard(w)
                with contextlib.suppress(Exception):
                    w.transport.abort()


@contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[TcpProxy]:
    """A started proxy to ``host:port``, stopped on exit."""
    proxy = TcpProxy(host, port).start()
    try:
        yield proxy
    finally:
        proxy.stop()
