"""The schema: queries, mutations, subscriptions, with limits, caches and
error codes."""

from __future__ import annotations

from collections.abc import Callable

import strawberry
from graphql import GraphQLError
from strawberry.extensions import DisableIntrospection, SchemaExtension
from strawberry.types import ExecutionContext

import api.graphql.types.enums  # noqa: F401  (registers the domain enums)
from api.graphql.errors import ErrorCodes, log
from api.graphql.limits import extensions
from api.graphql.mutations import Mutation
from api.graphql.queries import Query
from api.graphql.subscriptions import Subscription


class GameSchema(strawberry.Schema):
    """Logs client errors briefly; unexpected ones are logged with their
    traceback by :class:`ErrorCodes` when masked."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            log.debug("refused: %s %s", (error.extensions or {}).get("code"), error.message)


def build_schema(*, introspection: bool = True) -> strawberry.Schema:
    exts: list[Callable[[], SchemaExtension]] = [*extensions(), ErrorCodes]
    if not introspection:
        exts.append(DisableIntrospection)
    return GameSchema(query=Query, mutation=Mutation, subscription=Subscription, extensions=exts)


schema = build_schema()
