"""Limits against abusive queries, built once so the validation cache hits
(a per-request rule factory defeats it: STACK.md)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from graphql import ASTValidationRule
from strawberry.extensions import (
    AddValidationRules,
    MaxTokensLimiter,
    ParserCache,
    SchemaExtension,
    ValidationCache,
)
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


def extensions() -> list[Callable[[], SchemaExtension]]:
    """Per-request factories over shared, prebuilt rules and module-level caches."""
    return [
        partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        partial(AddValidationRules, RULES),
        partial(ParserCache, maxsize=CACHE_SIZE),
        partial(ValidationCache, maxsize=CACHE_SIZE),
    ]
