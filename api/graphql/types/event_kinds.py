"""One GraphQL object type per kind of event, implementing ``GameEvent``,
made at start-up from the event's dataclass (issue #23): the type's name is
the class's, its description the docstring's first paragraph, and its fields
are the dataclass's (every one a projection may hold: not the ``WHOLE``
ones), named as in Python (camelCase in the schema), typed from their
annotations and described by them (``Annotated[int, "..."]``). A string
field named ``id`` or ``..._id`` is an ``ID``; a card is a ``Card``; a value
class is the type :data:`VALUE_TYPES` names, or one made the same way
(``DealtSeat``, ``WonPlay``).

A field that only some audiences see (a hand, a face-down card, a message's
text) is null for the others: it comes from the domain event's projection
for the audience (``Event.seen_by``, R11), never decided here.
:func:`typed` builds the object for a logged event; its fields are read
from the event when first asked for.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Iterable
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import strawberry

from api.graphql.types.actions import ActionChoice, GiftOption
from api.graphql.types.cards import Card
from api.graphql.types.game import GameOptions
from api.graphql.types.game_event import GameEvent, event_type
from domain.event_kinds import EVENT_KINDS
from domain.game import cards
from domain.game.boosters import BoosterPack
from domain.game.choice import Choice
from domain.game.choice import GiftOption as DomainGift
from domain.game.events import Event
from domain.game.options import GameOptions as DomainOptions
from domain.log import LoggedEvent

VALUE_NOTE = "No cache key: a value inside its parent."


@strawberry.type(
    description=f"R3.2: a sealed seat's booster pack, as opened for the game. {VALUE_NOTE}"
)
class DealtPack:
    commons: list[Card] = strawberry.field(description="Its 15 commons")
    rares: list[Card] = strawberry.field(description="Its 2 rares")
    house: cards.House = strawberry.field(description="Its house card")


VALUE_TYPES: dict[type, type] = {
    DomainOptions: GameOptions,
    BoosterPack: DealtPack,
    Choice: ActionChoice,
    DomainGift: GiftOption,
}
"""The GraphQL type of each value class events hold that has a type of its
own elsewhere in the schema; any other value class gets one made here."""

_MADE: dict[type, type] = {}
"""Domain class -> the GraphQL type made for it."""


def description_of(cls: type) -> str:
    """A class's docstring's first paragraph, as one line, Sphinx roles and
    double backticks made plain Markdown."""
    doc = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]
    text = " ".join(doc.split())
    for role in (":data:", ":func:", ":class:", ":meth:"):
        text = text.replace(role, "")
    return text.replace("``", "`")


def _graphql(hint: Any, name: str) -> Any:
    """The GraphQL annotation of a domain annotation (``Annotated`` gone)."""
    if get_origin(hint) is Annotated:
        return _graphql(get_args(hint)[0], name)
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in get_args(hint) if a is not type(None)]
        return _graphql(inner, name) | None
    if origin is tuple:
        return list[_graphql(get_args(hint)[0], name)]  # type: ignore[misc]
    if hint is str and (name == "id" or name.endswith("_id")):
        return strawberry.ID
    if hint is cards.Card:
        return Card
    if hint in (int, bool, str, datetime) or (isinstance(hint, type) and issubclass(hint, Enum)):
        return hint
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return VALUE_TYPES.get(hint) or made(hint)
    raise TypeError(f"{name}: no GraphQL type for {hint!r}")


def _described(hint: Any) -> str | None:
    if get_origin(hint) is Annotated:
        return next((a for a in get_args(hint)[1:] if isinstance(a, str)), None)
    return None


def _optional(hint: Any) -> bool:
    if get_origin(hint) is Annotated:
        return _optional(get_args(hint)[0])
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def _nullable_names(events: Iterable[type[Event]]) -> frozenset[str]:
    """The names of the fields that are nullable in some event kind: such a
    field is nullable in every kind, so that one document may select it in
    fragments on several types (graphql's OverlappingFieldsCanBeMerged: a
    ``card`` that is ``Card`` in one and ``Card!`` in another is refused)."""
    return frozenset(
        name
        for kind in events
        for name, hint in get_type_hints(kind, include_extras=True).items()
        if _optional(hint)
    )


NULLABLE_NAMES = _nullable_names(EVENT_KINDS.values())


def made(cls: type) -> type:
    """The GraphQL type of domain class ``cls`` (an event kind implements
    ``GameEvent``; a value class is a plain object type), made once."""
    found = _MADE.get(cls)
    if found is not None:
        return found
    hints = get_type_hints(cls, include_extras=True)
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__module__": __name__, "__annotations__": annotations}
    for f in dataclasses.fields(cls):
        if f.metadata.get("whole"):
            continue
        annotation = _graphql(hints[f.name], f.name)
        if issubclass(cls, Event) and f.name in NULLABLE_NAMES and not _optional(annotation):
            annotation = annotation | None
        annotations[f.name] = annotation
        namespace[f.name] = strawberry.field(description=_described(hints[f.name]))
    event = issubclass(cls, Event)
    kind = type(cls.__name__, (GameEvent,) if event else (), namespace)
    description = description_of(cls)
    built: type
    if event:
        built = event_type(description)(kind)
        built.__getattr__ = _read_field  # type: ignore[attr-defined]
    else:
        built = strawberry.type(description=f"{description} {VALUE_NOTE}")(kind)
    _MADE[cls] = built
    return built


def kinds_of(events: Iterable[type[Event]]) -> dict[type[Event], type[GameEvent]]:
    """The GraphQL type of each of ``events``, made if need be."""
    return {kind: made(kind) for kind in events}


_FIELDS: dict[type, frozenset[str]] = {}
_INTERFACE = frozenset({"game_id", "seq", "at", "event", "frame_key"})


def _fields(kind: type) -> frozenset[str]:
    """The data fields of a GraphQL type (not resolvers, not the interface's)."""
    found = _FIELDS.get(kind)
    if found is None:
        definition = kind.__strawberry_definition__  # type: ignore[attr-defined]
        interface = _INTERFACE if issubclass(kind, GameEvent) else frozenset()
        found = _FIELDS[kind] = frozenset(
            f.python_name
            for f in definition.fields
            if f.base_resolver is None and f.python_name not in interface
        )
    return found


def as_graphql(value: Any) -> Any:
    """A domain value as its GraphQL object (a card, a list, a value class)."""
    if isinstance(value, cards.Card):
        return Card.of(value)
    if isinstance(value, tuple | list):
        return [as_graphql(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = VALUE_TYPES.get(type(value)) or made(type(value))
        return kind(**{name: as_graphql(getattr(value, name)) for name in _fields(kind)})
    return value


def typed(e: LoggedEvent, frame_key: tuple[str, int] | None = None) -> GameEvent:
    """The GraphQL object of one logged event, as one audience sees it;
    ``frame_key`` (its audience's channel and seq) when it is a stream's.
    Its own fields are read from the domain event when first asked for
    (:func:`_read_field`): a selection of ``seq`` converts no card."""
    kind = KINDS.get(type(e.event)) or made(type(e.event))
    event: GameEvent = object.__new__(kind)
    event.__dict__.update(
        game_id=strawberry.ID(e.game_id), seq=e.seq, at=e.at, event=e.event, frame_key=frame_key
    )
    return event


def _read_field(self: GameEvent, name: str) -> Any:
    """``__getattr__`` of the event types: a field :func:`typed` left unread,
    converted from the domain event, then kept."""
    event = self.__dict__.get("event")
    kind = type(self)
    if event is None or name not in _fields(kind):
        raise AttributeError(f"{kind.__name__!r} object has no attribute {name!r}")
    value = self.__dict__[name] = as_graphql(getattr(event, name))
    return value


KINDS: dict[type[Event], type[GameEvent]] = kinds_of(EVENT_KINDS.values())
"""The GraphQL type of each domain event kind (every kind has one)."""

ALL_TYPES: tuple[type, ...] = tuple(dict.fromkeys((*KINDS.values(), DealtPack, *_MADE.values())))
"""Every type of this module, for the schema (an interface's types are not
reachable from its fields)."""
