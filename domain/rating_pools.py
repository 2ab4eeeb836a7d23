"""The rating pools (issue #26, docs/decisions/0065): where a rated game counts."""

from __future__ import annotations

from enum import Enum

from domain.game.options import Format


class RatingPool(Enum):
    """Where a rated game counts: its deck kind by its seat-count band.

    [decision] Sealed decks (Sealed and Former Sealed, R3.2-R3.3) are a pool
    of their own: with the same bots, GREEDY's win share against RANDOM
    falls from 3.3x to 2.7x its fair share at 4 seats and from 4.6x to 3.8x
    at 6 (300 games each, docs/decisions/0065): the deck's luck weighs more,
    so one number would mix two games."""

    SINGLETON_3_4 = "singleton_3_4"
    SINGLETON_5_6 = "singleton_5_6"
    SINGLETON_7_8 = "singleton_7_8"
    SEALED_3_4 = "sealed_3_4"
    SEALED_5_6 = "sealed_5_6"
    SEALED_7_8 = "sealed_7_8"


def pool_of(seat_count: int, deck: Format) -> RatingPool:
    """The pool of a game of ``seat_count`` seats (R2.1) of format ``deck`` (R3)."""
    kind = "singleton" if deck is Format.SINGLETON else "sealed"
    band = {3: "3_4", 4: "3_4", 5: "5_6", 6: "5_6", 7: "7_8", 8: "7_8"}[seat_count]
    return RatingPool(f"{kind}_{band}")
