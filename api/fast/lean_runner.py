"""Strawberry's extensions runner, cheaper per operation and per
subscription frame (docs/decisions/0019, 0032): a subclass of the library's
``SchemaExtensionsRunner``, measured by tests/bench/test_stream_runner_bench.py
against Strawberry's own."""

from __future__ import annotations

from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import ExecutingContextManager
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.types import ExecutionContext
from strawberry.utils.await_maybe import await_maybe


class _NoHooks:
    """The hooks of a streamed result that none of ours acts on."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_: object) -> None:
        return None


_NO_HOOKS = _NoHooks()


class LeanRunner(SchemaExtensionsRunner):
    """Strawberry's runner, cheaper per subscription frame:
    ``on_stream_result`` hooks run only for results with errors (ours act on
    errors only: masking, coding, counting), and ``get_results`` is asked
    only of extensions that define it. A subclass of a library's runner, kept
    because tests/bench/test_stream_runner_bench.py measures it saving well
    over 5 % of a frame's CPU against Strawberry's own (docs/decisions/0032)."""

    def __init__(self, execution_context: ExecutionContext, extensions: list[SchemaExtension]):
        super().__init__(execution_context, extensions)
        self._reporting = [
            e for e in extensions if type(e).get_results is not SchemaExtension.get_results
        ]

    def on_stream_result(self, result: Any) -> Any:
        if getattr(result, "errors", None):
            return super().on_stream_result(result)
        return _NO_HOOKS

    def executing(self) -> ExecutingContextManager:
        """Strawberry's, without the extensions that have nothing to do for
        this operation (``idle``: the introspection cache, for any other
        operation): each hook costs a wrapper a request."""
        return ExecutingContextManager(
            [e for e in self.extensions if not getattr(e, "idle", False)]
        )

    async def get_extensions_results(self, ctx: ExecutionContext) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for extension in self._reporting:
            data.update(await await_maybe(extension.get_results()))
        data.update(ctx.extensions_results)
        return data
