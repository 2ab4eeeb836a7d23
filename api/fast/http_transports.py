"""Subscriptions over HTTP, and refusals of the HTTP transport as coded JSON.

Strawberry's ASGI view streams a subscription when the request's ``Accept``
asks for it (strawberry/http/streaming.py); this module gives its two
transports the shapes our clients need (docs/decisions/0034):

- Apollo's multipart protocol (``multipart/mixed;subscriptionSpec=1.0``,
  Apollo iOS, Apollo Kotlin, @apollo/client's HttpLink, Python ``gql``):
  boundary ``graphql``, each part ``{"payload": <result>}``, heartbeats
  ``{}`` every 5 s; a result that ends the stream with errors and no data
  is a fatal, transport-level error: ``{"payload": null, "errors": [...]}``
  (no ``locations`` or ``path``), then the closing boundary.
- GraphQL over SSE (graphql-sse's "distinct connections mode",
  ``Accept: text/event-stream``): ``event: next`` with the result,
  ``event: complete`` at the end, a ``: ping`` comment every 15 s.

Over both, the stream ends after its first result with errors (a refused
start, a dropped subscription): the client resubscribes with ``afterSeq``.

:func:`with_heartbeats` replaces Strawberry's ``merge_stream_with_heartbeat``,
which leaves its source generator suspended, never closed, when the client
leaves while an item waits for the response to take it: the subscription
then lived on until the garbage collector finalized its generators, one by
one in any order, which failed with tracebacks ("async generator ignored
GeneratorExit") and held the bus subscription meanwhile. Here the source is
closed on every way out, at once, shielded from the request's cancellation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import Any, ClassVar

import anyio
from starlette.responses import JSONResponse, StreamingResponse
from starlette.types import Send
from strawberry.http import GraphQLHTTPResponse
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.streaming import (
    MULTIPART_SUBSCRIPTION_BOUNDARY,
    JSONEncoder,
    MultipartSubscriptionTransport,
    SSETransport,
)

from domain.errors import ErrorCode

log = logging.getLogger("mmk.api")

MULTIPART_CONTENT_TYPE = (
    f"multipart/mixed;boundary={MULTIPART_SUBSCRIPTION_BOUNDARY};subscriptionSpec=1.0"
)
"""The response's type, as Apollo's clients and ``gql`` parse it (no
quotes; Strawberry's own adds ``,application/json``, which is no
parameter, and Apollo iOS reads it into the spec's version)."""

STREAMING_TYPES = ("multipart/mixed", "text/event-stream")
"""Content types of streamed responses (api/middleware.py keeps them out of
the latency histogram: they last as long as the subscription)."""

NO_BUFFERING: Mapping[str, str] = {
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",  # nginx: pass each part on at once
}


class Refused(Exception):
    """A request refused before any operation runs: a JSON body
    ``{"errors": [{"message", "extensions": {"code", ...}}]}`` with an HTTP
    status, never ``text/plain``."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str = ErrorCode.BAD_INPUT.value,
        headers: Mapping[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code
        self.headers = dict(headers or {})
        self.extensions = extensions

    def response(self) -> JSONResponse:
        error = {"message": self.message, "extensions": {"code": self.code, **self.extensions}}
        return JSONResponse({"errors": [error]}, self.status, self.headers)


def accepts(accept: str, matches: Any) -> bool:
    """Whether one media range of an ``Accept`` header satisfies ``matches``
    (a transport's ``accepts_content_type``); ranges are tried one by one,
    whatever their order."""
    for part in accept.split(","):
        if part.strip():
            try:
                media, params = parse_content_type(part)
            except Exception:  # not a media range: the next one may be
                continue
            if matches(media.lower(), {k.lower(): v for k, v in params.items()}):
                return True
    return False


def _top_level(error: object) -> object:
    """A fatal error as Apollo's protocol carries it: no locations, no path."""
    if isinstance(error, dict):
        return {k: v for k, v in error.items() if k not in ("locations", "path")}
    return error


class ApolloMultipart(MultipartSubscriptionTransport):
    """Apollo's multipart subscription protocol."""

    def accepts(self, accept: str) -> bool:
        return accepts(accept, self.accepts_content_type)

    @property
    def headers(self) -> Mapping[str, str]:
        return {"Content-Type": MULTIPART_CONTENT_TYPE, **NO_BUFFERING}

    def encode_next(self, response: GraphQLHTTPResponse, encode_json: JSONEncoder) -> str:
        errors = response.get("errors")
        if errors and response.get("data") is None:
            part = {"payload": None, "errors": [_top_level(e) for e in errors]}
            return self.encode_multipart_data(part, encode_json)
        return self.encode_multipart_data({"payload": response}, encode_json)

    def encode_complete(self) -> str:
        # Every part ends with the delimiter (a client hands a part on as
        # soon as it sees the next one): the end just closes the last.
        return "--\r\n"

    @staticmethod
    def opening() -> str:
        """What opens the body (Strawberry's parts close with a delimiter,
        but none opens them)."""
        return f"--{MULTIPART_SUBSCRIPTION_BOUNDARY}"


class EventStream(SSETransport):
    """GraphQL over SSE, distinct connections mode (Strawberry's transport;
    every media range of ``Accept`` is looked at)."""

    headers: ClassVar[Mapping[str, str]] = {**SSETransport.headers, **NO_BUFFERING}


CLOSE_TIMEOUT = 5.0  # seconds a left stream's clean-up may take


class ClosingStreamingResponse(StreamingResponse):
    """Starlette's streaming response, which also closes its body when it
    stops: cancelled while a send waits (the client left without reading),
    its ``async for`` would leave the body suspended until the collector
    finalizes it, holding the subscription meanwhile."""

    async def stream_response(self, send: Send) -> None:
        try:
            await super().stream_response(send)
        finally:
            body = self.body_iterator
            if isinstance(body, AsyncGenerator):
                with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                    await body.aclose()


async def ends_on_error(results: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
    """The results of a streamed operation, ending after the first one with
    errors (over HTTP each stream carries one operation: an error ends it)."""
    async with aclosing(results):
        async for result in results:
            yield result
            if getattr(result, "errors", None):
                return


async def with_heartbeats(
    source: AsyncGenerator[str, None],
    heartbeat: Callable[[], str],
    interval: float,
    *,
    initial: bool,
    opening: str = "",
) -> AsyncGenerator[str, None]:
    """``opening``, then ``source``'s chunks, and ``heartbeat()`` whenever
    none came for ``interval`` seconds (first of all when ``initial``). One task reads the
    source ahead into a one-slot queue; whatever ends the stream (its end,
    the client leaving, an error), that task is stopped and the source
    closed before this generator is done."""
    queue: asyncio.Queue[tuple[bool, str]] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        try:
            async for chunk in source:
                await queue.put((False, chunk))
        except Exception:
            log.exception("an HTTP stream failed; it ends here")
        await queue.put((True, ""))

    reader = asyncio.create_task(pump())
    try:
        if opening or initial:
            yield opening + (heartbeat() if initial else "")
        while True:
            try:
                async with asyncio.timeout(interval):
                    done, chunk = await queue.get()
            except TimeoutError:
                yield heartbeat()
                continue
            if done:
                return
            yield chunk
    finally:
        reader.cancel()
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
            await asyncio.wait({reader})
            await source.aclose()
