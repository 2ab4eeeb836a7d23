"""The schema: queries, mutations, subscriptions, with limits, caches and
error codes."""

from __future__ import annotations

from collections.abc import Callable

import strawberry
from strawberry.extensions import DisableIntrospection, SchemaExtension

import api.graphql.types.enums  # noqa: F401  (registers the domain enums)
from api.graphql.errors import ErrorCodes
from api.graphql.limits import extensions
from api.graphql.mutations import Mutation
from api.graphql.queries import Query
from api.graphql.subscriptions import Subscription


def build_schema(*, introspection: bool = True) -> strawberry.Schema:
    exts: list[Callable[[], SchemaExtension]] = [*extensions(), ErrorCodes]
    if not introspection:
        exts.append(DisableIntrospection)
    return strawberry.Schema(
        query=Query, mutation=Mutation, subscription=Subscription, extensions=exts
    )


schema = build_schema()
