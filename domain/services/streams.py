"""Live event streams: the caller's projections after ``after_seq``, with no
gap, no duplicate, in order (API.md "Events and resuming").

Subscribe to the audience's channel first, then replay the backlog from the
log, then pass live messages on, dropping what was already sent. A gap (or a
bus reconnect, signalled by a ``{"resync": true}`` message) is backfilled
from the log.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from domain.channels import LOBBY, game_channel
from domain.errors import BadRequest
from domain.services.deps import Deps
from domain.services.queries import MAX_PAGE, load_game, seat_in
from domain.services.results import EventView

RESYNC = "resync"
SEAT_CHANGES = frozenset({"SeatTaken", "SeatLeft"})  # domain.lobby


async def _backlog(
    deps: Deps, game_id: str, seat: int | None, after: int, upto: int | None = None
) -> list[EventView]:
    audience = game_channel(game_id, seat)

    def tx() -> list[EventView]:
        out: list[EventView] = []
        with deps.uow() as uow:
            last = after
            while True:
                rows = uow.events.read(game_id, last, MAX_PAGE)
                for e in rows:
                    if upto is not None and e.seq > upto:
                        return out
                    out.append(EventView.of(e, seat, audience))
                    last = e.seq
                if len(rows) < MAX_PAGE:
                    return out

    return await deps.run(tx)


async def game_events(
    deps: Deps, game_id: str, player_id: str | None, after_seq: int
) -> AsyncGenerator[EventView, None]:
    """The caller's stream: a seat's own channel, or the public one (R11).

    Seats change in the lobby only (``SeatTaken`` / ``SeatLeft``): after such
    an event about the caller, their seat is looked up again and the stream
    moves to the new audience's channel, so a player who left a seat never
    gets its next occupant's projections, and one who took a seat gets it."""

    def find_seat() -> int | None:
        with deps.uow() as uow:
            return seat_in(uow, game_id, player_id)

    def first_look() -> int | None:
        with deps.uow() as uow:
            game = load_game(uow, game_id)
            if after_seq > game.last_seq:
                raise BadRequest(
                    f"afterSeq {after_seq} is past the game's last seq {game.last_seq}"
                )
            return game.seat_of(player_id)

    last, seat = after_seq, await deps.run(first_look)
    while True:
        moved = False
        async with aclosing(_audience_events(deps, game_id, seat, last)) as events:
            async for e in events:
                yield e
                last = e.seq
                if player_id is not None and _seat_change_of(e, player_id):
                    now = await deps.run(find_seat)
                    if now != seat:
                        seat, moved = now, True
                        break
        if not moved:
            return


def _seat_change_of(e: EventView, player_id: str) -> bool:
    return e.type in SEAT_CHANGES and e.data.get("playerId") == player_id


async def _audience_events(
    deps: Deps, game_id: str, seat: int | None, after_seq: int
) -> AsyncGenerator[EventView, None]:
    """One audience's stream: its channel, the backlog first, then live.
    Each view is marked with its audience (the channel)."""
    audience = game_channel(game_id, seat)
    async with deps.bus.subscribe(audience) as sub:
        last = after_seq
        for e in await _backlog(deps, game_id, seat, last):
            yield e
            last = e.seq
        async for msg in sub:
            if msg.get(RESYNC):
                for e in await _backlog(deps, game_id, seat, last):
                    yield e
                    last = e.seq
                continue
            live = EventView.from_message(msg, audience)
            if live.seq <= last:
                continue
            if live.seq > last + 1:  # a gap: fill it from the log
                for e in await _backlog(deps, game_id, seat, last, live.seq - 1):
                    yield e
                    last = e.seq
            yield live
            last = live.seq


async def lobby_events(deps: Deps) -> AsyncGenerator[dict[str, Any], None]:
    """Games created, filling, started and finished, for lobby screens."""
    async with deps.bus.subscribe(LOBBY) as sub:
        async for msg in sub:
            if not msg.get(RESYNC):
                yield msg
