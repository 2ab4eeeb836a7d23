"""A small client for subscriptions streamed over HTTP (``POST /graphql``):
Apollo's multipart protocol and GraphQL over SSE, read with the strict
readers of tests/http_streams.py. An :class:`HttpSubscription` answers like
a WebSocket ``Operation`` (tests/e2e/wsclient.py): ``next(timeout)`` gives
the next result and raises ``OperationEnded`` once the stream has ended, so
the helpers of tests/e2e/play.py read either."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from tests.e2e.client import SUBSCRIBE_EVENTS
from tests.e2e.wsclient import OperationEnded
from tests.http_streams import (
    MULTIPART_ACCEPT,
    SSE_ACCEPT,
    Item,
    MultipartReader,
    ProtocolViolation,
    SSEReader,
)

MULTIPART = "multipart"
SSE = "sse"
HTTP_TRANSPORTS = (MULTIPART, SSE)
ACCEPT = {MULTIPART: MULTIPART_ACCEPT, SSE: SSE_ACCEPT}
CONTENT_TYPE = {MULTIPART: "multipart/mixed", SSE: "text/event-stream"}
_DONE = object()


class HttpSubscription:
    """One operation streamed over one HTTP response."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        transport: str,
        query: str | None,
        variables: dict[str, Any] | None = None,
        token: str | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        """``query`` None: none is sent (an APQ hash in ``extensions``)."""
        self.http, self.transport = http, transport
        body: dict[str, Any] = {"variables": variables or {}}
        if query is not None:
            body["query"] = query
        if extensions is not None:
            body["extensions"] = extensions
        headers = {"accept": ACCEPT[transport]}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        self._request = http.build_request("POST", "/graphql", json=body, headers=headers)
        self.response: httpx.Response | None = None
        self.items: list[Item] = []  # everything the stream said, in order
        self.errors: list[Any] = []  # errors of results, and fatal ones
        self.done = False
        self.completed = False  # ended by the protocol (not cut)
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    @property
    def heartbeats(self) -> int:
        return sum(i.kind == "heartbeat" for i in self.items)

    async def start(self, timeout: float = 10.0) -> HttpSubscription:
        """Send the request; returns once the response's headers are in."""
        self.response = await asyncio.wait_for(self.http.send(self._request, stream=True), timeout)
        if self.response.status_code != 200 or not self.response.headers.get(
            "content-type", ""
        ).startswith(CONTENT_TYPE[self.transport]):
            body = await self.response.aread()
            await self.response.aclose()
            raise AssertionError(
                f"not a {self.transport} stream: {self.response.status_code} "
                f"{self.response.headers.get('content-type')} {body[:500]!r}"
            )
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.response is not None
        reader = MultipartReader() if self.transport == MULTIPART else SSEReader()
        try:
            async for text in self.response.aiter_text():
                for item in reader.feed(text):
                    self.items.append(item)
                    if item.kind == "result":
                        assert item.result is not None
                        self.errors.extend(item.result.get("errors") or ())
                        self._queue.put_nowait(item.result)
                    elif item.kind == "fatal":
                        self.errors.extend(item.errors)
                    elif item.kind == "end":
                        self.completed = True
        except ProtocolViolation as e:
            self.errors.append({"message": f"protocol violation: {e}"})
        except (httpx.HTTPError, asyncio.CancelledError):
            pass
        finally:
            self.done = True
            self._queue.put_nowait(_DONE)

    async def next(self, timeout: float) -> dict[str, Any]:
        """The next result (``{"data": ..., "errors": ...}``); raises
        ``OperationEnded`` once the stream is over, ``TimeoutError`` if
        nothing arrives in ``timeout`` seconds."""
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if item is _DONE:
            self._queue.put_nowait(_DONE)
            raise OperationEnded(f"the {self.transport} stream ended; errors {self.errors}")
        result: dict[str, Any] = item
        return result

    async def close(self) -> None:
        """Leave: close the response (the connection goes away mid-stream)."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self.response is not None:
            await self.response.aclose()

    async def wait_done(self, timeout: float) -> None:
        assert self._reader is not None
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)


async def http_subscribe_events(
    http: httpx.AsyncClient,
    transport: str,
    game_id: str,
    token: str | None,
    after_seq: int = 0,
) -> HttpSubscription:
    sub = HttpSubscription(
        http, transport, SUBSCRIBE_EVENTS, {"gameId": game_id, "afterSeq": after_seq}, token
    )
    return await sub.start()


@contextlib.asynccontextmanager
async def streaming_client(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of its own for long streams (each stream holds a connection)."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    async with httpx.AsyncClient(
        base_url=base_url, timeout=httpx.Timeout(10.0, read=None), limits=limits, trust_env=False
    ) as client:
        yield client
