"""The GraphQL side of the metrics (infra.metrics).

:class:`GraphQLMetrics`, a schema extension, measures operations: latency,
coded GraphQL errors, open subscriptions. :func:`root_results` counts what
the root fields return (moves accepted, typed ``Refusal`` results), told by
the execution context once per root field (api/fast/frames.py), so that
the other fields pay nothing (a ``resolve`` hook would wrap every field of
every query).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from time import perf_counter
from typing import Any

from graphql import (
    FieldNode,
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLUnionType,
    get_named_type,
)
from graphql import OperationType as GqlOperation
from graphql.utilities import get_operation_ast
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext
from strawberry.types.graphql import OperationType

from api.graphql.types.refusal import Refusal
from infra.metrics import Metrics

Info = GraphQLResolveInfo[Any]


class GraphQLMetrics(SchemaExtension):
    """Per operation; list it before ``ErrorCodes`` so that errors are seen
    with their final code."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._subscription: str | None = None
        self._streamed = False

    def on_operation(self) -> Iterator[None]:
        start = perf_counter()
        try:
            yield
        finally:
            ctx = self.execution_context
            if self._subscription is not None:
                self.metrics.subscriptions.labels(self._subscription).dec()
            else:
                operation = _operation_type(ctx)
                self.metrics.graphql_latency.labels(operation).observe(perf_counter() - start)
            if not self._streamed:
                self._count_errors(getattr(ctx.result, "errors", None))

    def on_execute(self) -> Iterator[None]:
        ctx = self.execution_context
        if ctx.operation_type is OperationType.SUBSCRIPTION:
            self._subscription = _root_field(ctx)
            self.metrics.subscriptions.labels(self._subscription).inc()
        yield

    def on_stream_result(self, result: Any) -> Iterator[None]:
        """WebSocket results: counted once ``ErrorCodes`` has coded them."""
        self._streamed = True
        try:
            yield
        finally:
            self._count_errors(getattr(result, "errors", None))

    def _count_errors(self, errors: list[GraphQLError] | None) -> None:
        for error in errors or ():
            self.metrics.refusal((error.extensions or {}).get("code"), "error")


def metrics_extension(metrics: Metrics) -> Callable[[], SchemaExtension]:
    """The per-request factory for ``strawberry.Schema(extensions=...)``."""
    return partial(GraphQLMetrics, metrics)


def root_results(metrics: Metrics) -> Callable[[Any, GraphQLResolveInfo[Any]], None]:
    """Counts root results (api/fast/frames.py tells it of each): a
    ``Refusal`` by its code, any other result of a mutation as a move
    accepted (every mutation returns a union with ``Refusal``)."""

    def count(value: Any, info: GraphQLResolveInfo[Any]) -> None:
        if not isinstance(get_named_type(info.return_type), GraphQLUnionType):
            return  # not a result union (`me`, `__typename`, ...)
        if isinstance(value, Refusal):
            metrics.refusal(value.code.value, "refusal")
        elif info.operation.operation is GqlOperation.MUTATION:
            metrics.moves.labels(info.field_name).inc()

    return count


def _operation_type(ctx: ExecutionContext) -> str:
    try:
        return ctx.operation_type.value
    except Exception:  # no document (a parse error) or no such operation
        return "unknown"


def _root_field(ctx: ExecutionContext) -> str:
    assert ctx.graphql_document is not None
    operation = get_operation_ast(ctx.graphql_document, ctx.operation_name)
    first = operation.selection_set.selections[0] if operation else None
    return first.name.value if isinstance(first, FieldNode) else "unknown"
