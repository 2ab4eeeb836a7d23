"""Subscription frames of plain selections built without the executor.

A subscription's selection is *plain* when everything below its one root
field reads the payload alone: fields without arguments or directives, each
read from its object as it is or computed by a plain resolver (no argument,
no ``info``, not async); scalars and enums; nested objects and lists; inline
fragments and named fragment spreads on types (typed events: ``... on
CardPlayed { seat card { id } }``); aliases and ``__typename`` anywhere.

Such a selection is compiled once per operation into a plan per object type
(fields collected and merged in graphql-core's order), and a frame is the
payload walked along that plan, every leaf put through its type's
``serialize``, as graphql-core's executor would do it, at a fraction of the
cost. Whatever the plan cannot vouch for (a null where the schema says
non-null, a value its type refuses, an object of an unexpected type) falls
back to the executor, which reports it; anything not plain goes to the
executor from the start. tests/api/test_plain_selection.py checks both agree
byte for byte on random selections of every event type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from graphql import (
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    Undefined,
)

TYPENAME = "__typename"
_DEFINITION = "strawberry-definition"  # Strawberry's back reference on its GraphQL types

Complete = Callable[[Any], Any]
"""A value of one field -> its serialized form (raises :class:`_Refused`)."""


class _Refused(Exception):
    """A value the plan cannot vouch for: the executor frames this event."""


class _NotPlain(Exception):
    """The selection needs the executor."""


@dataclass(frozen=True, slots=True)
class _Field:
    key: str  # the response key (the alias, else the name)
    read: Callable[[Any], Any] | None  # the value from its object; None: __typename
    complete: Complete


class _ObjectPlan:
    """The fields to write for an object of one type, in the executor's order."""

    __slots__ = ("fields", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: tuple[_Field, ...] = ()

    def __call__(self, value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.fields:
            out[f.key] = self.name if f.read is None else f.complete(f.read(value))
        return out


def _runtime_name(value: Any) -> str | None:
    definition = getattr(value, "__strawberry_definition__", None)
    return None if definition is None else str(definition.name)


@dataclass(frozen=True, slots=True)
class PlainSelection:
    """How to build the frame of one plain subscription selection."""

    root_key: str
    complete: Complete  # the root field's value -> its frame

    def frame(self, payload: Any) -> ExecutionResult | None:
        """The frame, or None when a value needs the executor (a null or a
        value its type refuses, which the executor reports as an error)."""
        try:
            return ExecutionResult({self.root_key: self.complete(payload)}, None)
        except _Refused:
            return None
        except Exception:  # a reader or a serializer failed: the executor says how
            return None


def _reader(strawberry_field: Any) -> Callable[[Any], Any] | None:
    """How a plain frame gets a field's value from its object: its attribute,
    or its resolver when that takes nothing but the object (``self``)."""
    if getattr(strawberry_field, "extensions", None) or getattr(
        strawberry_field, "permission_classes", None
    ):
        return None  # the field's own hooks must run
    resolver = strawberry_field.base_resolver
    if resolver is None:
        return attrgetter(strawberry_field.python_name)
    takes_more = resolver.arguments or resolver.info_parameter or resolver.root_parameter
    if resolver.is_async or takes_more or resolver.parent_parameter:
        return None
    if resolver.self_parameter is None:
        return None
    read: Callable[[Any], Any] = resolver.wrapped_func
    return read


def _leaf(kind: GraphQLScalarType | GraphQLEnumType, non_null: bool) -> Complete:
    serialize = kind.serialize

    def complete(value: Any) -> Any:
        if value is None:
            if non_null:
                raise _Refused
            return None
        serialized = serialize(value)
        if serialized is None or serialized is Undefined:
            raise _Refused
        return serialized

    return complete


def _list(item: Complete, non_null: bool) -> Complete:
    def complete(value: Any) -> Any:
        if value is None:
            if non_null:
                raise _Refused
            return None
        if not isinstance(value, list | tuple):
            raise _Refused
        return [item(v) for v in value]

    return complete


def _object(plans: Mapping[str, _ObjectPlan], non_null: bool) -> Complete:
    """An object of one of ``plans``' types, by its runtime type."""

    def complete(value: Any) -> Any:
        if value is None:
            if non_null:
                raise _Refused
            return None
        plan = plans.get(_runtime_name(value) or "")
        if plan is None:
            raise _Refused
        return plan(value)

    return complete


class _Compiler:
    """Compiles one operation's selection, type by type (graphql-core's field
    collection without directives: fields in order of first appearance,
    fragments whose type condition applies, each named fragment once per
    collection)."""

    def __init__(self, schema: GraphQLSchema, fragments: Mapping[str, FragmentDefinitionNode]):
        self.schema = schema
        self.fragments = fragments

    def _applies(self, condition: str | None, runtime: GraphQLObjectType) -> bool:
        if condition is None or condition == runtime.name:
            return True
        named = self.schema.get_type(condition)
        if isinstance(named, GraphQLInterfaceType | GraphQLUnionType):
            return self.schema.is_sub_type(named, runtime)
        return False

    def _collect(
        self,
        runtime: GraphQLObjectType,
        selection_set: SelectionSetNode,
        into: dict[str, list[FieldNode]],
        visited: set[str],
    ) -> None:
        for node in selection_set.selections:
            if node.directives:
                raise _NotPlain
            if isinstance(node, FieldNode):
                key = node.alias.value if node.alias else node.name.value
                into.setdefault(key, []).append(node)
            elif isinstance(node, InlineFragmentNode):
                condition = node.type_condition.name.value if node.type_condition else None
                if self._applies(condition, runtime):
                    self._collect(runtime, node.selection_set, into, visited)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                if name in visited:
                    continue
                visited.add(name)
                fragment = self.fragments.get(name)
                if fragment is None:
                    raise _NotPlain
                if self._applies(fragment.type_condition.name.value, runtime):
                    self._collect(runtime, fragment.selection_set, into, visited)

    def object_plan(self, runtime: GraphQLObjectType, nodes: Iterable[FieldNode]) -> _ObjectPlan:
        grouped: dict[str, list[FieldNode]] = {}
        visited: set[str] = set()
        for node in nodes:
            if node.selection_set is None:
                raise _NotPlain
            self._collect(runtime, node.selection_set, grouped, visited)
        plan = _ObjectPlan(runtime.name)
        fields: list[_Field] = []
        for key, same in grouped.items():
            name = same[0].name.value
            if any(n.arguments for n in same):
                raise _NotPlain
            if name == TYPENAME:
                fields.append(_Field(key, None, _leaf_typename))
                continue
            field = runtime.fields.get(name)
            strawberry_field = None if field is None else (field.extensions or {}).get(_DEFINITION)
            read = None if strawberry_field is None else _reader(strawberry_field)
            if field is None or read is None:
                raise _NotPlain  # not from the object alone
            fields.append(_Field(key, read, self.completion(field.type, same)))
        plan.fields = tuple(fields)
        return plan

    def completion(self, kind: GraphQLOutputType, nodes: list[FieldNode]) -> Complete:
        non_null = isinstance(kind, GraphQLNonNull)
        if isinstance(kind, GraphQLNonNull):
            kind = kind.of_type
        if isinstance(kind, GraphQLList):
            return _list(self.completion(kind.of_type, nodes), non_null)
        if isinstance(kind, GraphQLScalarType | GraphQLEnumType):
            if any(n.selection_set is not None for n in nodes):
                raise _NotPlain
            return _leaf(kind, non_null)
        if isinstance(kind, GraphQLObjectType):
            return _object({kind.name: self.object_plan(kind, nodes)}, non_null)
        if isinstance(kind, GraphQLInterfaceType | GraphQLUnionType):
            possible = self.schema.get_possible_types(kind)
            return _object({t.name: self.object_plan(t, nodes) for t in possible}, non_null)
        raise _NotPlain


def _leaf_typename(value: Any) -> Any:  # never called: __typename is the plan's name
    raise AssertionError("__typename is written from the plan")


def plain_selection(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode] | None = None,
) -> PlainSelection | None:
    """The operation's :class:`PlainSelection`, or None if it is not plain
    (``fragments``: the document's fragment definitions, by name)."""
    subscription = schema.subscription_type
    if operation.operation is not OperationType.SUBSCRIPTION or subscription is None:
        return None
    roots = operation.selection_set.selections
    if len(roots) != 1 or not isinstance(root := roots[0], FieldNode) or root.directives:
        return None
    root_field = subscription.fields.get(root.name.value)
    if root_field is None or root.selection_set is None:
        return None
    try:
        complete = _Compiler(schema, fragments or {}).completion(root_field.type, [root])
    except _NotPlain:
        return None
    root_key = root.alias.value if root.alias else root.name.value
    return PlainSelection(root_key, complete)


def root_completion(
    schema: GraphQLSchema,
    parent: GraphQLObjectType,
    nodes: list[FieldNode],
    fragments: Mapping[str, FragmentDefinitionNode],
) -> Complete | None:
    """How to complete a query's or a mutation's root field from the value its
    resolver returned, when everything below it is plain (as for frames);
    None: the executor completes it. The completion raises where the
    executor would report an error: the caller then lets the executor do it
    (the subfields read the resolved value only, so nothing runs twice that
    changes anything)."""
    field = parent.fields.get(nodes[0].name.value)
    if field is None or any(n.directives or n.selection_set is None for n in nodes):
        return None
    try:
        return _Compiler(schema, fragments).completion(field.type, nodes)
    except _NotPlain:
        return None
