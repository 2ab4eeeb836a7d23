"""Seat presence (issue #15 part 4, docs/decisions/0047).

A seated player is connected while any live subscription of theirs to the
game exists, on any instance. ``connected`` is announced when a player comes
(back) after being announced gone, or for the first time; ``disconnected``
only once they stayed away for the grace period (``MMK_PRESENCE_GRACE``), so
a phone switching networks does not flicker. Each change is announced once,
by the instance that wins the compare-and-swap of the player's shared
:class:`~domain.presence.Mark`. Presence is public (the seats' players are)
and never written to the game's event log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import datetime, timedelta

from domain.channels import presence_channel
from domain.ports import PresenceUnavailable
from domain.presence import Mark, PresenceChange
from domain.services.committed_reads import committed_game
from domain.services.deps import Deps

ONLINE = Mark(connected=True)
GONE = Mark(connected=False)


def next_mark(old: Mark | None, online: bool, now: datetime, grace: timedelta) -> Mark | None:
    """The player's next mark, or None when it stays as it is."""
    if online:
        return None if old == ONLINE else ONLINE
    if old is None or not old.connected:
        return None  # never came, or already announced gone
    if old.away_since is None:
        return Mark(connected=True, away_since=now)  # the grace starts
    return GONE if now - old.away_since >= grace else None


def announced(mark: Mark | None) -> bool:
    """Whether the mark says connected (no mark: never came)."""
    return mark is not None and mark.connected


async def seated_players(deps: Deps, game_id: str) -> tuple[str | None, ...]:
    """The player id of each seat (None: free, or a bot)."""

    game = await committed_game(deps, game_id)
    if game is None:
        return ()
    return tuple(o.player_id if o is not None else None for o in game.seats)


async def review(deps: Deps, game_id: str) -> list[PresenceChange]:
    """Bring the marks of the game's seated players up to date and announce
    what changed (on the game's presence channel); what was announced."""
    presence = deps.presence
    if presence is None:
        return []
    online, marks = await presence.seen(game_id)
    now = deps.clock.now()
    if not any(
        next_mark(marks.get(p), p in online, now, deps.presence_grace) is not None
        for p in online | marks.keys()
    ):
        return []  # no mark moves (a player in neither never came): the seats unread
    seats = await seated_players(deps, game_id)
    if not any(seats):
        return []
    changes: list[PresenceChange] = []
    for seat, player_id in enumerate(seats):
        if player_id is None:
            continue
        old = marks.get(player_id)
        new = next_mark(old, player_id in online, now, deps.presence_grace)
        if new is None or not await presence.swap(game_id, player_id, old, new):
            continue  # nothing to do, or another instance did it
        if announced(old) != new.connected:
            changes.append(PresenceChange(game_id, seat, new.connected))
    if changes:
        await deps.bus.publish([(presence_channel(game_id), c) for c in changes])
    return changes


async def connected_seats(
    deps: Deps, game_id: str, players: Sequence[str | None], bots: Sequence[object | None]
) -> list[bool | None]:
    """Whether each seat counts as connected now: its player online, or away
    within the grace (not yet announced gone); a bot's seat always; a free
    one never. None: its player's presence cannot be read now (the store is
    away)."""
    presence = deps.presence
    if presence is None or not any(players):
        return [b is not None for b in bots]
    try:
        online, marks = await presence.seen(game_id)
    except PresenceUnavailable:
        return [
            None if p is not None else b is not None for p, b in zip(players, bots, strict=True)
        ]
    now = deps.clock.now()

    def one(player_id: str | None, bot: object | None) -> bool:
        if player_id is None:
            return bot is not None
        if player_id in online:
            return True
        mark = marks.get(player_id)
        return (
            mark is not None
            and mark.away_since is not None
            and now - mark.away_since < deps.presence_grace
        )

    return [one(p, b) for p, b in zip(players, bots, strict=True)]


@asynccontextmanager
async def attending(deps: Deps, game_id: str, player_id: str | None) -> AsyncIterator[None]:
    """While entered, the player has a live subscription to the game. Any
    player with a token counts; only seated ones are ever announced (a
    spectator's entry changes nothing)."""
    presence = deps.presence
    if presence is None or player_id is None:
        yield
        return
    # Best effort: a failing presence store never ends a game stream (the
    # adapters log; the keeper reviews the game again on its next beat).
    with suppress(Exception):
        await presence.join(game_id, player_id)
        await review(deps, game_id)
    try:
        yield
    finally:
        with suppress(Exception):
            await presence.leave(game_id, player_id)
            await review(deps, game_id)
