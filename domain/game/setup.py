"""Setting up a game: deck by format (R3) and the deal (R4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from domain.game.boosters import BoosterPack, open_booster
from domain.game.cards import (
    DESIGN_CARDS,
    HOUSES,
    PRIZE_CARDS,
    THE_RAT,
    Card,
    House,
    assignment_card,
    is_design,
    sort_key,
    sorted_cards,
)
from domain.game.engine import awaiting
from domain.game.errors import BadInput, DeckTooSmall
from domain.game.events import DealtSeat, Event, GameStarted
from domain.game.options import HAND_SIZE, MAX_SEATS, MIN_SEATS, Format, GameOptions
from domain.game.rng import Rng, seed_state
from domain.game.state import GameState, Phase, SeatState, Trick
from domain.game.turns import trick_started

MAX_DECK = len(DESIGN_CARDS)
"""The most numbered cards a game deals from (R3.1's 224; a Sealed game has
at most 8 x 17). [decision] A Former Sealed game whose collections hold
more plays a random 224 of them, drawn by the shuffle of R4.2 from the
game's seed (R3.5): every list a game shows (hands, piles, the Rat Deck's
choices) and every game's length stay bounded however many packs its
players opened (issue #22, docs/decisions/0049)."""


@dataclass(frozen=True, slots=True)
class Setup:
    """A freshly dealt game, its first events and the packs opened (R3.2)."""

    state: GameState
    events: list[Event]
    packs: dict[int, BoosterPack]


def instance_ids(designs: Sequence[Card]) -> list[Card]:
    """R1.5: sealed instances get ``#n``, numbered per design in canonical order."""
    seen: Counter[str] = Counter()
    out = []
    for d in sorted(designs, key=sort_key):
        seen[d] += 1
        out.append(Card(f"{d}#{seen[d]}"))
    return out


def _validate(
    seats: int, rat: int | None, options: GameOptions, collections: Sequence[Sequence[str]] | None
) -> None:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise BadInput(f"a game has {MIN_SEATS} to {MAX_SEATS} seats, not {seats} (R2.1)")
    if rat is not None and not 0 <= rat < seats:
        raise BadInput(f"rat seat {rat} is not a seat of this {seats}-seat game")
    if options.format is Format.FORMER_SEALED:
        if collections is None or len(collections) != seats:
            raise BadInput("former sealed needs one collection per seat (R3.3)")
        for c in collections:
            for d in c:
                if not is_design(d):
                    raise BadInput("a collection holds something that is not a numbered design")


def _houses(rng: Rng, seats: int, rat: int, packs: dict[int, BoosterPack]) -> list[House | None]:
    """R4.3 (and R3.2 for sealed): a different house for every house player."""
    free = list(HOUSES)
    rng.shuffle(free)
    out: list[House | None] = [None] * seats
    for seat in range(seats):
        if seat == rat:
            continue
        pack = packs.get(seat)
        if pack is not None and pack.house in free:
            house = pack.house
        else:
            house = free[rng.below(len(free))]
        free.remove(house)
        out[seat] = house
    return out


def new_game(
    seats: int,
    seed: int | str,
    options: GameOptions | None = None,
    rat: int | None = None,
    collections: Sequence[Sequence[str]] | None = None,
) -> Setup:
    """R3-R4: build the deck, deal, assign houses, reveal the first prize.

    ``collections`` (Former Sealed, R3.3) gives each seat's numbered design ids
    (empty for bots). Refuses a deck under 10 x seats cards (R3.4).
    """
    options = options or GameOptions()
    _validate(seats, rat, options, collections)
    rng = Rng(seed_state(seed))
    rat_seat = rng.below(seats) if rat is None else rat  # R4.1
    packs: dict[int, BoosterPack] = {}
    if options.format is Format.SINGLETON:  # R3.1
        deck = list(DESIGN_CARDS)
    elif options.format is Format.SEALED:  # R3.2
        packs = {s: open_booster(rng) for s in range(seats)}
        deck = instance_ids([d for p in packs.values() for d in p.numbered])
    else:  # R3.3
        assert collections is not None
        deck = instance_ids([Card(d) for c in collections for d in c])
    need = HAND_SIZE * seats
    if len(deck) < need:
        raise DeckTooSmall(
            f"the deck has {len(deck)} cards but {seats} seats need {need}: "
            f"{need - len(deck)} missing (R3.4)"
        )
    rng.shuffle(deck)  # R4.2
    if len(deck) > MAX_DECK:  # R3.3 [decision]: a seeded sample of the collections
        deck = deck[:MAX_DECK]
    houses = _houses(rng, seats, rat_seat, packs)  # R4.3
    seat_states = [
        SeatState(
            house=h,
            identity=THE_RAT if h is None else assignment_card(h),
            hand=deck[s * HAND_SIZE : (s + 1) * HAND_SIZE],
        )
        for s, h in enumerate(houses)
    ]
    prize_pool = list(PRIZE_CARDS)
    rng.shuffle(prize_pool)  # R4.4
    used = {h for h in houses if h is not None}
    box = [assignment_card(h) for h in HOUSES if h not in used]
    prize = prize_pool.pop(0)  # R4.5
    state = GameState(
        options=options,
        seats=seat_states,
        rat=rat_seat,
        rat_deck=deck[need:],
        prize_pool=prize_pool,
        discard=[],
        box=box,
        trick=Trick(number=1, prize=prize, leader=rat_seat),
        phase=Phase.LEAD,
        turn=rat_seat,
        rng=rng.state,
        deck_size=len(deck),
    )
    events: list[Event] = [_started(state, packs), trick_started(state)]
    if (waiting := awaiting(state)) is not None:
        events.append(waiting)
    return Setup(state, events, packs)


def _started(state: GameState, packs: dict[int, BoosterPack]) -> GameStarted:
    seats = state.seats
    return GameStarted(
        seats=tuple(DealtSeat(i, s.house, i == state.rat) for i, s in enumerate(seats)),
        rat_seat=state.rat,
        hand_sizes=tuple(len(s.hand) for s in seats),
        rat_deck_size=len(state.rat_deck),
        prize_pool_size=len(state.prize_pool),
        options=state.options,
        hands=tuple(tuple(sorted_cards(s.hand)) for s in seats),
        packs=tuple(packs.get(i) for i in range(len(seats))) if packs else (),
    )
