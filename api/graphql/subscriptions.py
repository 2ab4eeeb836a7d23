"""Subscriptions: a game's events as the caller may see them, resumable with
``afterSeq`` (no gap, no duplicate, in order); lobby changes."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry

from api.graphql.context import Info
from api.graphql.errors import from_domain, graphql_error
from api.graphql.types.events import GameEvent, LobbyUpdate
from domain.errors import DomainError, ErrorCode
from domain.ports import SubscriptionClosed
from domain.services import streams


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="Events after ``afterSeq``: the log first, then "
        "live; your seat's projection, or the public one."
    )
    async def game_events(
        self, info: Info, game_id: strawberry.ID, after_seq: int = 0
    ) -> AsyncGenerator[GameEvent, None]:
        if after_seq < 0:
            raise graphql_error(ErrorCode.BAD_INPUT, "afterSeq is 0 or more")
        player = await info.context.player()
        stream = streams.game_events(
            info.context.deps, game_id, player.id if player else None, after_seq
        )
        try:
            async for audience, event in stream:
                yield GameEvent.from_domain(event, audience)
        except DomainError as e:
            raise from_domain(e) from None
        except SubscriptionClosed as e:
            raise graphql_error(
                ErrorCode.RATE_LIMITED,
                f"subscription dropped ({e.reason}); resubscribe with "
                "afterSeq = the last seq you got",
            ) from None
        finally:
            await stream.aclose()

    @strawberry.subscription(description="Games created, filling, started and finished.")
    async def lobby(self, info: Info) -> AsyncGenerator[LobbyUpdate, None]:
        await info.context.player()  # a bad token is refused on every operation
        stream = streams.lobby_events(info.context.deps)
        try:
            async for update in stream:
                yield LobbyUpdate.from_domain(update)
        except SubscriptionClosed as e:
            raise graphql_error(
                ErrorCode.RATE_LIMITED, f"subscription dropped ({e.reason})"
            ) from None
        finally:
            await stream.aclose()
