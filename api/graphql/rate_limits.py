"""Rate limits on mutations and subscription starts (infra.rate_limit), as a
schema extension: checked once an operation is parsed and valid, before it
runs, over HTTP and WebSocket alike.

A refusal is a GraphQL error with ``extensions.code`` ``RATE_LIMITED`` and
``extensions.retryAfter``, the seconds to wait (over HTTP also a
``Retry-After`` header, whole seconds). Nothing runs, so nothing changes.
A mutation operation costs one per root field (aliases make several moves);
a subscription start costs one. Queries are charged their estimated cost
before validation, by api.graphql.limits.

The client IP is the ASGI scope's ``client``: behind a proxy, uvicorn's
proxy headers decide it (``MMK_FORWARDED_ALLOW_IPS``, docs/operations.md); the server
never reads ``X-Forwarded-For`` itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from functools import partial

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationType,
    SelectionNode,
)
from graphql.utilities import get_operation_ast
from starlette.responses import Response
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext

from api.graphql.context import Context
from domain.errors import DomainError, ErrorCode
from domain.services.auth import bearer_token, is_service_key
from infra.rate_limit import MUTATION, SERVICE, SUBSCRIPTION, Kind, LocalLimiter, RateLimiter
from infra.work_meter import METER

log = logging.getLogger("mmk.api")


def rate_limited(wait: float) -> GraphQLError:
    """The refusal, with the wait rounded up to the millisecond."""
    seconds = math.ceil(wait * 1000) / 1000
    return GraphQLError(
        f"too many requests: retry in {seconds:g} s",
        extensions={"code": ErrorCode.RATE_LIMITED.value, "retryAfter": seconds},
    )


Charge = tuple[Kind, str | None, str | None, int]  # kind, IP, token, cost


def charge_of(ctx: ExecutionContext) -> Charge | None:
    """What the operation costs, and to whom; None for a player's query
    (charged its estimated cost instead). A service key's operations cost
    one call per root field, queries too (issue #24)."""
    document = ctx.graphql_document
    if document is None:
        return None
    operation = get_operation_ast(document, ctx.operation_name)
    if operation is None:
        return None
    ip, token = who(ctx)
    service = token is not None and is_service_key(token)
    if operation.operation is OperationType.QUERY and not service:
        return None
    kind: Kind = SUBSCRIPTION
    cost = 1
    if operation.operation is not OperationType.SUBSCRIPTION:
        kind = SERVICE if service else MUTATION
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        cost = max(1, _root_fields(operation.selection_set.selections, fragments, 0))
    return (kind, ip, token, cost)


def who(ctx: ExecutionContext) -> tuple[str | None, str | None]:
    """The client's IP and bearer token (either None when unknown)."""
    return who_of(ctx.context)


def who_of(context: object) -> tuple[str | None, str | None]:
    """:func:`who` from the request's context (an HTTP request's meter knows
    it already: read from the request once, docs/decisions/0049)."""
    meter = METER.get()
    if meter is not None and not meter.shared and meter.parent is None:
        return meter.ip, meter.token
    if not isinstance(context, Context):
        return None, None
    client = context.request.client
    try:
        token = bearer_token(context.authorization())
    except DomainError:  # malformed: refused as UNAUTHENTICATED by the operation
        token = None
    return client.host if client else None, token


def refuse(ctx: ExecutionContext, wait: float) -> GraphQLError:
    """The refusal, with ``Retry-After`` on an HTTP response."""
    context = ctx.context
    if isinstance(context, Context) and isinstance(context.response, Response):
        context.response.headers["Retry-After"] = str(math.ceil(wait))
    return rate_limited(wait)


class LocalRateLimits(SchemaExtension):
    """The in-process limiter, with a synchronous hook (the cheapest kind)."""

    def __init__(self, limiter: LocalLimiter) -> None:
        self.limiter = limiter

    def on_execute(self) -> Iterator[None]:
        wait = 0.0
        try:
            charge = charge_of(self.execution_context)
            if charge is not None:
                wait = self.limiter.check_now(*charge)
        except Exception:  # an extension's error would reach the client unmasked
            log.exception("rate limit check failed; the request goes on unlimited")
        if wait > 0:
            raise refuse(self.execution_context, wait)
        yield


class RateLimits(SchemaExtension):
    """Any limiter (Redis: one round trip per mutation or subscription start)."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    async def on_execute(self) -> AsyncIterator[None]:
        wait = 0.0
        try:
            charge = charge_of(self.execution_context)
            if charge is not None:
                wait = await self.limiter.check(*charge)
        except Exception:  # an extension's error would reach the client unmasked
            log.exception("rate limit check failed; the request goes on unlimited")
        if wait > 0:
            raise refuse(self.execution_context, wait)
        yield


def _root_fields(
    selections: Iterable[SelectionNode], fragments: dict[str, FragmentDefinitionNode], depth: int
) -> int:
    """Root fields of a selection, fragments followed (``__typename`` is free)."""
    count = 0
    for s in selections:
        if isinstance(s, FieldNode):
            count += not s.name.value.startswith("__")
        elif depth < 8 and isinstance(s, InlineFragmentNode):
            count += _root_fields(s.selection_set.selections, fragments, depth + 1)
        elif depth < 8 and isinstance(s, FragmentSpreadNode) and s.name.value in fragments:
            spread = fragments[s.name.value].selection_set.selections
            count += _root_fields(spread, fragments, depth + 1)
    return count


def rate_limit_extension(limiter: RateLimiter) -> Callable[[], SchemaExtension]:
    """The per-request factory for ``strawberry.Schema(extensions=...)``."""
    if isinstance(limiter, LocalLimiter):
        return partial(LocalRateLimits, limiter)
    return partial(RateLimits, limiter)
