"""Helpers for the Redis bus tests: a private ``redis-server`` that a test may
stop and start again, a subscription collector, and bounded polling."""

from __future__ import annotations

import asyncio
import gc
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis

from domain.ports import BusMessage, Resync, Subscription, SubscriptionClosed
from domain.records import GameStatus, LobbyUpdate
from infra.bus.redis import BACKOFF_MAX, CONFIRM_TIMEOUT

Message = BusMessage | Resync
"""What a subscription yields."""


async def stray_task_errors() -> AsyncIterator[None]:
    """As an autouse fixture of each Redis test module: a background task
    that dies with an error, or a connection left open (redis-py's
    "Unclosed ..." warnings), fails the test."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    yield
    await asyncio.sleep(0.05)
    gc.collect()
    loop.set_exception_handler(None)
    assert not errors, f"errors in background tasks: {errors}"


def note(tag: str, n: int = 0) -> LobbyUpdate:
    """A bus message told apart by ``tag`` (its game id) and ``n`` (its version)."""
    return LobbyUpdate(tag, GameStatus.LOBBY, 4, 0, n)


def number(m: Message) -> int:
    """The ``n`` of a :func:`note`."""
    assert isinstance(m, LobbyUpdate), m
    return m.version


# How long a bus may take to be back once its Redis answers again: its reader
# may be sleeping out a backoff (up to BACKOFF_MAX); then it subscribes again
# (confirmations: up to CONFIRM_TIMEOUT), and its first flush can still meet a
# pooled connection to the old server, which costs one more such cycle, and
# subscriptions left unconfirmed (a loaded machine) cost another (the reader
# reconnects rather than resync them: decision 0068). Three cycles, and room
# for a loaded machine (measured alone: up to 3.6 s; a CI run on a slow
# machine under its full suite once took over 17 s). A wait, not a bound:
# it ends as soon as the bus is back.
RECOVERY_TIMEOUT = 3 * (BACKOFF_MAX + CONFIRM_TIMEOUT) + 25.0
RECOVERING_TEST_TIMEOUT = 4 * RECOVERY_TIMEOUT
"""pytest-timeout's bound for a test that waits on recoveries: more than its
waits may take together (a module's 30 s once ended such a test under
load while its own wait still had room)."""


async def eventually(
    check: Callable[[], bool | Awaitable[bool]], timeout: float = 5.0, what: str = "condition"
) -> None:
    """Poll ``check`` (sync or async) until it is true; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


def with_query(url: str, **params: str) -> str:
    """``url`` with extra query parameters (e.g. ``client_name``)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PrivateRedis:
    """A ``redis-server`` of this test only, on a free port, without
    persistence; :meth:`stop` kills it by its pid, :meth:`start` brings it
    back on the same port (empty)."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise AssertionError("redis-server is not on PATH")
        self._binary = binary
        self._workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self, timeout: float = 5.0) -> None:
        assert self._proc is None, "already running"
        self._proc = subprocess.Popen(
            [
                self._binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(self._workdir),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, socket_timeout=0.5)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self._proc.poll() is not None:
                    code = self._proc.returncode
                    self._proc = None
                    raise AssertionError(f"redis-server exited at start (code {code})")
                try:
                    if client.ping():
                        return
                except redis.RedisError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"redis-server did not answer within {timeout:g} s")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Stop the server by its pid and wait until it is gone."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


class Collector:
    """Reads one subscription in a background task: ``messages`` in arrival
    order, ``closed`` the reason once the bus ended it."""

    def __init__(self, sub: Subscription) -> None:
        self.messages: list[Message] = []
        self.closed: str | None = None
        self._task = asyncio.get_running_loop().create_task(self._read(sub))

    async def _read(self, sub: Subscription) -> None:
        try:
            async for message in sub:
                self.messages.append(message)
        except SubscriptionClosed as e:
            self.closed = e.reason

    @property
    def data(self) -> list[BusMessage]:
        """The messages without the resync signals."""
        return [m for m in self.messages if not isinstance(m, Resync)]

    def resyncs(self) -> int:
        return sum(1 for m in self.messages if isinstance(m, Resync))

    async def wait_data(self, count: int, timeout: float = 5.0) -> list[BusMessage]:
        try:
            await eventually(lambda: len(self.data) >= count, timeout, f"{count} message(s)")
        except AssertionError as e:
            raise AssertionError(f"{e}; got {self.messages} (closed: {self.closed})") from None
        return self.data

    async def stop(self) -> None:
        self._task.cancel()
        with suppress(asyncio.CancelledError):
            await self._task
