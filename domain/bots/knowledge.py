"""What one seat knows of the hidden cards from its own past (R11).

Read only from the seat's projection of the game's events (``seen``, each
``e.seen_by(seat)``) and its :class:`PlayerView`; EXPERT's determinizations
(:mod:`domain.bots.determinize`) must agree with it:

- ``held``: cards known to be in another seat's hand: the seat gave them
  (Stinky R7.2, Needy R7.5), or they were on top of the Rat Deck when that
  seat drew them (R8.3) after this seat's Curious reorder (R7.6).
- ``voids``: houses a seat holds none of among its cards unknown to us: it
  did not follow the lead suit (R6.3), or passed / discarded under Sassy
  (R7.7). Forgotten when it receives a card we cannot see.
- ``top``: the Rat Deck's known top cards, in order (our own Curious
  reorder, R7.6), less the cards drawn since.
- ``deck``: the Rat Deck's whole contents, known from our own Hungry take
  (R7.4) until someone draws or takes an unseen card.

[decision] Knowledge is conservative: whenever an event makes a fact
uncertain (an unseen gift from a seat whose cards we knew, another seat's
Curious reorder or Hungry take), the fact is dropped, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from domain.game.cards import Card, House
from domain.game.events import (
    AbilityTriggered,
    CardDiscarded,
    CardGiven,
    CardPlayed,
    CardsDrawn,
    CardTaken,
    DecisionRequired,
    Event,
    GameStarted,
    Passed,
    SecondCardPlayed,
    TopReordered,
    TrickStarted,
    TrickWon,
)
from domain.game.options import AbilityTrigger
from domain.game.state import DecisionKind
from domain.game.views import PlayerView

_SASSY = House.SASSY
_EVERY = AbilityTrigger.EVERY_CARD
_LEAD_AND_RARE = AbilityTrigger.LEAD_AND_RARE


@dataclass(slots=True)
class Knowledge:
    """One seat's facts about hidden cards (see the module docstring)."""

    held: dict[int, set[Card]] = field(default_factory=dict)
    voids: dict[int, set[House]] = field(default_factory=dict)
    top: list[Card] = field(default_factory=list)
    deck: set[Card] | None = None


@dataclass(slots=True)
class _Trick:
    """The trick under way, as the seat follows it: lead suit, Sassy (R7.7),
    and face-down plays to check at resolution (R7.3)."""

    lead: House | None = None
    sassy: bool = False
    hidden: list[tuple[int, House | None, bool]] = field(default_factory=list)


class _Reader:
    """Folds the seat's events into a :class:`Knowledge`."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.k = Knowledge()
        self.trick = _Trick()

    def held(self, seat: int) -> set[Card]:
        return self.k.held.setdefault(seat, set())

    def void(self, seat: int, house: House | None) -> None:
        if seat != self.seat and house is not None:
            self.k.voids.setdefault(seat, set()).add(house)

    def unseen_gain(self, seat: int) -> None:
        """``seat`` got a card we cannot see: its voids no longer hold."""
        self.k.voids.pop(seat, None)

    def public(self, card: Card | None) -> None:
        """``card`` is now face up: no hand holds it any more."""
        if card is None:
            return
        for cards in self.k.held.values():
            cards.discard(card)

    def followed(self, seat: int, card: Card, lead: House | None, sassy: bool) -> None:
        """R6.3 / R7.7: a follow that breaks the suit shows a void."""
        if sassy:
            if card.house is not _SASSY:
                self.void(seat, _SASSY)
        elif lead is not None and card.house is not lead:
            self.void(seat, lead)

    def read(self, e: Event) -> None:
        k, t = self.k, self.trick
        if isinstance(e, GameStarted):
            self.k, self.trick = Knowledge(), _Trick()
        elif isinstance(e, TrickStarted):
            self.trick = _Trick()
        elif isinstance(e, CardPlayed):
            if e.lead:
                t.lead = e.card.house if e.card is not None else None
            elif e.card is None:
                t.hidden.append((e.seat, t.lead, t.sassy))
            else:
                self.followed(e.seat, e.card, t.lead, t.sassy)
            self.public(e.card)
        elif isinstance(e, SecondCardPlayed):
            self.public(e.card)
        elif isinstance(e, AbilityTriggered):
            t.sassy = t.sassy or e.house is _SASSY
        elif isinstance(e, Passed):
            self.void(e.seat, _SASSY)
        elif isinstance(e, CardDiscarded):
            self.public(e.card)
            if e.reason is _SASSY:
                self.void(e.seat, _SASSY)
        elif isinstance(e, CardGiven):
            self._given(e)
        elif isinstance(e, CardTaken):
            self._taken(e)
        elif isinstance(e, DecisionRequired):
            if e.seat == self.seat and e.kind is DecisionKind.HUNGRY_TAKE and e.cards is not None:
                k.deck = set(e.cards)
        elif isinstance(e, TopReordered):
            if e.seat == self.seat and e.cards is not None:
                k.top = list(e.cards) + k.top[e.count :]
            else:
                k.top = []
        elif isinstance(e, TrickWon):
            self._won(e)
        elif isinstance(e, CardsDrawn):
            self._drawn(e)

    def _given(self, e: CardGiven) -> None:
        if e.card is None:  # between two other seats: what moved is unknown
            if self.k.held.pop(e.from_seat, None):  # a known card may have left: the
                self.k.voids.pop(e.from_seat, None)  # voids no longer cover the rest
            self.unseen_gain(e.to_seat)
            return
        self.held(e.from_seat).discard(e.card)
        if e.to_seat != self.seat:
            self.held(e.to_seat).add(e.card)

    def _taken(self, e: CardTaken) -> None:
        k = self.k
        if e.seat == self.seat and e.card is not None:
            if k.deck is not None:
                k.deck.discard(e.card)
            if e.card in k.top:
                k.top.remove(e.card)
            return
        self.unseen_gain(e.seat)
        k.top, k.deck = [], None

    def _won(self, e: TrickWon) -> None:
        for seat, lead, sassy in self.trick.hidden:
            card = next((p.card for p in e.plays if p.seat == seat), None)
            if card is not None:
                self.followed(seat, card, lead, sassy)
        for p in e.plays:
            self.public(p.card)
            self.public(p.second_card)
            if p.second_card is not None and self.k.deck is not None:  # R7.1: to the bottom
                self.k.deck.add(p.second_card)

    def _drawn(self, e: CardsDrawn) -> None:
        k = self.k
        known, k.top = k.top[: e.count], k.top[e.count :]
        if e.seat == self.seat:
            if k.deck is not None and e.cards is not None:
                k.deck.difference_update(e.cards)
            return
        self.held(e.seat).update(known)
        if len(known) < e.count:
            self.unseen_gain(e.seat)
            k.deck = None
        elif k.deck is not None:
            k.deck.difference_update(known)


def knowledge(view: PlayerView, seen: Sequence[Event] = ()) -> Knowledge:
    """What ``view.seat`` knows from ``seen`` and ``view`` (module docstring).
    Without ``seen`` only the trick under way (from the view) is read."""
    reader = _Reader(view.seat)
    for e in seen:
        reader.read(e)
    k = reader.k
    if not seen:
        _trick_voids(view, reader)
    if view.decision_cards:
        _decision_facts(view, k)
    _drop_visible(view, k)
    return k


def _trick_voids(view: PlayerView, reader: _Reader) -> None:
    """Voids shown by the face-up follows of the trick under way (R6.3,
    R7.7). Sassy is replayed from the plays: the lead triggers, a face-up
    follow triggers if rare (or on every card, per ``abilityTrigger``, R7.0)."""
    trick = view.public.trick
    if trick is None or not trick.plays or trick.plays[0].card is None:
        return
    mode = view.public.options.ability_trigger
    sassy = trick.plays[0].card.house is _SASSY
    for p in trick.plays[1:]:
        if p.card is None:
            continue
        reader.followed(p.seat, p.card, trick.lead_suit, sassy)
        if p.card.house is _SASSY and not p.face_down:
            sassy = sassy or mode is _EVERY or (mode is _LEAD_AND_RARE and p.card.rare)


def _decision_facts(view: PlayerView, k: Knowledge) -> None:
    """The cards of our own pending decision (R7.4, R7.6)."""
    pending = view.public.pending
    if pending is None or pending.seat != view.seat:
        return
    if pending.kind is DecisionKind.HUNGRY_TAKE:
        k.deck, k.top = set(view.decision_cards), []
    elif pending.kind is DecisionKind.CURIOUS_ORDER and set(k.top[:3]) != set(view.decision_cards):
        k.top = []  # the top cards' set is known (determinize places them), not their order


def _drop_visible(view: PlayerView, k: Knowledge) -> None:
    """Facts contradicted by what the view shows are dropped (R11 facts win)."""
    visible = set(_visible_cards(view))
    seats = view.public.seats
    for seat, cards in list(k.held.items()):
        cards.difference_update(visible)
        if seat == view.seat or len(cards) > seats[seat].hand_size:
            del k.held[seat]
    if any(c in visible for c in k.top) or len(k.top) > view.public.rat_deck_size:
        k.top = []
    if k.deck is not None and (
        len(k.deck) != view.public.rat_deck_size or any(c in visible for c in k.deck)
    ):
        k.deck = None
    if k.deck is not None and not set(k.top) <= k.deck:
        k.top = []


def _visible_cards(view: PlayerView) -> Iterable[Card]:
    """Every card the seat sees outside the Rat Deck and other hands."""
    pub = view.public
    yield from view.hand
    yield from pub.discard
    for s in pub.seats:
        yield from s.won
    if pub.trick is not None:
        for p in pub.trick.plays:
            if p.card is not None:
                yield p.card
            if p.second is not None:
                yield p.second
