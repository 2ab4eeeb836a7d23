"""A WebSocket operation whose document runs no operation: several and none
named, or none of the name sent (docs/decisions/0052).

Strawberry finds the operation's type before any extension can refuse the
request: a name the document lacks raised out of the operation's task
(INTERNAL, a traceback logged), and over graphql-ws, which subscribes to
whatever is not a query or a mutation, so did the first operation of an
unnamed choice. Both WebSocket handlers ask here first, in the operation's
own task: the parse is paid for first (api/graphql/limits.py), as it would
have been."""

from __future__ import annotations

from graphql import GraphQLError

from api.graphql.limits import parse_document, pay_for_parse
from api.graphql.operation_choice import unknown_choice, unnamed_choice
from infra.rate_limit import RateLimiter


async def unrunnable(
    context: object, query: str, operation_name: str | None, limiter: RateLimiter | None
) -> GraphQLError | None:
    """The refusal of an operation no part of its document would run; None
    when it runs (or is refused later, by the limits: over budget, too
    long, not parsed)."""
    if await pay_for_parse(context, query, limiter):
        return None  # over budget: the limits refuse it
    try:
        document = parse_document(query)
    except GraphQLError:
        return None  # the limits refuse it
    return unnamed_choice(document, operation_name) or unknown_choice(document, operation_name)
