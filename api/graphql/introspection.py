"""Introspection served from a cache (issue #22 item 2, docs/decisions/0049).

An operation that asks only for ``__schema``, ``__type`` and ``__typename``
has the same result for every caller: the schema never changes while the
process runs. Its first execution is kept (by document, operation and
variables) and every later one hands the same result to Strawberry, through
its public seam for this (an extension that sets the execution context's
``result`` before the executor runs, which then skips execution). Serving
the standard introspection query costs its encoding (~0.3 ms) instead of
its execution (~30 ms); what any introspection costs is measured and
charged like any other work (docs/decisions/0049).
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson
from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    SelectionSetNode,
)
from graphql.utilities import get_operation_ast
from strawberry.extensions import SchemaExtension

from infra.lru import LRU

KEPT = 32
"""Introspection results kept (a client tool sends one or two documents)."""
INTROSPECTION_FIELDS = frozenset({"__schema", "__type", "__typename"})

Key = tuple[int, str | None, bytes]


class Kept:
    """One schema's introspection results, by document identity (the parse
    cache hands every request of one text the same document), operation and
    variables."""

    def __init__(self, size: int = KEPT) -> None:
        self._results: LRU[Key, tuple[DocumentNode, ExecutionResult]] = LRU(size)

    def get(self, key: Key, document: DocumentNode) -> ExecutionResult | None:
        found = self._results.get(key)
        return found[1] if found is not None and found[0] is document else None

    def put(self, key: Key, document: DocumentNode, result: ExecutionResult) -> None:
        self._results.put(key, (document, result))

    @property
    def hits(self) -> int:
        return self._results.hits


def introspective(document: DocumentNode, operation_name: str | None) -> bool:
    """Whether the operation selects introspection fields only (fragments
    followed; a document that fails validation never gets this far)."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return False
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    return _only_introspection(operation.selection_set, fragments, set())


def _only_introspection(
    selections: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode], seen: set[str]
) -> bool:
    for s in selections.selections:
        if isinstance(s, FieldNode):
            if s.name.value not in INTROSPECTION_FIELDS:
                return False
        elif isinstance(s, InlineFragmentNode):
            if not _only_introspection(s.selection_set, fragments, seen):
                return False
        elif isinstance(s, FragmentSpreadNode):
            name = s.name.value
            if name in seen:
                continue
            seen.add(name)
            fragment = fragments.get(name)
            if fragment is None or not _only_introspection(fragment.selection_set, fragments, seen):
                return False
    return True


class IntrospectionCache(SchemaExtension):
    """Hands a kept introspection result to Strawberry instead of executing."""

    def __init__(self, kept: Kept) -> None:
        self._kept = kept

    def on_execute(self) -> Iterator[None]:
        ctx = self.execution_context
        document = ctx.graphql_document
        key: Key | None = None
        if document is not None and introspective(document, ctx.operation_name):
            variables = orjson.dumps(ctx.variables or {}, option=orjson.OPT_SORT_KEYS)
            key = (id(document), ctx.operation_name, variables)
            kept = self._kept.get(key, document)
            if kept is not None:
                ctx.result = kept
                key = None  # nothing to keep
        yield
        result = ctx.result
        if key is not None and isinstance(result, ExecutionResult) and not result.errors:
            assert document is not None
            self._kept.put(key, document, result)
