"""A webhook receiver for end-to-end tests, as an app's backend runs one: a
small HTTP server (aiohttp) on 127.0.0.1 in the test's event loop that
verifies every delivery with the Standard Webhooks reference library
(``standardwebhooks``, never the server's own code) and records it.

The test chooses how it answers each delivery (:attr:`Receiver.behaviour`,
from the delivery's ``webhook-id`` and how many times that id came): ``ok``
(200), ``fail`` (500), or ``hang`` (no answer until :meth:`release_hung`,
far longer than the server waits). Told the senders' pids
(:attr:`Receiver.senders`), it also finds which process sent each delivery,
and a delivery whose sender has already gone (killed, or tired of waiting)
is ``gone``: its connection cut, never taken. :meth:`go_down` stops
listening (every connection cut; the port kept, bound but not listening,
so a connection is refused and the port is not handed to another process)
and :meth:`come_back` listens again on the same port.

A delivery that fails verification is answered 400 and kept in
:attr:`Receiver.refused`: a test asserts there is none.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from standardwebhooks import Webhook

Behaviour = Literal["ok", "fail", "hang", "gone"]
"""How a delivery was answered: 200, 500, not before the sender gave up,
or (``gone``) not at all, its connection cut: its sender was gone when it
came (only told apart when the receiver knows the senders' pids)."""
HOST = "127.0.0.1"
HANG_CAP = 60.0  # seconds a hung delivery waits for its release at most
SHUTDOWN = 0.5  # seconds the connections may take to close when going down


@dataclass
class Delivery:
    """One verified request: its ``webhook-id``, its body (parsed and raw),
    when it came (``time.time()``), how it was answered (``behaviour``),
    and the process that sent it (``pid``, when the test asked)."""

    webhook_id: str
    body: dict[str, Any]
    raw: bytes
    at: float
    behaviour: Behaviour
    pid: int | None = None

    @property
    def accepted(self) -> bool:
        """Answered 200 (to a sender still there when it came): the
        message is taken."""
        return self.behaviour == "ok"


def always(behaviour: Behaviour) -> Callable[[str, int], Behaviour]:
    return lambda _id, _nth: behaviour


class Receiver:
    """Start with ``async with Receiver() as rx``; ``rx.url`` is its address;
    set ``rx.secret`` (``whsec_...``) before the first delivery."""

    def __init__(self) -> None:
        self.secret: str | None = None
        self.behaviour: Callable[[str, int], Behaviour] = always("ok")
        self.deliveries: list[Delivery] = []
        self.refused: list[str] = []
        self.on_hang: Callable[[Delivery], None] | None = None
        self.senders: Sequence[int] = ()  # the senders' pids, to tell them apart (Linux)
        self._seen: Counter[str] = Counter()
        self._release = asyncio.Event()
        self._cut: set[asyncio.Event] = set()  # releases that cut, not answer
        self._runner: web.ServerRunner | None = None
        self._placeholder: socket.socket | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/hooks/mmk"

    # ------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Receiver:
        await self._listen(_bound(HOST, 0))
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release_hung()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._placeholder is not None:
            self._placeholder.close()
            self._placeholder = None

    async def _listen(self, sock: socket.socket) -> None:
        self.port = sock.getsockname()[1]
        server = web.Server(self._handle, access_log=None)
        runner = web.ServerRunner(server, shutdown_timeout=SHUTDOWN)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self._runner = runner

    async def go_down(self) -> None:
        """Stop listening and close every connection; keep the port."""
        assert self._runner is not None, "not up"
        self.release_hung(answer=False)
        await self._runner.cleanup()
        self._runner = None
        self._placeholder = _bound(HOST, self.port)  # bound, never listening: refused

    async def come_back(self) -> None:
        """Listen again on the same port."""
        assert self._placeholder is not None, "not down"
        self._placeholder.close()
        self._placeholder = None
        await self._listen(_bound(HOST, self.port))

    def release_hung(self, answer: bool = True) -> None:
        """End the hung deliveries: answered 503 (their senders have gone,
        or are about to), or (``answer`` false) their connections cut."""
        if not answer:
            self._cut.add(self._release)
        self._release.set()
        self._release = asyncio.Event()

    # ------------------------------------------------------------ reading
    def accepted(self) -> list[Delivery]:
        return [d for d in self.deliveries if d.accepted]

    def ids(self, behaviour: Behaviour | None = None) -> set[str]:
        return {
            d.webhook_id for d in self.deliveries if behaviour is None or d.behaviour == behaviour
        }

    # ------------------------------------------------------------ serving
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        raw = await request.read()
        headers = dict(request.headers)
        if self.secret is None:
            self.refused.append(f"a delivery before the secret was known: {headers}")
            return web.Response(status=400)
        try:
            body = Webhook(self.secret).verify(raw, headers)
        except Exception as e:
            self.refused.append(f"{type(e).__name__}: {e} ({headers}, {raw[:200]!r})")
            return web.Response(status=400)
        webhook_id = request.headers.get("webhook-id", "")
        self._seen[webhook_id] += 1
        behaviour = self.behaviour(webhook_id, self._seen[webhook_id])
        delivery = Delivery(webhook_id, body, raw, time.time(), behaviour)
        if self.senders and sys.platform == "linux":
            delivery.pid = _sender_pid(request, self.port, self.senders)
            if delivery.pid is None:  # killed, or it gave up waiting: nobody to answer
                delivery.behaviour = "gone"
        self.deliveries.append(delivery)
        if delivery.behaviour == "gone":
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=503, text="nobody waits")
        if delivery.behaviour == "ok":
            return web.Response(status=200, text="taken")
        if delivery.behaviour == "fail":
            return web.Response(status=500, text="receiver failed")
        if self.on_hang is not None:
            self.on_hang(delivery)
        release = self._release
        try:
            async with asyncio.timeout(HANG_CAP):
                await release.wait()
        except TimeoutError:
            pass
        if release in self._cut and request.transport is not None:
            request.transport.close()
        return web.Response(status=503, text="too late")


def _bound(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


# ---------------------------------------------------------------- who sent it
def _sender_pid(request: web.BaseRequest, port: int, pids: Sequence[int]) -> int | None:
    """Which of ``pids`` holds the client end of this request's connection
    (Linux: /proc/net/tcp and each process's descriptors)."""
    transport = request.transport
    peer = None if transport is None else transport.get_extra_info("peername")
    if peer is None:
        return None
    inode = _client_inode(int(peer[1]), port)
    if inode is None:
        return None
    wanted = f"socket:[{inode}]"
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == wanted:
                    return pid
            except OSError:
                continue
    return None


def _client_inode(client_port: int, server_port: int) -> str | None:
    """The inode of the socket whose local port is ``client_port`` and
    remote port ``server_port`` (a connection's client end)."""
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if (
            int(local.rsplit(":", 1)[1], 16) == client_port
            and int(remote.rsplit(":", 1)[1], 16) == server_port
        ):
            return fields[9]
    return None
