"""Subscription frames of plain selections built without the executor.

Most clients select a few scalar fields of each event (``gameEvents { seq
type data }``). For such a selection (one root field, then only scalar
fields of its object type, with no arguments, directives or fragments, each
read from the payload as it is or computed from the payload alone by a
plain resolver: no argument, no ``info``, not async) the frame is the
payload's values put through their scalars' ``serialize``, as graphql-core's
executor would do it, at a tenth of the cost. Anything else goes to the
executor; tests/api/test_plain_selection.py checks both agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from graphql import (
    ExecutionResult,
    FieldNode,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    Undefined,
)

TYPENAME = "__typename"
_DEFINITION = "strawberry-definition"  # Strawberry's back reference on its GraphQL types


@dataclass(frozen=True, slots=True)
class _Leaf:
    key: str  # the response key (the alias, else the name)
    read: Callable[[Any], Any] | None  # the value from the payload; None: __typename
    scalar: GraphQLScalarType | None
    non_null: bool


@dataclass(frozen=True, slots=True)
class PlainSelection:
    """How to build the frame of one plain subscription selection."""

    root_key: str
    type_name: str
    leaves: tuple[_Leaf, ...]

    def frame(self, payload: Any) -> ExecutionResult | None:
        """The frame, or None when a value needs the executor (a null or a
        value its scalar refuses, which the executor reports as an error)."""
        out: dict[str, Any] = {}
        for leaf in self.leaves:
            if leaf.scalar is None:
                out[leaf.key] = self.type_name
                continue
            assert leaf.read is not None
            value = leaf.read(payload)
            if value is None:
                if leaf.non_null:
                    return None
                out[leaf.key] = None
                continue
            try:
                serialized = leaf.scalar.serialize(value)
            except Exception:
                return None
            if serialized is None or serialized is Undefined:
                return None
            out[leaf.key] = serialized
        return ExecutionResult({self.root_key: out}, None)


def _reader(strawberry_field: Any) -> Callable[[Any], Any] | None:
    """How a plain frame gets a field's value from the payload: its attribute,
    or its resolver when that takes nothing but the payload (``self``)."""
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


def plain_selection(
    schema: GraphQLSchema, operation: OperationDefinitionNode
) -> PlainSelection | None:
    """The operation's :class:`PlainSelection`, or None if it is not plain."""
    subscription = schema.subscription_type
    if operation.operation is not OperationType.SUBSCRIPTION or subscription is None:
        return None
    roots = operation.selection_set.selections
    if len(roots) != 1 or not isinstance(root := roots[0], FieldNode) or root.directives:
        return None
    root_field = subscription.fields.get(root.name.value)
    if root_field is None or root.selection_set is None:
        return None
    object_type = root_field.type
    if isinstance(object_type, GraphQLNonNull):
        object_type = object_type.of_type
    if not isinstance(object_type, GraphQLObjectType):
        return None
    leaves: list[_Leaf] = []
    for node in root.selection_set.selections:
        if not isinstance(node, FieldNode) or node.directives or node.arguments:
            return None
        if node.selection_set is not None:
            return None
        name = node.name.value
        key = node.alias.value if node.alias else name
        if name == TYPENAME:
            leaves.append(_Leaf(key, None, None, True))
            continue
        field = object_type.fields.get(name)
        strawberry_field = None if field is None else (field.extensions or {}).get(_DEFINITION)
        read = None if strawberry_field is None else _reader(strawberry_field)
        if field is None or read is None:
            return None  # not from the payload alone
        field_type, non_null = field.type, False
        if isinstance(field_type, GraphQLNonNull):
            field_type, non_null = field_type.of_type, True
        if not isinstance(field_type, GraphQLScalarType):
            return None
        leaves.append(_Leaf(key, read, field_type, non_null))
    root_key = root.alias.value if root.alias else root.name.value
    return PlainSelection(root_key, object_type.name, tuple(leaves))
