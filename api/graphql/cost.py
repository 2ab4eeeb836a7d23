"""What an operation would cost to complete, estimated from the document and
the schema before it runs (issue #14, API.md "Limits").

One unit is one value the executor completes: every field costs 1, times
the size of every list it sits in. A list's size is its ``first`` (or
``last``) argument when it has one, the variables' or the schema default
included; a paginated field's lists take its page size; a few lists have a
known size (:data:`LIST_SIZES`); any other counts as :data:`DEFAULT_LIST`.
Fragments on one object type are
alternatives, not additions: an event is one type, so a selection on an
interface or union costs its common fields plus its dearest type's own.
``__typename`` costs 1; an introspection root field (``__schema``,
``__type``) costs :data:`INTROSPECTION`.

The estimate runs before validation, over a document whose shape is already
bounded (api/graphql/shape.py): unknown fields cost 1 (validation refuses
them), and each fragment is priced once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLType,
    GraphQLUnionType,
    InlineFragmentNode,
    IntValueNode,
    SelectionSetNode,
    VariableNode,
)
from graphql.utilities import get_operation_ast, value_from_ast_untyped

from domain.game.cards import catalogue

DEFAULT_LIST = 4
"""A list the rules keep small (seats, a hand, choices): a cost, not a cap."""
INTROSPECTION = 1_000
CAP = 10**12
PAGE_ARGUMENTS = ("first", "last")

LIST_SIZES: dict[str, int] = {
    "Query.cardCatalog": len(catalogue()),
    "Viewer.legalActions": 200,  # the most a turn lists (a Hungry take: ~190)
    # A choice lists one kind's options: one of its lists is long, the
    # others empty; a gift is one or two cards.
    "ActionChoice.cards": 2,
    "ActionChoice.discards": 2,
    "ActionChoice.seats": 2,
    "ActionChoice.gifts": 2,
    "ActionChoice.messageIds": 2,
    "GiftOption.cards": 2,
}
"""Lists whose size is known, by ``Type.field``."""


class _Pricing:
    def __init__(
        self, schema: GraphQLSchema, document: DocumentNode, variables: Mapping[str, Any]
    ) -> None:
        self.schema = schema
        self.variables = variables
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.priced: dict[tuple[str, int | None], int] = {}
        self.defaults: dict[str, Any] = {}
        self.read_variables = False  # whether a list's size came from a variable
        self.visiting: set[str] = set()

    def selection(
        self, selection_set: SelectionSetNode, parent: GraphQLNamedType, page: int | None = None
    ) -> int:
        """``page``: the page size a paginated field (``gameEvents(first:)``)
        hands the lists of the page object it returns."""
        common = 0
        alternatives: dict[str, int] = {}
        for s in selection_set.selections:
            if isinstance(s, FieldNode):
                common += self.field(s, parent, page)
                continue
            if isinstance(s, InlineFragmentNode):
                condition = s.type_condition.name.value if s.type_condition else None
                inner = self.schema.get_type(condition) if condition else parent
                cost = self.selection(s.selection_set, inner or parent, page)
            else:
                assert isinstance(s, FragmentSpreadNode)
                fragment = self.fragments.get(s.name.value)
                if fragment is None:
                    continue
                condition = fragment.type_condition.name.value
                cost = self.fragment(fragment, parent, page)
            target = self.schema.get_type(condition) if condition else None
            if condition is None or target is parent or not isinstance(target, GraphQLObjectType):
                common += cost  # applies to every object here
            else:
                alternatives[condition] = alternatives.get(condition, 0) + cost
        return min(CAP, common + max(alternatives.values(), default=0))

    def fragment(
        self, fragment: FragmentDefinitionNode, parent: GraphQLNamedType, page: int | None
    ) -> int:
        name = fragment.name.value
        known = self.priced.get((name, page))
        if known is not None:
            return known
        if name in self.visiting:  # a cycle: validation refuses it
            return 0
        self.visiting.add(name)
        try:
            target = self.schema.get_type(fragment.type_condition.name.value)
            cost = self.selection(fragment.selection_set, target or parent, page)
        finally:
            self.visiting.discard(name)
        self.priced[(name, page)] = cost
        return cost

    def field(self, node: FieldNode, parent: GraphQLNamedType, page: int | None = None) -> int:
        name = node.name.value
        if name.startswith("__"):
            return 1 if name == "__typename" else INTROSPECTION
        definition = None
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            definition = parent.fields.get(name)
        if definition is None:
            return 1
        size = 1
        own = self.page_size(node, definition)
        typed = f"{parent.name}.{name}"
        listed = False
        kind: GraphQLType = definition.type
        while isinstance(kind, GraphQLNonNull | GraphQLList):
            if isinstance(kind, GraphQLList):
                listed = True
                known = own if own is not None else page
                size = min(CAP, size * (known if known is not None else self.known(typed)))
            kind = kind.of_type
        below = 0
        if node.selection_set is not None and isinstance(
            kind, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType
        ):
            below = self.selection(node.selection_set, kind, None if listed else own)
        return min(CAP, size * (1 + below))

    def page_size(self, node: FieldNode, definition: GraphQLField) -> int | None:
        """The field's ``first``/``last``: given, a variable, or its default."""
        for argument in node.arguments or ():
            if argument.name.value in PAGE_ARGUMENTS:
                value = argument.value
                if isinstance(value, IntValueNode):
                    return max(0, int(value.value))
                if isinstance(value, VariableNode):
                    self.read_variables = True
                    name = value.name.value
                    given = self.variables.get(name, self.defaults.get(name))
                    if isinstance(given, float) and given.is_integer():
                        given = int(given)  # an Int variable may be sent as 100.0
                    if isinstance(given, int) and not isinstance(given, bool):
                        return max(0, given)
        for name in PAGE_ARGUMENTS:
            arg = definition.args.get(name)
            if arg is not None and isinstance(arg.default_value, int):
                return arg.default_value
        return None

    @staticmethod
    def known(typed: str) -> int:
        return LIST_SIZES.get(typed, DEFAULT_LIST)


def cost_of(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
) -> int:
    """The operation's estimated cost in completed values (0 when the
    document names no such operation: the execution reports why)."""
    return priced(schema, document, operation_name, variables)[0]


def priced(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
) -> tuple[int, bool]:
    """:func:`cost_of`, and whether a variable's value changed it (if not,
    it holds for any variables)."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return 0, False
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0, False
    pricing = _Pricing(schema, document, variables if isinstance(variables, Mapping) else {})
    for definition in operation.variable_definitions or ():
        if definition.default_value is not None:  # the operation's own defaults
            pricing.defaults[definition.variable.name.value] = value_from_ast_untyped(
                definition.default_value
            )
    cost = pricing.selection(operation.selection_set, root)
    return cost, pricing.read_variables
