"""What a client's WebSocket message must be, on either sub-protocol
(docs/decisions/0043).

A message the server cannot read (not JSON, not an object, an unknown
``type``, a missing or mistyped ``id`` or ``payload``) closes the connection
with :data:`MALFORMED` (4400) and a reason saying what was wrong, on
``graphql-transport-ws`` (as its protocol says) and on the legacy
``graphql-ws`` alike (its protocol names no code). Strawberry's handlers
index such messages unchecked: the error escaped as a traceback and the
connection was dropped without a close frame. The checks follow the
reference server of graphql-transport-ws (``validateMessage`` in the
graphql-ws package): ids are non-empty strings, a ``payload`` is an object,
and an operation's ``query`` is a string.
"""

from __future__ import annotations

from collections.abc import Mapping

MALFORMED = 4400
"""Close code of a message the server cannot read (graphql-transport-ws's)."""
TOO_MANY_INITS = 4429
TOO_MANY_INITS_REASON = "Too many initialisation requests"
"""A second ``connection_init`` (graphql-transport-ws's code and reason)."""
NOT_TEXT = "WebSocket message type must be text"
NOT_JSON = "WebSocket message must be valid JSON"

LEGACY_TYPES = frozenset({"connection_init", "start", "stop", "connection_terminate"})
"""The messages a ``graphql-ws`` (subscriptions-transport-ws) client sends."""
TRANSPORT_TYPES = frozenset({"connection_init", "ping", "pong", "subscribe", "complete"})
"""The messages a ``graphql-transport-ws`` client sends."""

_OPERATION_FIELDS: tuple[tuple[str, type, str], ...] = (
    ("variables", dict, "an object"),
    ("operationName", str, "a string"),
    ("extensions", dict, "an object"),
)


def legacy_problem(message: object) -> str | None:
    """Why a ``graphql-ws`` message cannot be read; None when it can."""
    problem = _kind(message, LEGACY_TYPES)
    if problem is not None or not isinstance(message, Mapping):
        return problem
    kind = message["type"]
    if kind == "connection_init":
        return _optional_object(message, "payload")
    if kind == "start":
        return _id(message) or _operation(message)
    if kind == "stop":
        return _id(message)
    return None


def transport_problem(message: object) -> str | None:
    """Why a ``graphql-transport-ws`` message cannot be read; None when it can."""
    problem = _kind(message, TRANSPORT_TYPES)
    if problem is not None or not isinstance(message, Mapping):
        return problem
    kind = message["type"]
    if kind in ("connection_init", "ping", "pong"):
        return _optional_object(message, "payload")
    if kind == "subscribe":
        return _id(message) or _operation(message)
    if kind == "complete":
        return _id(message)
    return None


def _kind(message: object, types: frozenset[str]) -> str | None:
    if not isinstance(message, Mapping):
        return "a message must be a JSON object"
    kind = message.get("type")
    if not isinstance(kind, str):
        return "a message must have a string type"
    if kind not in types:
        return f"Unknown message type: {kind[:40]}"
    return None


def _id(message: Mapping[str, object]) -> str | None:
    value = message.get("id")
    if not isinstance(value, str) or not value:
        return f"{message['type']}: id must be a non-empty string"
    return None


def _optional_object(message: Mapping[str, object], name: str) -> str | None:
    value = message.get(name)
    if value is not None and not isinstance(value, dict):
        return f"{message['type']}: {name} must be an object (or absent)"
    return None


def _operation(message: Mapping[str, object]) -> str | None:
    kind = message["type"]
    payload = message.get("payload")
    if not isinstance(payload, dict):
        return f"{kind}: payload must be an object with a query"
    if not isinstance(payload.get("query"), str):
        return f"{kind}: payload.query must be a string"
    for name, type_, what in _OPERATION_FIELDS:
        value = payload.get(name)
        if value is not None and not isinstance(value, type_):
            return f"{kind}: payload.{name} must be {what} (or absent)"
    return None
