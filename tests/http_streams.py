"""Readers of subscriptions streamed over HTTP, strict about the wire format
so that tests catch a server that drifts from the protocols:

- :class:`MultipartReader`: Apollo's multipart subscription protocol. The
  body opens with ``--graphql``; every part has a ``Content-Type:
  application/json`` header and closes with ``\\r\\n--graphql``, followed
  by ``\\r\\n`` (another part) or ``--`` (the end). A part is handed on as
  soon as its closing delimiter arrives (a client must not wait for the next
  heartbeat). ``{}`` is a heartbeat, ``{"payload": <result>}`` a result,
  ``{"payload": null, "errors": [...]}`` a fatal error.
- :class:`SSEReader`: GraphQL over SSE (distinct connections mode): ``event:
  next`` with a result in ``data``, ``event: complete``, comments (pings).

Both turn bytes into :class:`Item` values, whatever the chunking.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

BOUNDARY = "graphql"
DELIMITER = "\r\n--" + BOUNDARY
MULTIPART_ACCEPT = 'multipart/mixed;subscriptionSpec="1.0", application/json'
SSE_ACCEPT = "text/event-stream"


class ProtocolViolation(AssertionError):
    """The stream is not what its protocol says."""


@dataclass(frozen=True)
class Item:
    """One thing a stream said: a ``result`` (a GraphQL response: data,
    errors), a ``fatal`` error list, a ``heartbeat``, or the ``end``."""

    kind: str
    result: dict[str, Any] | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    raw: str = ""


class MultipartReader:
    def __init__(self) -> None:
        self._buf = ""
        self._state = "open"  # open -> after <-> in; end
        self.ended = False

    def feed(self, text: str) -> list[Item]:
        if self.ended and text:
            raise ProtocolViolation(f"bytes after the end of the stream: {text!r}")
        self._buf += text
        out: list[Item] = []
        while True:
            if self._state == "open":
                opening = "--" + BOUNDARY
                if len(self._buf) < len(opening):
                    return out
                if not self._buf.startswith(opening):
                    raise ProtocolViolation(f"the body does not open with {opening}: {self._buf!r}")
                self._buf, self._state = self._buf[len(opening) :], "after"
            elif self._state == "after":
                if len(self._buf) < 2:
                    return out
                if self._buf.startswith("--"):
                    self._buf, self._state, self.ended = self._buf[2:], "end", True
                    out.append(Item("end"))
                elif self._buf.startswith("\r\n"):
                    self._buf, self._state = self._buf[2:], "in"
                else:
                    raise ProtocolViolation(f"a delimiter followed by {self._buf[:20]!r}")
            elif self._state == "in":
                at = self._buf.find(DELIMITER)
                if at < 0:
                    return out
                part, self._buf = self._buf[:at], self._buf[at + len(DELIMITER) :]
                self._state = "after"
                out.append(self._part(part))
            else:  # the end: only the closing CRLF may follow
                if self._buf.strip("\r\n"):
                    raise ProtocolViolation(f"bytes after the closing delimiter: {self._buf!r}")
                return out

    @staticmethod
    def _part(part: str) -> Item:
        head, sep, body = part.partition("\r\n\r\n")
        if not sep:
            raise ProtocolViolation(f"a part without headers: {part!r}")
        headers = {}
        for line in head.split("\r\n"):
            name, colon, value = line.partition(":")
            if not colon:
                raise ProtocolViolation(f"a bad header line {line!r}")
            headers[name.strip().lower()] = value.strip()
        if not headers.get("content-type", "").startswith("application/json"):
            raise ProtocolViolation(f"a part that is not JSON: {headers}")
        value = json.loads(body)
        if not isinstance(value, dict):
            raise ProtocolViolation(f"a part that is not an object: {body!r}")
        if value == {}:
            return Item("heartbeat", raw=body)
        if "payload" not in value:
            raise ProtocolViolation(f"a part without payload: {body!r}")
        if value["payload"] is None:
            errors = value.get("errors")
            if not errors:
                raise ProtocolViolation(f"a null payload without errors: {body!r}")
            for e in errors:
                if "locations" in e or "path" in e:
                    raise ProtocolViolation(f"a top-level error with a location: {e}")
            return Item("fatal", errors=errors, raw=body)
        if set(value) != {"payload"}:
            raise ProtocolViolation(f"a result part with more than its payload: {body!r}")
        return Item("result", result=value["payload"], raw=body)


class SSEReader:
    def __init__(self) -> None:
        self._buf = ""
        self._event: str | None = None
        self._data: list[str] = []
        self.ended = False

    def feed(self, text: str) -> list[Item]:
        self._buf += text
        out: list[Item] = []
        while True:
            cut = min(
                (i for i in (self._buf.find("\r\n"), self._buf.find("\n")) if i >= 0), default=-1
            )
            if cut < 0:
                return out
            size = 2 if self._buf.startswith("\r\n", cut) else 1
            line, self._buf = self._buf[:cut], self._buf[cut + size :]
            if line == "":
                item = self._dispatch()
                if item is not None:
                    out.append(item)
            elif line.startswith(":"):
                out.append(Item("heartbeat", raw=line))
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    self._event = value
                elif name == "data":
                    self._data.append(value)
                else:
                    raise ProtocolViolation(f"an unexpected field {line!r}")

    def _dispatch(self) -> Item | None:
        event, data = self._event, "\n".join(self._data)
        self._event, self._data = None, []
        if event is None and not data:
            return None
        if self.ended:
            raise ProtocolViolation(f"an event after complete: {event} {data!r}")
        if event == "next":
            result = json.loads(data)
            if not isinstance(result, dict) or not ({"data", "errors"} & set(result)):
                raise ProtocolViolation(f"a next event without a result: {data!r}")
            return Item("result", result=result, raw=data)
        if event == "complete":
            self.ended = True
            return Item("end", raw=data)
        raise ProtocolViolation(f"an unknown event {event!r}: {data!r}")
