"""Limits against abusive queries, built once so the validation cache hits
(a per-request rule factory defeats it: STACK.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from graphql import ASTValidationRule, GraphQLError
from strawberry.extensions import ParserCache, SchemaExtension, ValidationCache
from strawberry.extensions.max_aliases import create_validator as alias_validator
from strawberry.extensions.query_depth_limiter import create_validator as depth_validator

MAX_DEPTH = 12
MAX_ALIASES = 15
MAX_TOKENS = 2_000
CACHE_SIZE = 512

RULES: list[type[ASTValidationRule]] = [
    depth_validator(MAX_DEPTH, None),
    alias_validator(MAX_ALIASES),
]


class CodedParserCache(ParserCache):
    """``ParserCache`` with the request limits (tokens, depth, aliases) folded
    in, one extension instead of three per request; its syntax errors (the
    token limit's included) still get ``extensions.code``: raised from
    ``on_parse`` they would skip the error extensions, so a failed parse is
    left to Strawberry's own parse, which reports it as a request error."""

    def on_operation(self) -> Iterator[None]:
        ctx = self.execution_context
        ctx.parse_options["max_tokens"] = MAX_TOKENS
        ctx.validation_rules = (*ctx.validation_rules, *RULES)
        yield

    def on_parse(self) -> Iterator[None]:
        ctx = self.execution_context
        try:
            ctx.graphql_document = self.cached_parse_document(ctx.query, **ctx.parse_options)
        except GraphQLError:
            ctx.graphql_document = None
        yield


def extensions() -> list[Callable[[], SchemaExtension]]:
    """Per-request factories over shared, prebuilt rules and module-level caches."""
    return [
        partial(CodedParserCache, maxsize=CACHE_SIZE),
        partial(ValidationCache, maxsize=CACHE_SIZE),
    ]
