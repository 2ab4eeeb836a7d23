"""Introspection served from a cache, and off the event loop (issue #22
item 2, docs/decisions/0054).

An operation that asks only for ``__schema``, ``__type`` and ``__typename``
has the same result for every caller: the schema never changes while the
process runs. Its first execution is kept (by document, operation and
variables) and every later one hands the same result to Strawberry, through
its public seam for this (an extension that sets the execution context's
``result`` before the executor runs, which then skips execution). Serving
the standard introspection query costs its encoding (~0.3 ms) instead of
its execution (~30 ms).

The first execution runs graphql-core's ``execute`` (the function Strawberry
calls; introspection has no resolver of ours) in a worker thread, one at a
time: the event loop keeps serving others, taking the GIL back every switch
interval, where an execution on the loop held it for the whole ~30 ms (474
ms for ten deep aliases). Its CPU time is the caller's (docs/decisions/0049).
tests/api/test_introspection_cache.py checks both paths against
Strawberry's own; tests/bench/test_introspection_bench.py measures a
neighbour's latency with either.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLSchema,
    InlineFragmentNode,
    SelectionSetNode,
)
from graphql import execute as graphql_execute
from graphql.utilities import get_operation_ast
from strawberry.extensions import SchemaExtension

from api.fast.core_schema import core_schema
from infra.lru import LRU
from infra.work_meter import in_thread

_THREAD = ThreadPoolExecutor(1, thread_name_prefix="mmk-introspection")
"""One thread executes introspection: misses wait their turn there, and the
event loop shares the GIL with one thread at most."""
SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the GIL while another waits for it, during an
introspection's execution."""
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
        self._kinds: LRU[tuple[int, str | None], tuple[DocumentNode, bool]] = LRU(512)

    def introspective(self, document: DocumentNode, operation_name: str | None) -> bool:
        """:func:`introspective`, kept by document identity."""
        key = (id(document), operation_name)
        found = self._kinds.get(key)
        if found is not None and found[0] is document:
            return found[1]
        only = introspective(document, operation_name)
        self._kinds.put(key, (document, only))
        return only

    def get(self, key: Key, document: DocumentNode) -> ExecutionResult | None:
        found = self._results.get(key)
        return found[1] if found is not None and found[0] is document else None

    def put(self, key: Key, document: DocumentNode, result: ExecutionResult) -> None:
        self._results.put(key, (document, result))


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


def executed(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: dict[str, Any] | None,
    context: Any,
) -> ExecutionResult | None:
    """An introspection-only operation, executed by graphql-core (in the
    introspection thread); None if it turned out to need the event loop.
    Meanwhile the interpreter hands the GIL over every
    :data:`SWITCH_INTERVAL` (5 ms by default): the loop waits for it that
    long at most when it wakes up."""
    usual = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        result = graphql_execute(
            schema,
            document,
            variable_values=variables,
            operation_name=operation_name,
            context_value=context,
        )
    finally:
        sys.setswitchinterval(usual)
    return result if isinstance(result, ExecutionResult) else None


class IntrospectionCache(SchemaExtension):
    """Hands an introspection result to Strawberry instead of its executor:
    kept, or made in a worker thread and kept."""

    def __init__(self, kept: Kept) -> None:
        self._kept = kept

    @property
    def idle(self) -> bool:
        """Nothing to do: not an introspection-only operation (the schema's
        runner then leaves this extension's hook out)."""
        ctx = self.execution_context
        document = ctx.graphql_document
        return document is None or not self._kept.introspective(document, ctx.operation_name)

    async def on_execute(self) -> AsyncIterator[None]:
        ctx = self.execution_context
        document = ctx.graphql_document
        if document is None or not self._kept.introspective(document, ctx.operation_name):
            yield
            return
        variables = orjson.dumps(ctx.variables or {}, option=orjson.OPT_SORT_KEYS)
        key = (id(document), ctx.operation_name, variables)
        result = self._kept.get(key, document)
        if result is None:
            schema = core_schema(ctx.schema)
            name, values, context = ctx.operation_name, ctx.variables, ctx.context
            run = in_thread(lambda: executed(schema, document, name, values, context))
            caller = contextvars.copy_context()  # the caller's meter, in the thread
            result = await asyncio.get_running_loop().run_in_executor(_THREAD, caller.run, run)
            if result is not None and not result.errors:
                self._kept.put(key, document, result)
        if result is not None:
            ctx.result = result
        yield
