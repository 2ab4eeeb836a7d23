"""Fair deals (docs/decisions/0040): a game's seed is secret while it runs,
``GameStarted`` commits to it, ``GameEnded`` reveals it, so anyone can
re-deal and check the log (domain/verify.py).

The commitment is SHA-256, in lowercase hex, of the UTF-8 bytes of
``"mmk-seed-commitment/1;" + len(salt) + ":" + salt + ";" + len(seed) + ":" + seed``
where each ``len`` is the decimal length in UTF-8 bytes of what follows it
(length-prefixed: no two (salt, seed) pairs give the same bytes).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import replace

from domain.game.events import Event, GameEnded, GameStarted
from domain.game.rng import seed_state

COMMITMENT_TAG = "mmk-seed-commitment/1"


def _encoded(seed: str, salt: str) -> bytes:
    salt_b, seed_b = salt.encode(), seed.encode()
    return b"%s;%d:%s;%d:%s" % (COMMITMENT_TAG.encode(), len(salt_b), salt_b, len(seed_b), seed_b)


def commitment(seed: str, salt: str) -> str:
    """The public commitment to ``(seed, salt)``: SHA-256 of their
    length-prefixed encoding (module docstring), in hex."""
    return hashlib.sha256(_encoded(seed, salt)).hexdigest()


def seal(events: Sequence[Event], seed_commitment: str, practice: bool) -> list[Event]:
    """The start's events with ``GameStarted`` carrying the commitment and
    the practice mark (public to every audience)."""
    return [
        replace(e, seed_commitment=seed_commitment, practice=practice)
        if isinstance(e, GameStarted)
        else e
        for e in events
    ]


def reveal(events: Sequence[Event], seed: str, salt: str) -> list[Event]:
    """A change's events with ``GameEnded`` revealing the seed and salt."""
    if not any(isinstance(e, GameEnded) for e in events):
        return list(events)
    return [replace(e, seed=seed, salt=salt) if isinstance(e, GameEnded) else e for e in events]


def bot_rng_state(seed: str, salt: str, practice: bool, version: int) -> int:
    """The 64-bit RNG state of a bot's move at game ``version``.

    Practice games: from the seed alone (the host knows it: the bots replay
    as the game is replayed). Other games: HMAC-SHA256 keyed by the secret
    salt and seed, so nothing a client sees while the game runs (not even
    the deal's own 64-bit RNG state) predicts a bot.
    """
    if practice:
        return seed_state(f"{seed}/bot/{version}")
    digest = hmac.digest(_encoded(seed, salt), f"bot/{version}".encode(), "sha256")
    return int.from_bytes(digest[:8], "big")
