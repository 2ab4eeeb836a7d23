"""What an operation would cost to complete, estimated from the document and
the schema before it runs (issue #14, docs/operations.md "Limits").

One unit is one value the executor completes: every field costs 1, times
the size of every list it sits in. A list's size is its ``first`` (or
``last``) argument when it has one, the variables' or the schema default
included; a paginated field's lists take its page size; every other list
counts as its most items under the rules (:data:`LIST_SIZES`, issue #22).
Fragments on one object type are alternatives, not additions: an event is
one type, so a selection on an interface or union costs its common fields
plus its dearest type's own.
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

from domain.game.abilities import CURIOUS_LOOK
from domain.game.boosters import COMMONS_PER_PACK, RARES_PER_PACK
from domain.game.cards import PRIZE_CARDS, catalogue
from domain.game.messaging import MAX_PENDING, MAX_SENT
from domain.game.options import HAND_SIZE, MAX_SEATS, MIN_SEATS, Format
from domain.game.setup import MAX_DECK
from domain.invitations import MAX_INVITED, MAX_INVITEES
from domain.rating_pools import RatingPool
from domain.services.sessions import MAX_SESSIONS
from domain.webhooks import KINDS, MAX_ENDPOINTS

INTROSPECTION = 5_000
"""An introspection root field: a deep ``__schema`` completes ~10,000 values,
served from a cache after its first execution (docs/decisions/0054)."""
MAX_LIST = 1_000
"""A list missing from :data:`LIST_SIZES` (a test keeps there none)."""
CAP = 10**12
PAGE_ARGUMENTS = ("first", "last")

SEATS = MAX_SEATS  # R2.1
DECK = MAX_DECK  # the most cards a game deals from: its piles can hold them all
MESSAGES = MAX_SEATS * MAX_SENT  # a game's messages, every seat's cap reached
PENDING = MAX_SEATS * MAX_PENDING  # messages pending at once (R5.5)
HAND = 16  # R4.2's 10 and gifts (R7.2, R7.5); at most 13 in 600 random games
CHOICES = 6  # at once: a trick's 3 kinds (R6, R7.7) or a decision, and 3 messengers' (R5)
LEGAL = 200  # the most legal actions a turn lists (a Hungry take: the Rat Deck), measured
EVENTS_OF_A_CHANGE = 20  # one command: at most 13 in 600 random games, and the clocks

LIST_SIZES: dict[str, int] = {
    "Query.cardCatalog": len(catalogue()),
    "Me.sessions": MAX_SESSIONS,  # a player's live tokens (#24)
    "MyGame.seats": SEATS,
    "PlayerStats.lines": len(Format) * (SEATS - MIN_SEATS + 1),  # by format and seat count
    "ActionChoice.cards": HAND,  # a Hungry take lists the Rat Deck: LEGAL
    "ActionChoice.discards": HAND,
    "ActionChoice.seats": SEATS,
    "ActionChoice.gifts": 2,  # one per neighbour (R7.2)
    "ActionChoice.messageIds": PENDING,
    "ActionRequired.hand": HAND,
    "ActionRequired.choices": CHOICES,
    "BoosterPack.commons": COMMONS_PER_PACK,
    "BoosterPack.rares": RARES_PER_PACK,
    "CardsDrawn.cards": HAND_SIZE,  # a refill (R8.3)
    "DealtPack.commons": COMMONS_PER_PACK,
    "DealtPack.rares": RARES_PER_PACK,
    "DecisionRequired.cards": HAND,  # Curious 3 (R7.6); the Hungry deck list: LEGAL
    "Game.seats": SEATS,
    "Game.invitations": MAX_INVITED,  # a game's pending invitations (0062)
    "PlayersInvited.playerIds": MAX_INVITEES,
    "GameChange.events": EVENTS_OF_A_CHANGE,
    "GameEnded.winners": SEATS,
    "GameEnded.disqualified": SEATS,
    "GameEnded.scores": SEATS,
    "GameEnded.ratings": SEATS,
    "ReplayStep.seats": SEATS,  # one projection a seat (0067)
    "Player.ratings": len(RatingPool),
    "GameStarted.seats": SEATS,
    "GameStarted.handSizes": SEATS,
    "GameStarted.hand": HAND_SIZE,
    "GiftOption.cards": 2,
    "LegalAction.cards": 2,
    "LegalAction.gifts": 2,
    "Outcome.winners": SEATS,
    "Outcome.disqualified": SEATS,
    "Outcome.scores": SEATS,
    "Table.seats": SEATS,
    "Table.discard": DECK,
    "Table.messages": MESSAGES,
    "TableSeat.won": DECK,
    "TableSeat.prizes": len(PRIZE_CARDS),
    "TopReordered.cards": CURIOUS_LOOK,
    "Trick.plays": SEATS,
    "Trick.passes": SEATS,
    "Trick.skipped": SEATS,
    "TrickWon.plays": SEATS,
    "TrickWon.passes": SEATS,
    "TrickWon.scores": SEATS,
    "Viewer.hand": HAND,
    "Viewer.faceDownPlays": 1,  # a seat plays once a trick (R6.3)
    "Viewer.decisionCards": LEGAL,
    "Viewer.messages": MESSAGES,
    "Viewer.messageTargets": SEATS,
    "Viewer.legalActions": LEGAL,
    "Viewer.choices": CHOICES,
    "Query.webhookEndpoints": MAX_ENDPOINTS,  # (0064)
    "WebhookEndpoint.kinds": len(KINDS),
    "NotificationSettings.push": len(KINDS),
}
"""Every list's most items, by ``Type.field``, from the rules' bounds (issue
#22: the estimate uses the real maximum); a list that grows with use is
paged instead (its ``first``). tests/api/test_query_limits.py checks that
every list of the schema is one or the other."""

ROWS: dict[str, int] = {
    "GameEventPage.events": 60,
    # One row for every audience, the public projection decoded once and a
    # seat's own where it has one: 1.3x a log page's read (0067, measured).
    "ReplayPage.steps": 80,
    "BoosterPackConnection.edges": 300,
    "GameConnection.edges": 40,
    "MyGameConnection.edges": 40,  # the lobby's columns, one join on a primary key (#24)
    "InvitationConnection.edges": 40,  # the same, from an invitation's row (0062)
    "NotificationPage.notifications": 30,  # one row by its key, its JSON decoded (#25)
    "WebhookMessagePage.messages": 40,  # a row and its attempts' rows (0064)
    "Leaderboard.standings": 20,  # a row of the board's index and a player's name (#26)
}
"""What each item of a page read from the database costs besides its values
(reading and decoding its row), by ``Type.field``, in values: measured
(docs/benchmarks.md, issue #22) so that fifteen aliased pages of 100 events
(60 ms on this machine) are refused, not priced 6,000."""

CALLS: dict[str, int] = {
    "Query.gameEvents": 1_500,
    "Query.gameReplay": 1_500,  # the game's row and one read of the log (0067)
    "Query.featuredGames": 1_500,  # the newest 200 running games' listing rows (0067)
    "Query.game": 800,
    "Query.games": 1_000,
    "Query.me": 200,
    "Me.collection": 1_500,
    # issue #26: a short transaction each (a primary key's rows, the board's index)
    "Query.player": 200,
    "Query.leaderboard": 1_000,
    "Player.rating": 200,
    "Player.ratings": 200,
    "Me.rank": 400,
}
"""What a call of a field that reads the database costs besides its values
(its transaction and reads), by ``Type.field``, in values: measured
(issue #22), so that aliases of small pages are priced what they cost."""

TWO_LISTS_FILLED = frozenset({"ActionChoice"})
"""Types of which at most two lists hold anything at once: a choice lists one
kind's options (DISCARD_AND_PLAY: the cards to play and to discard; every
other kind one list). Their lists cost the dearest two's sum."""


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
        exclusive = parent.name in TWO_LISTS_FILLED
        lists: list[int] = []
        for s in selection_set.selections:
            if isinstance(s, FieldNode):
                cost = self.field(s, parent, page)
                if exclusive and self.lists(s, parent):
                    lists.append(cost)
                else:
                    common += cost
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
        common += sum(sorted(lists)[-2:])  # TWO_LISTS_FILLED: the dearest two
        return min(CAP, common + max(alternatives.values(), default=0))

    def lists(self, node: FieldNode, parent: GraphQLNamedType) -> bool:
        """Whether the field is a list of ``parent``'s."""
        definition = None
        if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            definition = parent.fields.get(node.name.value)
        kind: GraphQLType | None = definition.type if definition else None
        while isinstance(kind, GraphQLNonNull):
            kind = kind.of_type
        return isinstance(kind, GraphQLList)

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
        below = ROWS.get(typed, 0)
        if node.selection_set is not None and isinstance(
            kind, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType
        ):
            below += self.selection(node.selection_set, kind, None if listed else own)
        return min(CAP, size * (1 + below) + CALLS.get(typed, 0))

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
        return LIST_SIZES.get(typed, MAX_LIST)


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
