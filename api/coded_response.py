"""A refusal as every client reads one: a JSON body ``{"errors": [{"message",
"extensions": {"code"}}]}`` (docs/clients.md "Errors"), here as the whole HTTP/1.1
response that the connection protocols (api/fast/http_protocol.py) write before,
or instead of, the application: the connection caps' 429 and 503, a request
whose line and headers are too large (431), one that does not parse (400).
docs/decisions/0044, docs/decisions/0052."""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus

import orjson


def coded_body(message: str, code: str) -> bytes:
    """The JSON of one coded error."""
    return orjson.dumps({"errors": [{"message": message, "extensions": {"code": code}}]})


def whole_response(
    status: int, message: str, code: str, headers: Iterable[tuple[str, str]] = ()
) -> bytes:
    """A whole HTTP/1.1 response that closes the connection."""
    body = coded_body(message, code)
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        *(f"{name}: {value}" for name, value in headers),
        "connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
