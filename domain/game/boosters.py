"""Booster packs (R1.6)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.game.cards import COMMON_DESIGNS, HOUSES, RARE_DESIGNS, House
from domain.game.rng import Rng

COMMONS_PER_PACK = 15
RARES_PER_PACK = 2


@dataclass(frozen=True, slots=True)
class BoosterPack:
    """R1.6: 15 commons + 2 rares (no design twice in a pack) + 1 house card."""

    commons: tuple[str, ...]
    rares: tuple[str, ...]
    house: House

    @property
    def numbered(self) -> tuple[str, ...]:
        """The pack's numbered design ids (they join a sealed deck, R3.2)."""
        return self.commons + self.rares

    def to_dict(self) -> dict[str, object]:
        return {"commons": list(self.commons), "rares": list(self.rares), "house": self.house.value}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> BoosterPack:
        commons, rares, house = data["commons"], data["rares"], data["house"]
        if not (isinstance(commons, list) and isinstance(rares, list) and isinstance(house, str)):
            raise ValueError("malformed booster pack")
        return cls(tuple(map(str, commons)), tuple(map(str, rares)), House(house))


def _sample(rng: Rng, ids: list[str], k: int) -> tuple[str, ...]:
    """k distinct items, uniformly (partial Fisher-Yates)."""
    for i in range(k):
        j = i + rng.below(len(ids) - i)
        ids[i], ids[j] = ids[j], ids[i]
    return tuple(ids[:k])


def open_booster(rng: Rng) -> BoosterPack:
    """R1.6: draw one pack from the RNG."""
    commons = _sample(rng, [d.id for d in COMMON_DESIGNS], COMMONS_PER_PACK)
    rares = _sample(rng, [d.id for d in RARE_DESIGNS], RARES_PER_PACK)
    return BoosterPack(commons, rares, rng.choice(HOUSES))
