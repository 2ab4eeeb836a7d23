"""The schema: queries, mutations, subscriptions, with limits, caches and
error codes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import DisableIntrospection, SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.schema import StreamResult
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

import api.graphql.types.enums  # noqa: F401  (registers the domain enums)
from api.fast.frames import FrameCache, shared_frames
from api.fast.lean_runner import LeanRunner
from api.graphql.errors import ErrorCodes, log
from api.graphql.introspection import IntrospectionCache, Kept
from api.graphql.limits import DEFAULT_MAX_COST, extensions
from api.graphql.metrics import metrics_extension, root_results
from api.graphql.mutations import Mutation
from api.graphql.operation_choice import SENT
from api.graphql.queries import Query
from api.graphql.rate_limits import rate_limit_extension
from api.graphql.scalars import SCALARS
from api.graphql.subscriptions import Subscription
from api.graphql.types.event_kinds import kinds_of
from api.graphql.types.events import ALL_TYPES as EVENT_TYPES
from domain.game.events import Event
from infra.metrics import Metrics
from infra.rate_limit import RateLimiter

_QUOTED_VALUE = re.compile(r"(invalid value|, found|cannot represent)\b.*", re.S)
"""Where a coercion error starts quoting the value sent (a card, a token)."""


class GameSchema(strawberry.Schema):
    """Logs client errors briefly; unexpected ones are logged with their
    traceback by :class:`ErrorCodes` when masked. ``frames``: this schema's
    shared subscription frames (api/fast/frames.py)."""

    frames: FrameCache

    async def execute(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        """Strawberry's, the ``operationName`` sent known to the limits
        (api/graphql/operation_choice.py)."""
        SENT.set(operation_name)
        return await super().execute(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            allowed_operation_types,
            operation_extensions,
        )

    async def stream(
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        operation_extensions: dict[str, Any] | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
    ) -> StreamResult:
        """Strawberry's (subscriptions, and HTTP and WebSocket operations),
        the ``operationName`` sent known to the limits."""
        SENT.set(operation_name)
        return await super().stream(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            operation_extensions,
            allowed_operation_types,
        )

    def create_extensions_runner(
        self, execution_context: ExecutionContext, extensions: list[SchemaExtension]
    ) -> SchemaExtensionsRunner:
        return LeanRunner(execution_context, extensions)

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            message = _QUOTED_VALUE.sub(r"\1 [value not logged]", error.message)
            log.debug("refused: %s %s", (error.extensions or {}).get("code"), message)


def build_schema(
    *,
    introspection: bool = True,
    metrics: Metrics | None = None,
    rate_limiter: RateLimiter | None = None,
    max_cost: int = DEFAULT_MAX_COST,
    events: Iterable[type[Event]] = (),
) -> GameSchema:
    """The schema; ``events``: event kinds registered after start-up
    (domain/event_kinds.py), typed like the others."""
    # Without introspection, no "Did you mean ...?" either: suggestions
    # would tell the schema's names one guess at a time.
    hide_suggestions = not introspection
    exts: list[Callable[[], SchemaExtension]] = [
        *extensions(max_cost, rate_limiter, hide_suggestions=hide_suggestions),
        ErrorCodes,
    ]
    if rate_limiter is not None:  # None when every limit is off: no cost at all
        exts.append(rate_limit_extension(rate_limiter))
    if metrics is not None:  # first, so it sees errors once ErrorCodes has coded them
        exts.insert(0, metrics_extension(metrics))
    if introspection:  # served from a cache after its first execution
        exts.append(partial(IntrospectionCache, Kept()))
    else:
        exts.append(DisableIntrospection)
    frames = FrameCache()
    built = GameSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=exts,
        types=[*EVENT_TYPES, *kinds_of(events).values()],
        execution_context_class=shared_frames(
            frames,
            None if metrics is None else root_results(metrics),
            hide_suggestions=hide_suggestions,
        ),
        config=StrawberryConfig(scalar_map=SCALARS),
    )
    built.frames = frames
    return built


schema = build_schema()
