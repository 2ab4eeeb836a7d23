"""Subscriptions: a game's events as the caller may see them, resumable with
``afterSeq`` (no gap, no duplicate, in order); lobby changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from typing import Annotated, TypeVar

import strawberry
from graphql import GraphQLError

from api.fast.frames import SUBSCRIBING
from api.fast.push import OUTLET, Pusher
from api.graphql.context import Info
from api.graphql.errors import from_domain, graphql_error
from api.graphql.rate_limits import who_of
from api.graphql.stream_limits import TARPIT, Pace, gate, replays_dry, slot
from api.graphql.types.events import GameEvent, LobbyUpdate, typed
from api.graphql.types.notifications import Notification
from api.graphql.types.presence import PresenceChanged
from domain.errors import DomainError, ErrorCode
from domain.log import LoggedEvent
from domain.ports import SubscriptionClosed
from domain.services import notifications as notices
from domain.services import streams
from infra.work_meter import METER, Meter, cpu, moved

T = TypeVar("T")
U = TypeVar("U")


def _pushing(meter: Meter | None) -> tuple[Pusher | None, streams.Take | None]:
    """This operation's pusher and what it takes of a stream, when its
    transport can push (a WebSocket: api/fast/push.py); else (None, None). A push
    runs in the publisher's task (or the bus reader's): its time is moved to
    the subscriber's ``meter``."""
    pusher, executor = OUTLET.get(), SUBSCRIBING.get()
    if pusher is None or executor is None:
        return None, None
    send = pusher.send

    def push(audience: str, e: LoggedEvent) -> bool:
        start = cpu()
        try:
            key = (audience, e.seq)
            text = executor.pushed_frame(key, lambda: typed(e, key))
            if text is None:
                return False
            send(text)
            return True
        finally:
            moved(meter, cpu() - start)

    return pusher, push


def dropped(e: SubscriptionClosed) -> GraphQLError:
    """The error ending a stream the bus dropped (a slow subscriber)."""
    return graphql_error(ErrorCode.RATE_LIMITED, f"subscription dropped ({e.reason})")


@strawberry.type(
    description="Live streams. A refusal here is a GraphQL error with `extensions.code` "
    "(a stream has no result union), after which the stream ends."
)
class Subscription:
    @strawberry.subscription(
        description="Events after `afterSeq`: the log first, then "
        "live; your seat's projection, or the public one."
    )
    async def game_events(
        self,
        info: Info,
        game_id: Annotated[strawberry.ID, strawberry.argument(description="The game's id")],
        after_seq: Annotated[
            int,
            strawberry.argument(
                description="The last seq you saw (0: from the first); resume with it"
            ),
        ] = 0,
        await_rematch: Annotated[
            bool,
            strawberry.argument(
                description="After `GameEnded`, stay open for the rematch offer: the stream "
                "then ends with `RematchOffered`, or once `MMK_REMATCH_WAIT` seconds (120 by "
                "default) have passed since the game ended with no offer (`Game.rematchId` "
                "tells of a later one). False: the stream ends with `GameEnded`."
            ),
        ] = False,
    ) -> AsyncGenerator[GameEvent, None]:
        if after_seq < 0:
            raise graphql_error(ErrorCode.BAD_INPUT, "afterSeq is 0 or more")
        context = info.context
        player = await context.player()
        frames = info.schema.frames  # type: ignore[attr-defined]

        def payload(e: LoggedEvent, key: tuple[str, int]) -> GameEvent:
            """The same object for all of the audience."""
            return frames.payload(key, lambda: typed(e, key))  # type: ignore[no-any-return]

        meter, who = METER.get(), who_of(context)
        pace = context.pace(*who)
        wait = pace.dry() if pace is not None else 0.0
        if wait and pace is not None:  # its caller replayed its minute's: refused before
            await asyncio.sleep(min(wait, TARPIT))  # it reads the log, and not at once
            wait = pace.dry()
            if wait:
                raise replays_dry(wait)
        if meter is not None and context.settings.hold_dear_steps:  # wait their turn (0055)
            meter.demotable, meter.hold_after = True, 0.0
            await asyncio.sleep(0)
        with slot(context.slots, *who):
            pusher, push = _pushing(meter)
            stream = streams.game_events(
                context.deps,
                game_id,
                player.id if player else None,
                after_seq,
                await_rematch,
                live_tails=push is not None,
            )
            async for event in _sent(stream, payload, pusher, push, meter, pace):
                yield event

    @strawberry.subscription(
        description="Seat presence (public): first each seated player's state now, then "
        "every change. `connected: false` comes only after the grace period, so a quick "
        "reconnect announces nothing. Not logged, no `seq`: resubscribe to get the state again."
    )
    async def seat_presence(
        self,
        info: Info,
        game_id: Annotated[strawberry.ID, strawberry.argument(description="The game's id")],
    ) -> AsyncGenerator[PresenceChanged, None]:
        context = info.context
        player = await context.player()
        with slot(context.slots, *who_of(context)):
            stream = streams.presence_events(context.deps, game_id, player.id if player else None)
            async for change in _relayed(stream, PresenceChanged.from_domain):
                yield change

    @strawberry.subscription(
        description="Your notifications (issue #25) after `afterSeq`: the stored ones first, "
        "then each as it happens, in any of your games, on any server instance; none missed, "
        "none twice. Resume with the last `seq` you have."
    )
    async def notifications(
        self,
        info: Info,
        after_seq: Annotated[
            int,
            strawberry.argument(description="The last seq you have (0: from the first)"),
        ] = 0,
    ) -> AsyncGenerator[Notification, None]:
        context = info.context
        player = await context.require_player()
        with slot(context.slots, *who_of(context)):
            stream = notices.notification_events(context.deps, player.id, after_seq)
            async for n in _relayed(stream, Notification.from_domain):
                yield n

    @strawberry.subscription(description="Games created, filling, started and finished.")
    async def lobby(self, info: Info) -> AsyncGenerator[LobbyUpdate, None]:
        context = info.context
        await context.player()  # a bad token is refused on every operation
        with slot(context.slots, *who_of(context)):
            stream = streams.lobby_events(context.deps)
            async for update in _relayed(stream, LobbyUpdate.from_domain):
                yield update


async def _relayed(
    stream: AsyncGenerator[T, None], convert: Callable[[T], U]
) -> AsyncGenerator[U, None]:
    """A domain stream's items as the API's objects; a refusal, or the bus
    dropping the subscription, as a coded GraphQL error; the stream closed
    when the client goes."""
    try:
        async for item in stream:
            yield convert(item)
    except DomainError as e:
        raise from_domain(e) from None
    except SubscriptionClosed as e:
        raise dropped(e) from None
    finally:
        await stream.aclose()


REPLAYED = 5.0
"""Seconds after which an event sent is a replay of the log, not live."""

REPLAY_STRIDE = 4
"""Replayed events a stream sends in one step of the loop at most: a replay
then waits its turn between them once dear (docs/decisions/0055)."""


async def _sent(
    stream: AsyncGenerator[streams.Sent, None],
    payload: Callable[[LoggedEvent, tuple[str, int]], GameEvent],
    pusher: Pusher | None,
    push: streams.Take | None,
    meter: Meter | None,
    pace: Pace | None,
) -> AsyncGenerator[GameEvent, None]:
    """The events of a ``gameEvents`` stream the executor is to send: the
    log's, or the live ones the pusher did not take (it drains each live
    tail the stream offers). Each goes at the connection's pace; an event
    replayed from the log (older than :data:`REPLAYED`) only while the
    caller's budgets and its replays a minute have room (a live game is
    charged to its subscriber but never cut: its other operations are
    refused meanwhile)."""
    run = 0  # replayed events since the replay last let the loop go
    try:
        async for sent in stream:  # the log, or what push did not take
            if isinstance(sent, streams.LiveTail):
                if push is not None:
                    await sent.hand_over(push)
                continue
            audience, event = sent
            replayed = (datetime.now(UTC) - event.at).total_seconds() > REPLAYED
            if meter is not None:  # a replay's steps wait their turn once dear (0055)
                meter.demotable = replayed
            await gate(meter, pace, replayed)
            run = run + 1 if replayed else 0
            if run >= REPLAY_STRIDE:  # a page of the log is not sent in one step
                run = 0
                await asyncio.sleep(0)
            if pusher is not None and push is not None:
                if push(audience, event):
                    await pusher.caught_up()
                    continue
                await pusher.flushed()  # what was pushed goes first
            yield payload(event, (audience, event.seq))
        if pusher is not None:
            await pusher.flushed()  # then "complete"
    except Exception as e:
        if pusher is not None:  # the error comes last: what is not written yet is not sent
            pusher.discard()
            await pusher.flushed()
        if isinstance(e, DomainError):
            raise from_domain(e) from None
        if not isinstance(e, SubscriptionClosed):
            raise
        raise graphql_error(
            ErrorCode.RATE_LIMITED,
            f"subscription dropped ({e.reason}); resubscribe with afterSeq = the last seq you got",
        ) from None
    finally:
        await stream.aclose()
