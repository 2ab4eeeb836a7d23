"""Determinization: a full :class:`GameState` consistent with one seat's
view and knowledge (R11), its hidden cards sampled.

What is fixed: the seat's hand, every public card (won piles, prize rows,
discards, face-up trick plays), hand sizes, Rat Deck and prize pool sizes,
houses, the trick and the pending decision. What is sampled, consistent with
:class:`~domain.bots.knowledge.Knowledge`: other hands (known cards placed,
voids respected), face-down plays (a lead-suit card if the seat had one,
R6.3; a Sassy card under Sassy, R7.7), the Rat Deck's order (known top cards
first, the seat's own Curious cards on top, R7.6) and the prize pool's order
(the 21 prize cards less those revealed, R4.4).

[decision] Sealed and Former Sealed (R3.2, R3.3): the deck is not known in
full, so unknown cards are invented: each a design drawn as a booster draws
(a rare with chance 2/17, R1.6), as a fresh instance id (``#1000`` on) that
no real card has. Singleton (R3.1): the unknown cards are exactly the 224
designs not seen.

[decision] When the voids cannot all be met (knowledge is conservative, but
the view alone may mislead), a seat's voids are relaxed rather than fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.bots.knowledge import Knowledge
from domain.game.cards import (
    ASSIGNMENT_CARDS,
    COMMON_DESIGNS,
    DESIGN_CARDS,
    HOUSE_INDEX,
    PRIZE_CARDS,
    RARE_DESIGNS,
    THE_RAT,
    Card,
    House,
    assignment_card,
)
from domain.game.options import Format
from domain.game.rng import Rng
from domain.game.state import Decision, DecisionKind, GameState, Phase, Play, SeatState, Trick
from domain.game.views import PlayerView

_SASSY = House.SASSY
_INVENTED = 1000  # the first instance number of an invented sealed card
_RARE_IN = (2, 17)  # R1.6: 2 rares in a pack of 17 numbered cards


@dataclass(frozen=True, slots=True)
class _Seat:
    """Another seat's hidden cards: how many, those known, its voids, and
    which trick plays of it are face down (R7.3)."""

    seat: int
    hand: int
    held: tuple[Card, ...]
    voids: frozenset[int]  # house indexes (R1.1)
    down: tuple[int, ...]  # indexes of its face-down plays
    down_seconds: tuple[int, ...]  # indexes of its plays with a face-down Crazy second card

    @property
    def unknown(self) -> int:
        return self.hand + len(self.down) + len(self.down_seconds) - len(self.held)


class Sampler:
    """Built once per decision from a view and knowledge; :meth:`sample`
    makes one determinization per call."""

    def __init__(self, view: PlayerView, know: Knowledge) -> None:
        self.view = view
        pub = view.public
        self.n = len(pub.seats)
        self.sealed = pub.options.format is not Format.SINGLETON
        trick = pub.trick
        plays = trick.plays if trick is not None else ()
        self.others = sorted(
            (
                _Seat(
                    s.seat,
                    s.hand_size,
                    tuple(sorted(know.held.get(s.seat, ()))),
                    frozenset(HOUSE_INDEX[h] for h in know.voids.get(s.seat, ())),
                    tuple(i for i, p in enumerate(plays) if p.seat == s.seat and p.card is None),
                    tuple(
                        i
                        for i, p in enumerate(plays)
                        if p.seat == s.seat and p.has_second and p.second is None
                    ),
                )
                for s in pub.seats
                if s.seat != view.seat
            ),
            key=lambda o: -len(o.voids),  # the most constrained first
        )
        pending = pub.pending
        self.curious = (
            tuple(view.decision_cards)
            if pending is not None
            and pending.seat == view.seat
            and pending.kind is DecisionKind.CURIOUS_ORDER
            and not know.top
            else ()
        )
        self.top = tuple(know.top)
        self.deck = None if know.deck is None else tuple(sorted(know.deck - set(know.top)))
        self.deck_size = pub.rat_deck_size
        placed = {c for o in self.others for c in o.held} | set(self.top) | set(self.curious)
        placed |= set(know.deck or ())
        self.pool = self._pool(placed)
        used = {s.prizes for s in pub.seats}
        shown = {c for prizes in used for c in prizes}
        if trick is not None:
            shown.add(trick.prize)
        self.prizes = tuple(c for c in PRIZE_CARDS if c not in shown)

    def _pool(self, placed: set[Card]) -> tuple[Card, ...]:
        """R3.1: the designs nobody has shown; sealed: none (invented later)."""
        if self.sealed:
            return ()
        seen = set(placed)
        pub = self.view.public
        seen.update(self.view.hand, pub.discard)
        for s in pub.seats:
            seen.update(s.won)
        if pub.trick is not None:
            for p in pub.trick.plays:
                seen.update(c for c in (p.card, p.second) if c is not None)
        return tuple(c for c in DESIGN_CARDS if c not in seen)

    def _invent(self, rng: Rng, k: int, avoid: frozenset[int], start: int) -> list[Card]:
        """Sealed [decision]: ``k`` invented instances of booster-drawn designs."""
        out: list[Card] = []
        while len(out) < k:
            rare = rng.below(_RARE_IN[1]) < _RARE_IN[0]
            designs = RARE_DESIGNS if rare else COMMON_DESIGNS
            d = designs[rng.below(len(designs))]
            if HOUSE_INDEX[d.house] in avoid and rng.below(64):  # rarely, give up on the void
                continue
            out.append(Card(f"{d.id}#{start + len(out)}"))
        return out

    def sample(self, rng: Rng, shuffled: int = 24) -> GameState:
        """One determinization (see the module docstring). Only the top
        ``shuffled`` unknown cards of the Rat Deck are drawn at random; the
        rest keep an arbitrary order (a truncated rollout never draws them,
        and a Hungry take sees contents, not order, R7.4)."""
        pool = list(self.pool)
        hidden: dict[int, list[Card]] = {}
        invented = _INVENTED
        for o in self.others:
            need = o.unknown
            if self.sealed:
                got = self._invent(rng, need, o.voids, invented)
                invented += need
            else:
                got = _take(rng, pool, need, o.voids)
            hidden[o.seat] = list(o.held) + got
        deck = self._deck(rng, pool, invented, shuffled)
        return self._state(rng, hidden, deck)

    def _deck(self, rng: Rng, rest: list[Card], invented: int, shuffled: int) -> list[Card]:
        """The Rat Deck: known top, our Curious cards, then the rest."""
        head = list(self.top)
        if self.curious:
            cur = list(self.curious)
            rng.shuffle(cur)
            head += cur
        if self.deck is not None:
            rest = list(self.deck)
        elif self.sealed:
            return head + self._invent(rng, self.deck_size - len(head), frozenset(), invented)
        tail = _take(rng, rest, min(shuffled, len(rest)), frozenset())
        tail += rest
        return (head + tail)[: max(self.deck_size, len(head))]

    def _state(self, rng: Rng, hidden: dict[int, list[Card]], deck: list[Card]) -> GameState:
        view = self.view
        pub = view.public
        trick_view = pub.trick
        n = self.n
        plays: list[Play] = []
        if trick_view is not None:
            plays = [
                Play(p.seat, p.card, p.face_down, p.second)  # type: ignore[arg-type]
                for p in trick_view.plays
            ]
        sassy = trick_view is not None and trick_view.sassy
        for o in self.others:
            cards = hidden[o.seat]
            for i in o.down:
                plays[i].card = _face_down_card(rng, cards, sassy, plays[0].card.house)
            for i in o.down_seconds:
                plays[i].second = cards.pop(rng.below(len(cards)))
        seats = [
            SeatState(
                s.house,
                THE_RAT if s.house is None else assignment_card(s.house),
                list(view.hand) if s.seat == view.seat else hidden[s.seat],
                list(s.won),
                list(s.prizes),
            )
            for s in pub.seats
        ]
        rest = list(self.prizes)
        pool = _take(rng, rest, min(3, len(rest)), frozenset()) + rest  # R4.4: the next few
        pending = pub.pending
        decision = None
        phase = pub.phase
        trick = None
        turn = pub.to_act if pub.to_act is not None else 0
        if trick_view is not None:
            if pending is not None:
                turn = pending.source
            elif phase is Phase.LEAD:
                turn = trick_view.leader
            trick = Trick(
                trick_view.number,
                trick_view.prize,
                trick_view.leader,
                plays,
                list(trick_view.passes),
                list(trick_view.skipped),
                (turn - trick_view.leader) % n,
                trick_view.sleepy,
                trick_view.sassy,
            )
        if pending is not None:
            cards = deck[:3] if pending.kind is DecisionKind.CURIOUS_ORDER else []
            decision = Decision(pending.kind, pending.seat, pending.source, cards)
        houses = {s.house for s in pub.seats}
        numbered = sum(len(s.hand) + len(s.won) for s in seats) + len(deck) + len(pub.discard)
        numbered += sum(1 + (p.second is not None) for p in plays)
        return GameState(
            options=pub.options,
            seats=seats,
            rat=pub.rat,
            rat_deck=deck,
            prize_pool=pool,
            discard=list(pub.discard),
            box=[c for c in ASSIGNMENT_CARDS if c.house not in houses],
            trick=trick,
            phase=phase,
            turn=turn,
            rng=0,
            deck_size=numbered,
            pending=decision,
            version=pub.version,
        )


def _take(rng: Rng, pool: list[Card], k: int, voids: frozenset[int]) -> list[Card]:
    """Draw ``k`` cards of ``pool`` at random, none of a house (index) in
    ``voids``; relaxed if too few are left [decision]. Each draw swaps a
    random card to the end and pops it."""
    got: list[Card] = []
    below = rng.below
    if not voids:
        for _ in range(min(k, len(pool))):
            j = below(len(pool))
            pool[j], pool[-1] = pool[-1], pool[j]
            got.append(pool.pop())
        return got
    keep: list[Card] = []
    while pool and len(got) < k:
        j = below(len(pool))
        pool[j], pool[-1] = pool[-1], pool[j]
        c = pool.pop()
        (keep if c.house_index in voids else got).append(c)
    short = k - len(got)
    if short > 0:  # relaxed
        got += keep[:short]
        del keep[:short]
    pool += keep
    return got


def _face_down_card(rng: Rng, cards: list[Card], sassy: bool, lead: House | None) -> Card:
    """A face-down play (R7.3) obeyed R6.3 / R7.7: a card of the suit it had
    to play if the seat held one, else any; taken out of ``cards``."""
    suit = _SASSY if sassy else lead
    fits = [i for i, c in enumerate(cards) if c.house is suit] or range(len(cards))
    return cards.pop(fits[rng.below(len(fits))])
