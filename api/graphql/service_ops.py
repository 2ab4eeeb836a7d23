"""The operations of the app's backend (issue #24): called with a service
key, each checked against the key's scopes; a player's token is
``FORBIDDEN`` here, as a service key is ``UNAUTHENTICATED`` everywhere else."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql.context import Info
from api.graphql.inputs import check_key
from api.graphql.types.my_games import MyGameConnection, MyGamesFilter, games_page
from api.graphql.types.players import Player
from api.graphql.types.refusal import Refusal
from api.graphql.types.sessions import Session
from domain.errors import DomainError
from domain.services import service_keys
from domain.services.queries import MAX_PAGE

ExternalId = Annotated[
    str,
    strawberry.argument(description="Your app's id for its user: 1 to 200 printable characters"),
]


@strawberry.type(
    description="A token for your app's user (`issuePlayerToken`): hand it to the user's "
    "device. No cache key: an answer, not an object."
)
class IssuedPlayerToken:
    player: Player = strawberry.field(description="The user's player, the same every time")
    token: str = strawberry.field(
        description="Send as `Authorization: Bearer <token>` from the user's device; shown only "
        "here"
    )
    session: Session = strawberry.field(description="The token's session (`me.sessions`)")
    created: bool = strawberry.field(
        description="The player was made by this call (a repeat with its key: by the first)"
    )


IssuePlayerTokenResult = Annotated[
    IssuedPlayerToken | Refusal,
    strawberry.union("IssuePlayerTokenResult", description="The token, or why not."),
]
PlayerGamesResult = Annotated[
    MyGameConnection | Refusal,
    strawberry.union("PlayerGamesResult", description="A page of the player's games, or why not."),
]
PlayerResult = Annotated[
    Player | Refusal,
    strawberry.union("PlayerByExternalIdResult", description="The player, or why not."),
]


async def issue_player_token(
    info: Info,
    external_id: ExternalId,
    name: Annotated[
        str,
        strawberry.argument(
            description="The name of a player made by this call (1 to 40 printable characters); "
            "an existing player keeps its own"
        ),
    ],
    label: Annotated[
        str | None,
        strawberry.argument(description="The session's label (up to 60 characters)"),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        strawberry.argument(
            description="At least 16 characters (a UUID): a retry with it within the replay "
            "window (24 hours by default) returns the same token and opens no session"
        ),
    ] = None,
) -> IssuePlayerTokenResult:
    await info.context.service("players:write")
    try:
        check_key(idempotency_key)
        issued = await service_keys.issue_player_token(
            info.context.deps, external_id, name, label, idempotency_key
        )
    except DomainError as e:
        return Refusal.of(e)
    return IssuedPlayerToken(
        player=Player.from_domain(issued.player),
        token=issued.token,
        session=Session.from_domain(issued.session, None),
        created=issued.created,
    )


async def player_games(
    info: Info,
    player_id: Annotated[strawberry.ID, strawberry.argument(description="The player's id")],
    filter: Annotated[
        MyGamesFilter | None, strawberry.argument(description="Which games; null: all")
    ] = None,
    first: Annotated[int, strawberry.argument(description=f"Page size, 1 to {MAX_PAGE}")] = 20,
    after: Annotated[
        str | None, strawberry.argument(description="A cursor (`endCursor`): the games after it")
    ] = None,
) -> PlayerGamesResult:
    await info.context.service("games:read")
    try:
        return await games_page(info.context.deps, str(player_id), filter, first, after)
    except DomainError as e:
        return Refusal.of(e)


async def player_by_external_id(info: Info, external_id: ExternalId) -> PlayerResult:
    await info.context.service("players:read")
    try:
        found = await service_keys.player_by_external_id(info.context.deps, external_id)
    except DomainError as e:
        return Refusal.of(e)
    return Player.from_domain(found)


ISSUE_PLAYER_TOKEN = strawberry.mutation(
    resolver=issue_player_token,
    description="Service key, scope `players:write`: a fresh token for your app's user, the "
    "same player for the same `externalId` every time (made on the first call). Each call "
    "opens a session (at most 20 a player: the least recently used ends).",
)
PLAYER_GAMES = strawberry.field(
    resolver=player_games,
    description="Service key, scope `games:read`: a player's games, as `me.games` lists them "
    "to the player (an unknown player has none).",
)
PLAYER_BY_EXTERNAL_ID = strawberry.field(
    resolver=player_by_external_id,
    description="Service key, scope `players:read`: your app's user's player, or `NOT_FOUND`.",
)
