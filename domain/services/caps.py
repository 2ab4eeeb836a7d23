"""The caps of domain/caps.py in the transaction that creates: claim the
player, count what they have open, refuse at the cap (docs/decisions/0051).
A cap of 0 costs nothing: no claim, no count."""

from __future__ import annotations

from domain.caps import (
    PACK_WINDOW,
    Caps,
    check_invitations,
    check_open_games,
    check_packs,
    check_quick_play_waits,
)
from domain.services.transaction import Tx


def room_for_a_lobby(tx: Tx, caps: Caps, player_id: str) -> None:
    """One more lobby game hosted by ``player_id``, or ``ILLEGAL_ACTION``."""
    if caps.open_games:
        tx.claim(player_id)
        check_open_games(tx.uow.games.open_lobbies(player_id), caps)


def room_for_a_wait(tx: Tx, caps: Caps, player_id: str) -> None:
    """One more quick-play game waited in by ``player_id``, or ``ILLEGAL_ACTION``."""
    if caps.quick_play_waits:
        tx.claim(player_id)
        check_quick_play_waits(tx.uow.games.quick_play_waits(player_id), caps)


def room_for_a_pack(tx: Tx, caps: Caps, player_id: str) -> None:
    """One more booster pack today for ``player_id``, or ``RATE_LIMITED``."""
    if caps.packs_per_day:
        tx.claim(player_id)
        now = tx.now()
        opened = tx.uow.boosters.opened_since(player_id, now - PACK_WINDOW, caps.packs_per_day)
        check_packs(opened, now, caps)


def room_for_invitations(tx: Tx, caps: Caps, host: str, adding: int) -> None:
    """``adding`` more pending invitations from ``host``, or ``ILLEGAL_ACTION``."""
    if caps.pending_invitations and adding:
        tx.claim(host)
        check_invitations(tx.uow.games.invitations_sent(host), adding, caps)
