"""Which operation of a document a request runs (issue #22, docs/decisions/0052).

GraphQL says a document of several operations must come with the name of the
one to run ("Must provide operation name if query contains multiple
operations"). Strawberry took the first one instead: its execution context
names the first operation when the request names none, so a document of 32
operations ran its first. Here such a request is refused, on every transport
(the check runs with the limits, api/graphql/limits.py)."""

from __future__ import annotations

from contextvars import ContextVar

from graphql import DocumentNode, GraphQLError, OperationDefinitionNode

from domain.errors import ErrorCode

SENT: ContextVar[str | None] = ContextVar("mmk_operation_sent", default=None)
"""The ``operationName`` the running operation's request sent, set by the
schema's ``execute`` and ``stream`` (api/graphql/schema.py: every transport
runs an operation through one of them). Strawberry's ``ctx.operation_name``
falls back on the first operation's name, and keeps the one sent under a
private name only."""


def operation_named() -> str | None:
    """The ``operationName`` the running operation's request sent."""
    return SENT.get()


def unnamed_choice(document: DocumentNode, operation_name: str | None) -> GraphQLError | None:
    """The refusal of a document of several operations sent without the
    name of the one to run; None when it is clear which runs."""
    if operation_name is not None:
        return None
    count = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
    if count < 2:
        return None
    return GraphQLError(
        f"the document has {count} operations: send operationName, the name of the one to run",
        extensions={"code": ErrorCode.BAD_INPUT.value},
    )


def unknown_choice(document: DocumentNode, operation_name: str | None) -> GraphQLError | None:
    """The refusal of a request naming no operation of the document."""
    if operation_name is None:
        return None
    for d in document.definitions:
        if isinstance(d, OperationDefinitionNode) and d.name and d.name.value == operation_name:
            return None
    return GraphQLError(
        f"the document has no operation named {operation_name[:64]!r}",
        extensions={"code": ErrorCode.BAD_INPUT.value},
    )
