"""Limits against abusive queries, built once so the validation cache hits
(a per-request rule factory defeats it: STACK.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    OperationType,
    validate,
)
from graphql.utilities import get_operation_ast
from strawberry.extensions import ParserCache, SchemaExtension
from strawberry.extensions.max_aliases import create_validator as alias_validator
from strawberry.extensions.query_depth_limiter import create_validator as depth_validator

from infra.lru import LRU

MAX_DEPTH = 12
MAX_ALIASES = 15
MAX_TOKENS = 2_000
CACHE_SIZE = 512

RULES: list[type[ASTValidationRule]] = [
    depth_validator(MAX_DEPTH, None),
    alias_validator(MAX_ALIASES),
]

_parse = ParserCache(maxsize=CACHE_SIZE).cached_parse_document
"""The process's parse cache (Strawberry keeps one per size): the one
:class:`CodedParserCache` parses with, called the same way."""


def operation_type(query: str | None, operation_name: str | None) -> OperationType | None:
    """The type of the operation a request would run (the HTTP view picks a
    transport by it), from the shared parse cache with the token limit, so
    the execution that follows hits the cache; None when the document does
    not parse or names no such operation (the execution reports why)."""
    if not query:
        return None
    try:
        document = _parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError:
        return None
    operation = get_operation_ast(document, operation_name)
    return None if operation is None else operation.operation


class Validated:
    """One schema's validation results by document identity: the parser cache
    hands every request of one query text the same document, and a schema's
    rules never change, so the document is the key. Strawberry's
    ``ValidationCache`` keys on the document's value instead, hashing every
    node of the tree on every request. ``hide_suggestions``: no "Did you
    mean ...?" in the errors (graphql-core's option)."""

    def __init__(self, size: int = CACHE_SIZE, *, hide_suggestions: bool = False) -> None:
        self._results: LRU[int, tuple[DocumentNode, list[GraphQLError]]] = LRU(size)
        self._hide_suggestions = hide_suggestions

    def errors(
        self, schema: GraphQLSchema, document: DocumentNode, rules: Any
    ) -> list[GraphQLError]:
        hit = self._results.get(id(document))
        if hit is not None and hit[0] is document:
            return hit[1]
        errors = validate(schema, document, rules, hide_suggestions=self._hide_suggestions)
        self._results.put(id(document), (document, errors))  # the ref keeps the id its own
        return errors


class CodedParserCache(ParserCache):
    """``ParserCache`` with the request limits (tokens, depth, aliases) and
    the validation cache folded in, one extension instead of four per
    request; its syntax errors (the token limit's included) still get
    ``extensions.code``: raised from ``on_parse`` they would skip the error
    extensions, so a failed parse is left to Strawberry's own parse, which
    reports it as a request error."""

    def __init__(self, validated: Validated, maxsize: int = CACHE_SIZE) -> None:
        super().__init__(maxsize=maxsize)
        self._validated = validated

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

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        assert ctx.graphql_document is not None
        ctx.pre_execution_errors = errors = self._validated.errors(
            ctx.schema._schema, ctx.graphql_document, ctx.validation_rules
        )
        if not errors:
            # A request that registers an automatic persisted query does so
            # once its document is known valid (api/graphql/persisted.py).
            on_valid = getattr(ctx.context, "on_valid", None)
            if on_valid is not None:
                on_valid()
        yield


def extensions(*, hide_suggestions: bool = False) -> list[Callable[[], SchemaExtension]]:
    """Per-request factories over prebuilt rules and one schema's caches."""
    return [partial(CodedParserCache, Validated(hide_suggestions=hide_suggestions))]
