"""Subscriptions: a game's events as the caller may see them, resumable with
``afterSeq`` (no gap, no duplicate, in order); lobby changes."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Annotated

import strawberry

from api.graphql.context import Info
from api.graphql.errors import from_domain, graphql_error
from api.graphql.types.events import GameEvent, LobbyUpdate, typed
from domain.errors import DomainError, ErrorCode
from domain.ports import SubscriptionClosed
from domain.services import streams


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
    ) -> AsyncGenerator[GameEvent, None]:
        if after_seq < 0:
            raise graphql_error(ErrorCode.BAD_INPUT, "afterSeq is 0 or more")
        player = await info.context.player()
        stream = streams.game_events(
            info.context.deps, game_id, player.id if player else None, after_seq
        )
        try:
            frames = info.schema.frames  # type: ignore[attr-defined]
            async for audience, event in stream:
                key = (audience, event.seq)  # the same object for all of the audience
                yield frames.payload(key, lambda e=event, k=key: typed(e, k))
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
