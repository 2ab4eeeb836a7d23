"""Booster packs (R1.6)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.game.cards import COMMON_DESIGNS, HOUSES, RARE_DESIGNS, Card, House
from domain.game.rng import Rng

COMMONS_PER_PACK = 15
RARES_PER_PACK = 2


@dataclass(frozen=True, slots=True)
class BoosterPack:
    """R1.6: 15 commons + 2 rares (no design twice in a pack) + 1 house card."""

    commons: tuple[Card, ...]
    rares: tuple[Card, ...]
    house: House

    @property
    def numbered(self) -> tuple[Card, ...]:
        """The pack's numbered designs (they join a sealed deck, R3.2)."""
        return self.commons + self.rares


def _sample(rng: Rng, ids: list[Card], k: int) -> tuple[Card, ...]:
    """k distinct items, uniformly (partial Fisher-Yates)."""
    for i in range(k):
        j = i + rng.below(len(ids) - i)
        ids[i], ids[j] = ids[j], ids[i]
    return tuple(ids[:k])


def open_booster(rng: Rng) -> BoosterPack:
    """R1.6: draw one pack from the RNG."""
    commons = _sample(rng, [Card(d.id) for d in COMMON_DESIGNS], COMMONS_PER_PACK)
    rares = _sample(rng, [Card(d.id) for d in RARE_DESIGNS], RARES_PER_PACK)
    return BoosterPack(commons, rares, rng.choice(HOUSES))
