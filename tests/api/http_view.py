"""The HTTP view (``GameGraphQL``) over a harness's use cases, driven over
ASGI in process: subscriptions streamed as Apollo's multipart protocol or
GraphQL over SSE, read with the strict readers of tests/http_streams.py, so
that schema-level tests (the access matrix, non-interference) cover the
HTTP transports with the same guarantees as ``schema.subscribe``."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator
from types import SimpleNamespace
from typing import Any, cast

from starlette.types import Message

from api.graphql.view import GameGraphQL
from infra.bootstrap import Container
from infra.persisted_queries import PersistedQueries
from infra.settings import Settings
from tests.fakes import Harness
from tests.http_streams import MULTIPART_ACCEPT, SSE_ACCEPT, Item, MultipartReader, SSEReader

MULTIPART = "multipart"
SSE = "sse"
HTTP_TRANSPORTS = (MULTIPART, SSE)
ACCEPT = {MULTIPART: MULTIPART_ACCEPT, SSE: SSE_ACCEPT}


def view_of(h: Harness, settings: Settings | None = None) -> GameGraphQL:
    """The view as the app builds it, over the harness's fakes (no limits)."""
    container = SimpleNamespace(
        settings=settings or Settings(),
        deps=h.deps,
        limiter=None,
        settler=None,
        persisted=PersistedQueries(),
    )
    return GameGraphQL(cast(Container, container))


@contextlib.asynccontextmanager
async def http_stream(
    view: GameGraphQL,
    transport: str,
    query: str,
    variables: dict[str, Any] | None = None,
    authorization: str | None = None,
    *,
    stuck: bool = False,
) -> AsyncGenerator[AsyncGenerator[Item, None], None]:
    """POST the operation with the transport's ``Accept``; yields the items
    the stream says, in order. Leaving the block disconnects the client.
    ``stuck``: each send of the server waits until the client reads (a
    one-message buffer), as when TCP buffers are full."""
    headers = [
        (b"content-type", b"application/json"),
        (b"accept", ACCEPT[transport].encode()),
    ]
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("test", 80),
    }
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    sent: asyncio.Queue[Message] = asyncio.Queue(maxsize=1 if stuck else 0)
    gone = asyncio.Event()
    asked = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    app = asyncio.create_task(view(scope, receive, sent.put))

    async def items() -> AsyncGenerator[Item, None]:
        start = await asyncio.wait_for(sent.get(), 5)
        assert start["type"] == "http.response.start" and start["status"] == 200, start
        reader = MultipartReader() if transport == MULTIPART else SSEReader()
        while True:
            message = await sent.get()
            for item in reader.feed(message.get("body", b"").decode()):
                yield item
            if not message.get("more_body", False):
                return

    stream = items()
    try:
        yield stream
    finally:
        await stream.aclose()
        gone.set()
        await asyncio.wait_for(app, 5)


def as_result(item: Item) -> dict[str, Any] | None:
    """A result, or a fatal error as a result without data; else None."""
    if item.kind == "result":
        return item.result
    if item.kind == "fatal":
        return {"data": None, "errors": item.errors}
    return None


async def next_result(stream: AsyncGenerator[Item, None], timeout: float) -> dict[str, Any] | None:
    """The stream's next result (heartbeats skipped); None when it ended."""
    async with asyncio.timeout(timeout):
        async for item in stream:
            result = as_result(item)
            if result is not None:
                return result
    return None
