"""The values a viewer sees (R11); :mod:`domain.game.views` builds them.

:class:`PublicView` and :class:`PlayerView` may be built lazily
(docs/decisions/0037): ``spectator_view`` and ``player_view`` copy what the
viewer may see of the state as immutable values (a snapshot), and a field
whose value takes work (the seats and their scores, the trick, messages) is
built from that copy on its first read, then kept. So a view never changes
with its state, reads and compares as if it had been built whole, and a
reader pays only for the fields it reads (a RANDOM bot reads none). Built
directly, with every field, they are plain frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from domain.game.cards import Card, House
from domain.game.fastinit import fast_init
from domain.game.options import GameOptions
from domain.game.state import DecisionKind, MessageStatus, Outcome, Phase


@fast_init
@dataclass(frozen=True, slots=True)
class PlayView:
    """A play; ``card`` / ``second`` are None while face down to this viewer."""

    seat: int
    card: Card | None
    face_down: bool
    second: Card | None
    has_second: bool


@fast_init
@dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    prize: Card
    trump: House
    leader: int
    lead_suit: House | None
    plays: tuple[PlayView, ...]
    passes: tuple[int, ...]
    skipped: tuple[int, ...]
    sleepy: bool
    sassy: bool


@fast_init
@dataclass(frozen=True, slots=True)
class SeatView:
    """Public facts of a seat (R11): hand size only."""

    seat: int
    house: House | None
    is_rat: bool
    hand_size: int
    won: tuple[Card, ...]
    prizes: tuple[Card, ...]
    score: int


@fast_init
@dataclass(frozen=True, slots=True)
class MessageRoute:
    """R5.4: that a message went A to B, and its status, is public."""

    id: str
    trick: int
    sender: int
    recipient: int
    status: MessageStatus


@fast_init
@dataclass(frozen=True, slots=True)
class MessageView:
    """A message this seat may read (R5.4)."""

    route: MessageRoute
    text: str


@fast_init
@dataclass(frozen=True, slots=True)
class PendingView:
    """Who must decide what (public)."""

    kind: DecisionKind
    seat: int
    source: int


class Snapshot(Protocol):
    """What a lazily built view keeps to build its other fields."""

    def build(self, name: str) -> Any:
        """The value of the view's field ``name``."""


class _Lazy:
    """Builds a missing field from the view's snapshot on its first read.
    (Hidden from mypy, so that a misspelt attribute is still a type error.)"""

    __slots__ = ()

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            snapshot = self.__dict__.get("_snapshot")
            if snapshot is None or name not in self.__dataclass_fields__:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            value = snapshot.build(name)
            self.__dict__[name] = value  # kept: the view is immutable
            return value


@dataclass(frozen=True)
class PublicView(_Lazy):
    """Everything every viewer may see (R11)."""

    version: int
    phase: Phase
    options: GameOptions
    seats: tuple[SeatView, ...]
    rat: int
    to_act: int | None
    trick: TrickView | None
    pending: PendingView | None
    rat_deck_size: int
    prize_pool_size: int
    discard: tuple[Card, ...]
    messages: tuple[MessageRoute, ...]
    outcome: Outcome | None


@dataclass(frozen=True)
class PlayerView(_Lazy):
    """One seat's view: public facts plus its own hidden information."""

    seat: int
    public: PublicView
    hand: tuple[Card, ...]
    messages: tuple[MessageView, ...]
    decision_cards: tuple[Card, ...]  # Curious top cards / Hungry deck list (R11)
    message_targets: tuple[int, ...]


V = TypeVar("V", PublicView, PlayerView)


def lazy(kind: type[V], snapshot: Snapshot, **fields: Any) -> V:
    """A ``kind`` with the given ``fields``; the others built from
    ``snapshot`` when first read."""
    view = object.__new__(kind)
    view.__dict__.update(fields, _snapshot=snapshot)
    return view
