"""Per-player caps on what a player creates (issue #22, docs/decisions/0051):
lobby games hosted at once, quick-play games waited in at once, booster
packs opened a day, invitations out at once (0062). Each refusal says what
is open and how to get below the cap; nothing is created. 0: no cap.

The counts are read in the transaction that creates, after the player is
claimed (``Tx.claim``): the same player's creations queue one behind the
other, so two racing requests never both pass a cap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.errors import CapReached, RateLimited

PACK_WINDOW = timedelta(days=1)
"""Booster packs count over a rolling day (the last 24 hours)."""


@dataclass(frozen=True, slots=True)
class Caps:
    """``open_games``: lobby games a player hosts at once (``createGame``,
    ``rematch``; quick-play games count as waits); ``quick_play_waits``:
    quick-play lobby games a player sits in at once; ``packs_per_day``:
    ``openBoosterPack`` calls a player makes in :data:`PACK_WINDOW` (the
    packs of Sealed games are not counted: a game start opens them);
    ``pending_invitations``: invitations a host has out at once, to games
    not yet started (docs/decisions/0062)."""

    open_games: int = 5
    quick_play_waits: int = 3
    packs_per_day: int = 10
    pending_invitations: int = 50


def check_open_games(hosted: int, caps: Caps) -> None:
    """Refuse one more lobby game to a player who hosts ``hosted``."""
    if caps.open_games and hosted >= caps.open_games:
        raise CapReached(
            f"you host {hosted} lobby games not yet started, the most at once is "
            f"{caps.open_games}: start one, or leave it (the last person out closes it)"
        )


def check_quick_play_waits(waits: int, caps: Caps) -> None:
    """Refuse one more quick-play wait to a player who waits in ``waits``."""
    if caps.quick_play_waits and waits >= caps.quick_play_waits:
        raise CapReached(
            f"you wait in {waits} quick-play games, the most at once is "
            f"{caps.quick_play_waits}: leave one first"
        )


def check_invitations(pending: int, adding: int, caps: Caps) -> None:
    """Refuse ``adding`` more invitations to a host who has ``pending`` out."""
    if caps.pending_invitations and pending + adding > caps.pending_invitations:
        raise CapReached(
            f"you have {pending} invitations out to games not yet started, the most at once "
            f"is {caps.pending_invitations}: cancel some, or start the games, before "
            f"inviting {adding} more"
        )


def check_packs(opened: Sequence[datetime], now: datetime, caps: Caps) -> None:
    """Refuse one more pack to a player whose last packs (``opened``, newest
    first, at most ``packs_per_day`` of them, all in the window) fill the
    day's allowance; it refills when the oldest of them leaves the window."""
    if not caps.packs_per_day or len(opened) < caps.packs_per_day:
        return
    wait = (opened[caps.packs_per_day - 1] + PACK_WINDOW - now).total_seconds()
    seconds = max(math.ceil(wait), 1)
    raise RateLimited(
        f"you opened {caps.packs_per_day} booster packs in the last 24 hours, the most "
        f"a day: the next one in {seconds} s",
        seconds,
    )
