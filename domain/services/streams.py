"""Live event streams: the caller's projections after ``after_seq``, with no
gap, no duplicate, in order (docs/clients.md "Resuming").

Subscribe to the audience's channel first, then replay the backlog from the
log, then pass live messages on, dropping what was already sent. A gap (or a
bus reconnect, signalled by :data:`~domain.ports.RESYNC`) is backfilled
from the log.

Each event comes with its audience (its bus channel): every event with the
same audience and seq is the same, so an adapter may build what it sends
for one subscriber of that audience once for all of them.

Where the live events that follow may be taken as they are published,
the stream yields a :class:`LiveTail` first: an adapter that can send
straight from the publisher's task drains it (a steady stream then costs no
wake-up of its reader per event, docs/decisions/0038); one that cannot
just goes on. What the tail does not hand over (whatever needs the log: a
gap, a resync, a seat change, the game's end, or an event the taker
declined) is yielded next, in its place in the order. The stream never
calls into its adapter: the adapter calls the tail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from datetime import datetime
from typing import Literal, overload

from domain.abandonment import is_abandonment
from domain.channels import LOBBY, game_channel, presence_channel
from domain.errors import BadRequest
from domain.game.events import GameEnded
from domain.invitations import InvitationCancelled, InvitationDeclined
from domain.lobby import SEAT_CHANGES
from domain.log import LoggedEvent
from domain.ports import BusMessage, Resync, Subscription
from domain.presence import PresenceChange
from domain.records import GameStatus, LobbyUpdate
from domain.rematch import RematchOffered
from domain.services import seat_presence
from domain.services.deps import Deps
from domain.services.paging import in_pages
from domain.services.queries import load_seen, seat_in

Heard = tuple[str, LoggedEvent]
"""An event as one audience (named by its channel) sees it."""

Take = Callable[[str, LoggedEvent], bool]
"""Takes one live event for its audience, synchronously, as it is published;
False: not taken (it is yielded instead)."""


class _Position:
    """The last seq the caller has had, pushed or yielded."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq


class LiveTail:
    """The live events of one audience from here on, for an adapter to take
    as they are published (:meth:`hand_over`), or to leave: the stream then
    yields them, as it does all it does not hand over."""

    __slots__ = ("_at", "_ordinary", "_sub", "audience")

    def __init__(
        self,
        audience: str,
        sub: Subscription,
        at: _Position,
        ordinary: Callable[[LoggedEvent], bool],
    ) -> None:
        self.audience = audience
        self._sub, self._at, self._ordinary = sub, at, ordinary

    async def hand_over(self, take: Take) -> None:
        """Give ``take`` each next event in order that changes nothing in the
        stream itself, as it is published, until one is not such an event,
        ``take`` declines one, or the bus drops the subscription; then
        return, and read the stream on (older copies are skipped)."""
        audience, at, ordinary = self.audience, self._at, self._ordinary

        def offered(msg: BusMessage | Resync) -> bool:
            if isinstance(msg, Resync):
                return False
            if not isinstance(msg, LoggedEvent):
                return True  # not of this channel's kind: skipped
            if msg.seq <= at.seq:
                return True
            if msg.seq == at.seq + 1 and ordinary(msg) and take(audience, msg):
                at.seq = msg.seq
                return True
            return False

        await self._sub.hand_over(offered)


Sent = Heard | LiveTail
"""What a game's stream yields: an event for its audience, or a live tail."""


REPLAY_PAGE = 20
"""Events a replay reads from the log at a time: a short read each (the
embedded SQLite reads on the event loop), as the caller takes them."""


def _backlog(
    deps: Deps, game_id: str, seat: int | None, after: int, upto: int | None = None
) -> AsyncGenerator[LoggedEvent, None]:
    """The log after ``after`` (through ``upto``), a page at a time as the
    caller takes it (:func:`~domain.services.paging.in_pages`)."""

    def read(after: int, size: int) -> list[LoggedEvent]:
        with deps.uow() as uow:
            return uow.events.read(game_id, after, size, seat)

    return in_pages(deps, read, after, REPLAY_PAGE, upto)


@overload
def game_events(
    deps: Deps,
    game_id: str,
    player_id: str | None,
    after_seq: int,
    await_rematch: bool = False,
    live_tails: Literal[False] = False,
) -> AsyncGenerator[Heard, None]: ...


@overload
def game_events(
    deps: Deps,
    game_id: str,
    player_id: str | None,
    after_seq: int,
    await_rematch: bool = False,
    *,
    live_tails: bool,
) -> AsyncGenerator[Sent, None]: ...


async def game_events(
    deps: Deps,
    game_id: str,
    player_id: str | None,
    after_seq: int,
    await_rematch: bool = False,
    live_tails: bool = False,
) -> AsyncGenerator[Sent, None]:
    """The caller's stream: a seat's own channel, or the public one (R11).

    Seats change in the lobby only (``SeatTaken`` / ``SeatLeft``): after such
    an event about the caller, their seat is looked up again and the stream
    moves to the new audience's channel, so a player who left a seat never
    gets its next occupant's projections, and one who took a seat gets it.
    A private game's stream ends with ``NOT_FOUND`` for a player who may no
    longer see it: they left their lobby seat, or their invitation ended
    (docs/decisions/0062).

    The stream ends once it has yielded the game's ``GameEnded`` (the last
    event of a game), on every transport: a subscription to a finished game
    replays the tail after ``after_seq`` and ends; at its very end, it ends
    at once. The tail of a finished game runs through its last event: a
    ``RematchOffered`` logged after ``GameEnded`` (docs/decisions/0048).
    With ``await_rematch``, a finished game's stream that has had no offer
    yet stays open for it: it ends with the ``RematchOffered``, or
    ``deps.rematch_wait`` after the game ended. An abandoned game ends with
    its ``GameEnded`` too, and has no rematch to wait for (0051).

    With ``live_tails``, a :class:`LiveTail` comes before each wait for a
    live event (module docstring)."""

    def first_look() -> tuple[int | None, int | None, datetime | None]:
        """The caller's seat; the last seq of a finished game (else None);
        until when a finished game's stream waits for its offer (None: no)."""
        with deps.uow() as uow:
            game = load_seen(uow, game_id, player_id)
            if after_seq > game.last_seq:
                raise BadRequest(
                    f"afterSeq {after_seq} is past the game's last seq {game.last_seq}"
                )
            if not game.status.over:
                return game.seat_of(player_id), None, None
            until = game.updated_at + deps.rematch_wait
            waits = (
                await_rematch
                and game.status is GameStatus.FINISHED  # no rematch of an abandoned game
                and game.rematch_id is None
                and deps.clock.now() < until
            )
            return game.seat_of(player_id), game.last_seq, until if waits else None

    seat, ended_at, offer_until = await deps.run(first_look)
    at = _Position(after_seq)
    if ended_at is not None and at.seq >= ended_at and offer_until is None:
        return
    # A live subscription of a player is their presence (docs/decisions/0047).
    events = _game_events(deps, game_id, player_id, seat, ended_at, at, live_tails)
    async with seat_presence.attending(deps, game_id, player_id), aclosing(events):
        async for heard in events:
            yield heard
            if isinstance(heard, LiveTail):
                continue
            end = heard[1].event
            if isinstance(end, GameEnded) and await_rematch and ended_at is None:
                # an abandoned game has no rematch to wait for
                offer_until = None if is_abandonment(end) else heard[1].at + deps.rematch_wait
        if offer_until is not None:
            seat = await deps.run(lambda: _seat_now(deps, game_id, player_id))
            offer = _rematch_offer(deps, game_id, seat, at, offer_until)
            async with aclosing(offer):
                async for heard in offer:
                    yield heard


async def _rematch_offer(
    deps: Deps, game_id: str, seat: int | None, at: _Position, until: datetime
) -> AsyncGenerator[Heard, None]:
    """After the end: what the log gets after ``at`` (a ``RematchOffered``,
    the last event a game can get), if it comes before ``until``."""
    audience = game_channel(game_id, seat)
    async with deps.bus.subscribe(audience) as sub:
        live = aiter(sub)
        while True:
            async with aclosing(_backlog(deps, game_id, seat, at.seq)) as backlog:
                async for e in backlog:
                    at.seq = e.seq
                    yield audience, e
                    if isinstance(e.event, RematchOffered):
                        return
            left = (until - deps.clock.now()).total_seconds()
            if left <= 0:
                return
            try:
                async with asyncio.timeout(left):
                    await anext(live)  # anything new (or a resync): read the log again
            except TimeoutError:
                return


def _seat_now(deps: Deps, game_id: str, player_id: str | None) -> int | None:
    with deps.uow() as uow:
        return seat_in(uow, game_id, player_id)


async def _game_events(
    deps: Deps,
    game_id: str,
    player_id: str | None,
    seat: int | None,
    ended_at: int | None,
    at: _Position,
    live_tails: bool,
) -> AsyncGenerator[Sent, None]:
    def ordinary(e: LoggedEvent) -> bool:
        """A live tail may hand it over: it changes nothing in the stream."""
        return not (
            isinstance(e.event, GameEnded)
            or (player_id is not None and _seat_change_of(e, player_id))
        )

    if ended_at is not None and at.seq >= ended_at:
        return
    while True:
        moved = False
        events = _audience_events(
            deps, game_id, seat, at, ordinary if live_tails and ended_at is None else None
        )
        async with aclosing(events):
            async for heard in events:
                yield heard
                if isinstance(heard, LiveTail):
                    continue
                e = heard[1]
                if (isinstance(e.event, GameEnded) and ended_at is None) or (
                    ended_at is not None and e.seq >= ended_at
                ):
                    return
                if player_id is not None and _seat_change_of(e, player_id):
                    now = await deps.run(lambda: _seat_now(deps, game_id, player_id))
                    if now != seat:
                        seat, moved = now, True
                        break
        if not moved:
            return


def _seat_change_of(e: LoggedEvent, player_id: str) -> bool:
    """A seat taken or left by the player, or their invitation ended: their
    seat (and, in a private game, whether they may see it) is read again."""
    return isinstance(e.event, WHO_CHANGES) and e.event.player_id == player_id


WHO_CHANGES = (*SEAT_CHANGES, InvitationDeclined, InvitationCancelled)


async def _audience_events(
    deps: Deps,
    game_id: str,
    seat: int | None,
    at: _Position,
    ordinary: Callable[[LoggedEvent], bool] | None,
) -> AsyncGenerator[Sent, None]:
    """One audience's stream: its channel, the backlog first, then live;
    ``at`` follows what the caller has had. With ``ordinary``, a
    :class:`LiveTail` of the events it passes comes before each wait."""
    audience = game_channel(game_id, seat)
    async with deps.bus.subscribe(audience) as sub:
        async with aclosing(_backlog(deps, game_id, seat, at.seq)) as backlog:
            async for e in backlog:
                at.seq = e.seq
                yield audience, e
        live = aiter(sub)
        tail = LiveTail(audience, sub, at, ordinary) if ordinary is not None else None
        while True:
            if tail is not None:
                yield tail
            msg = await anext(live)
            if isinstance(msg, Resync):
                async with aclosing(_backlog(deps, game_id, seat, at.seq)) as backlog:
                    async for e in backlog:
                        at.seq = e.seq
                        yield audience, e
                continue
            if not isinstance(msg, LoggedEvent) or msg.seq <= at.seq:
                continue
            if msg.seq > at.seq + 1:  # a gap: fill it from the log
                async with aclosing(_backlog(deps, game_id, seat, at.seq, msg.seq - 1)) as backlog:
                    async for e in backlog:
                        at.seq = e.seq
                        yield audience, e
            at.seq = msg.seq
            yield audience, msg


async def presence_events(
    deps: Deps, game_id: str, player_id: str | None
) -> AsyncGenerator[PresenceChange, None]:
    """A game's seat presence (docs/decisions/0047): each seated player's
    state now, then every change announced, on any instance (a change may
    repeat a state just given). Public; a live subscription of a player
    here is their presence too. While the presence store cannot be read,
    the seats it could not tell are left out and read again every
    ``STATE_RETRY`` seconds until they are sent."""
    await deps.run(lambda: _exists(deps, game_id, player_id))
    async with (
        deps.bus.subscribe(presence_channel(game_id)) as sub,
        seat_presence.attending(deps, game_id, player_id),
    ):
        live, pending = aiter(sub), True
        while True:
            if pending:
                changes, pending = await _presence_now(deps, game_id)
                for change in changes:
                    yield change
            msg = await _next_within(live, STATE_RETRY if pending else None)
            if isinstance(msg, PresenceChange):
                yield msg
            elif isinstance(msg, Resync):  # changes may be lost: the state again
                pending = True


STATE_RETRY = 2.0
"""Seconds between two reads of a presence state that could not be read."""


async def _next_within(
    live: AsyncIterator[BusMessage | Resync], seconds: float | None
) -> BusMessage | Resync | None:
    """The next message; None if ``seconds`` pass first."""
    if seconds is None:
        return await anext(live)
    try:
        async with asyncio.timeout(seconds):
            return await anext(live)
    except TimeoutError:
        return None


async def _presence_now(deps: Deps, game_id: str) -> tuple[list[PresenceChange], bool]:
    """Each seated player's state now, and whether some could not be read
    (the presence store is away): those are left out."""
    seats = await seat_presence.seated_players(deps, game_id)
    now = await seat_presence.connected_seats(deps, game_id, seats, [None] * len(seats))
    known = [
        PresenceChange(game_id, seat, connected)
        for seat, (player, connected) in enumerate(zip(seats, now, strict=True))
        if player is not None and connected is not None
    ]
    return known, None in now


def _exists(deps: Deps, game_id: str, player_id: str | None) -> None:
    with deps.uow() as uow:
        load_seen(uow, game_id, player_id)


async def lobby_events(deps: Deps) -> AsyncGenerator[LobbyUpdate, None]:
    """Games created, filling, started and finished, for lobby screens."""
    async with deps.bus.subscribe(LOBBY) as sub:
        async for msg in sub:
            if isinstance(msg, LobbyUpdate):
                yield msg
