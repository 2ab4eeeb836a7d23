"""Limits against abusive queries, built once so the validation cache hits
(a per-request rule factory defeats it: STACK.md)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from graphql import ASTValidationRule, DocumentNode, GraphQLError, GraphQLSchema, validate
from strawberry.extensions import ParserCache, SchemaExtension
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


class _Validated:
    """Validation results by document identity: the parser cache hands every
    request of one query text the same document, and a schema's rules never
    change, so (schema, document) is the key. Strawberry's ``ValidationCache``
    keys on the documents' value instead, hashing every node of the tree on
    every request (a move's document: ~40 nodes)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._results: OrderedDict[
            tuple[int, int], tuple[GraphQLSchema, DocumentNode, list[GraphQLError]]
        ] = OrderedDict()

    def errors(
        self, schema: GraphQLSchema, document: DocumentNode, rules: Any
    ) -> list[GraphQLError]:
        key = (id(schema), id(document))
        hit = self._results.get(key)
        if hit is not None and hit[0] is schema and hit[1] is document:
            self._results.move_to_end(key)
            return hit[2]
        errors = validate(schema, document, rules)
        self._results[key] = (schema, document, errors)  # the refs keep the ids theirs
        if len(self._results) > self._size:
            self._results.popitem(last=False)
        return errors


VALIDATED = _Validated(CACHE_SIZE)


class CodedParserCache(ParserCache):
    """``ParserCache`` with the request limits (tokens, depth, aliases) and
    the validation cache folded in, one extension instead of four per
    request; its syntax errors (the token limit's included) still get
    ``extensions.code``: raised from ``on_parse`` they would skip the error
    extensions, so a failed parse is left to Strawberry's own parse, which
    reports it as a request error."""

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
        ctx.pre_execution_errors = VALIDATED.errors(
            ctx.schema._schema, ctx.graphql_document, ctx.validation_rules
        )
        yield


def extensions() -> list[Callable[[], SchemaExtension]]:
    """Per-request factories over shared, prebuilt rules and module-level caches."""
    return [partial(CodedParserCache, maxsize=CACHE_SIZE)]
