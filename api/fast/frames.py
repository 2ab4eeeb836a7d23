"""Subscription frames built once per audience (docs/architecture.md).

A move's event reaches every subscriber of its audience (a seat, or the
public): executing the same selection over the same event for each of them
is most of the cost of a fan-out. An event view marked with its audience
(``GameEvent.frame_key``: the audience's channel and the seq) has one
projection, and ``GameEvent`` has no resolver that reads the caller, so the
result of a selection over it depends on the operation, the variables the
selection uses, and that key alone. :class:`SharedFrames` keeps the last
results by that key, in its schema's :class:`FrameCache`; other payloads,
and results with errors, are executed as usual. The key never mixes
audiences: a seat's frame is never served to another seat or to a spectator
(tests/api/test_shared_frames.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import orjson
from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    VariableNode,
    Visitor,
    visit,
)
from graphql.pyutils import AwaitableOrValue, Path
from graphql.type.definition import GraphQLResolveInfoHelpers
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.fast.plain_selection import Complete, PlainSelection, plain_selection, root_completion
from infra.lru import LRU

FRAMES_KEPT = 4096
"""Results kept: a move brings at most ~a dozen events per audience, read by
every subscriber within milliseconds."""


def _selection_variables(
    operation: OperationDefinitionNode, fragments: Iterable[FragmentDefinitionNode]
) -> frozenset[str]:
    """The variables that can shape a frame: all but those only in the root
    fields' arguments (they feed the resolver that makes the stream). Every
    fragment of the document counts, used or not (conservative)."""
    names: set[str] = set()

    class Collect(Visitor):
        def enter_variable(self, node: VariableNode, *_: Any) -> None:
            names.add(node.name.value)

    for selection in operation.selection_set.selections:
        if isinstance(selection, FieldNode):
            for part in (*(selection.directives or ()), selection.selection_set):
                if part is not None:
                    visit(part, Collect())
        else:
            visit(selection, Collect())
    for fragment in fragments:
        visit(fragment, Collect())
    return frozenset(names)


@dataclass(frozen=True, eq=False)
class _Operation:
    """What is worked out once per operation (hashed by identity: a cached
    result's key keeps its operation, so an id is never reused under it)."""

    node: OperationDefinitionNode
    variables: frozenset[str]  # those that can shape a frame
    plain: PlainSelection | None
    roots: dict[str, Complete | None] = field(default_factory=dict)  # by response key


_Shape = tuple[_Operation, tuple[tuple[str, str], ...]]
"""What shapes a subscription's frames: its operation, and the values of the
variables its selection uses."""
_Key = tuple[_Operation, tuple[tuple[str, str], ...], tuple[str, int]]


class FrameCache:
    """One schema's last results by (operation, selection variables, frame key)."""

    def __init__(self, size: int = FRAMES_KEPT) -> None:
        self._size = size
        self._results: LRU[_Key, ExecutionResult] = LRU(size)
        self._encoded: LRU[_Key, str] = LRU(size)
        self._operations: LRU[int, _Operation] = LRU(size)
        self._payloads: LRU[tuple[str, int], Any] = LRU(size)

    def clear(self) -> None:
        """Forget every result, frame and payload (the keys of another log
        may repeat these: a fresh store behind the same schema)."""
        self.__init__(self._size)  # type: ignore[misc]

    def payload(self, frame: tuple[str, int], build: Callable[[], Any]) -> Any:
        """The object of one event for one audience (``frame``: its channel
        and seq), built once for all of the audience's subscribers."""
        found = self._payloads.get(frame)
        if found is None:
            found = build()
            self._payloads.put(frame, found)
        return found

    @property
    def hits(self) -> int:
        return self._results.hits

    def operation(
        self,
        schema: GraphQLSchema,
        node: OperationDefinitionNode,
        fragments: Iterable[FragmentDefinitionNode],
    ) -> _Operation:
        known = self._operations.get(id(node))
        if known is None or known.node is not node:
            fragments = tuple(fragments)
            variables = _selection_variables(node, fragments)
            named = {f.name.value: f for f in fragments}
            known = _Operation(node, variables, plain_selection(schema, node, named))
            self._operations.put(id(node), known)  # keeps the node, so the id stays its own
        return known

    def shape(
        self,
        schema: GraphQLSchema,
        node: OperationDefinitionNode,
        fragments: Iterable[FragmentDefinitionNode],
        variables: dict[str, Any],
    ) -> _Shape:
        operation = self.operation(schema, node, fragments)
        used = tuple(sorted((n, repr(variables.get(n))) for n in operation.variables))
        return operation, used

    def get(self, key: _Key) -> ExecutionResult | None:
        return self._results.get(key)

    def encoded(self, key: _Key, payload: Callable[[], Any]) -> str | None:
        """The JSON of ``{"data": ...}`` of a frame already built or plain
        (``payload``: the event's object, asked for only when needed); None
        when it needs the executor."""
        text = self._encoded.get(key)
        if text is not None:
            return text
        result = self._results.get(key)
        if result is None:
            plain = key[0].plain
            result = None if plain is None else plain.frame(payload())
            if result is None:
                return None
        elif result.errors:
            return None
        text = orjson.dumps({"data": result.data}).decode()
        self._encoded.put(key, text)
        return text

    def put(self, key: _Key, result: ExecutionResult) -> None:
        if not result.errors:
            self._results.put(key, result)


RootResult = Callable[[Any, GraphQLResolveInfo[Any]], None]
"""Told of each query's and mutation's root value (metrics: moves, refusals)."""


def shared_frames(
    frames: FrameCache, on_root: RootResult | None = None, *, hide_suggestions: bool = False
) -> type[SharedFrames]:
    """The execution context class of one schema, over that schema's frames;
    ``on_root`` is told of every query's and mutation's root value;
    ``hide_suggestions``: no "Did you mean ...?" in the errors of variables."""
    hook = None if on_root is None else staticmethod(on_root)
    attributes = {"frames": frames, "on_root": hook, "hides_suggestions": hide_suggestions}
    return type("SharedFrames", (SharedFrames,), attributes)


def _weak(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` without keeping its object alive."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = ref()
        if bound is None:  # pragma: no cover - the executor outlives its fields
            raise RuntimeError("the operation's executor is gone")
        return bound(*args, **kwargs)

    return call


SUBSCRIBING: ContextVar[SharedFrames | None] = ContextVar("mmk_subscribing", default=None)
"""The executor of the subscription whose resolver runs in this task."""


class SharedFrames(StrawberryGraphQLCoreExecutionContext):
    """Executes a marked subscription event once per audience and selection:
    the per-event executor of a frame already built just returns it. A
    schema uses a subclass bound to its own cache (:func:`shared_frames`)."""

    frames: FrameCache
    on_root: RootResult | None = None
    hides_suggestions = False
    _shape: _Shape | None = None  # worked out on the subscription's first event

    @classmethod
    def build(cls, *args: Any, **kwargs: Any) -> Any:
        """graphql-core's constructor; a schema that hides suggestions
        (introspection off) hides them from its variables' errors too
        (graphql-core's ``hide_suggestions``, which Strawberry never sets)."""
        if cls.hides_suggestions:
            kwargs["hide_suggestions"] = True
        return super().build(*args, **kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # graphql-core keeps bound methods of the executor in its resolve-info
        # helpers: a reference cycle per operation, so every operation's
        # executor, fields, context and request waited for the cyclic
        # collector (~90 objects a request; docs/decisions/0036). Weak
        # references break the cycle: the executor is freed when done.
        self.async_helpers = GraphQLResolveInfoHelpers(
            gather=_weak(self.gather_async_work), track=_weak(self.track_async_work)
        )
        if self.operation.operation is OperationType.SUBSCRIPTION:
            SUBSCRIBING.set(self)  # the operation's task: its resolver may push

    def pushed_frame(self, frame: tuple[str, int], payload: Callable[[], Any]) -> str | None:
        """The JSON payload of this subscription's frame of one event
        (``frame``: its audience's channel and seq), when it is built or
        plain (api/fast/push.py); None: it needs the executor."""
        return self.frames.encoded((*self._frame_shape(), frame), payload)

    def _frame_shape(self) -> _Shape:
        shape = self._shape
        if shape is None:
            shape = self._shape = self.frames.shape(
                self.schema,
                self.operation,
                self.fragment_definitions.values(),
                self.variable_values.coerced,
            )
        return shape

    def build_per_event_executor(self, payload: Any) -> Any:
        frame = getattr(payload, "frame_key", None)
        if frame is None:
            return super().build_per_event_executor(payload)
        shape = self._frame_shape()
        operation = shape[0]
        key = (*shape, frame)
        cached = self.frames.get(key)
        if cached is not None:
            return _Built(cached)
        if operation.plain is not None and (built := operation.plain.frame(payload)) is not None:
            self.frames.put(key, built)
            return _Built(built)
        executor = super().build_per_event_executor(payload)
        assert isinstance(executor, SharedFrames)
        executor.frame = key
        return executor

    frame: _Key | None = None

    def complete_value(
        self,
        return_type: GraphQLOutputType,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        path: Path,
        result: Any,
        position_context: Any,
    ) -> AwaitableOrValue[Any]:
        """A query's or mutation's root field whose selection is plain is
        completed by its compiled plan (api/fast/plain_selection.py), at a
        fraction of the executor's cost; else, or when the plan cannot vouch
        for a value, by the executor."""
        if (
            path.prev is None
            and return_type is info.return_type
            and self.operation.operation is not OperationType.SUBSCRIPTION
            and not isinstance(result, Exception)
        ):
            if self.on_root is not None and result is not None:
                self.on_root(result, info)
            complete = self._root_completion(info.parent_type, path.key, field_details_list)
            if complete is not None:
                try:
                    return complete(result)
                except Exception:  # the executor completes it and reports what failed
                    pass
        return super().complete_value(
            return_type, field_details_list, info, path, result, position_context
        )

    def _root_completion(
        self, parent: GraphQLObjectType, key: str | int, field_details_list: Any
    ) -> Complete | None:
        operation = self.frames.operation(
            self.schema, self.operation, self.fragment_definitions.values()
        )
        name = str(key)
        if name not in operation.roots:
            nodes = [d.node for d in field_details_list]
            operation.roots[name] = root_completion(
                self.schema, parent, nodes, self.fragment_definitions
            )
        return operation.roots[name]

    def execute_operation(self, serially: bool | None = None) -> AwaitableOrValue[Any]:
        result = super().execute_operation(serially)
        key = self.frame
        if key is None:
            return result
        if self.is_awaitable(result):
            return self._keep_when_done(key, result)
        if isinstance(result, ExecutionResult):
            self.frames.put(key, result)
        return result

    async def _keep_when_done(self, key: _Key, pending: Any) -> Any:
        result = await pending
        if isinstance(result, ExecutionResult):
            self.frames.put(key, result)
        return result


class _Built:
    """An event executor whose frame is already built."""

    def __init__(self, result: ExecutionResult) -> None:
        self._result = result

    def execute_operation(self, serially: bool | None = None) -> ExecutionResult:
        return self._result
