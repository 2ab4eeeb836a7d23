"""Mutations: every change a client can ask for (docs/clients.md). Each returns its
result or a typed ``Refusal``; game mutations take ``idempotencyKey`` and
``expectedVersion``."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql import game_mutations as moves
from api.graphql import service_ops, webhook_ops
from api.graphql.context import Info
from api.graphql.declared import Key
from api.graphql.inputs import check_key
from api.graphql.types.notifications import NotificationsRead
from api.graphql.types.players import BoosterPack, NewPlayer, NewToken, Player, TokenRevoked
from api.graphql.types.refusal import Refusal
from api.graphql.types.sessions import NewSession, Session, SessionRevoked
from domain.errors import DomainError
from domain.services import boosters, notifications, players, sessions
from domain.services.auth import token_hash
from domain.services.transaction import Request

NewPlayerResult = Annotated[
    NewPlayer | Refusal,
    strawberry.union("CreatePlayerResult", description="The new account, or why not."),
]
RotateTokenResult = Annotated[
    NewToken | Refusal,
    strawberry.union("RotateTokenResult", description="Your new token, or why not."),
]
RevokeTokenResult = Annotated[
    TokenRevoked | Refusal,
    strawberry.union("RevokeTokenResult", description="Signed out, or why not."),
]
LinkIdentityResult = Annotated[
    Player | Refusal,
    strawberry.union("LinkIdentityResult", description="You, now signed in by it, or why not."),
]
UpdateProfileResult = Annotated[
    Player | Refusal,
    strawberry.union("UpdateProfileResult", description="You, renamed, or why not."),
]
CreateSessionResult = Annotated[
    NewSession | Refusal,
    strawberry.union("CreateSessionResult", description="A new token for you, or why not."),
]
MarkNotificationsReadResult = Annotated[
    NotificationsRead | Refusal,
    strawberry.union(
        "MarkNotificationsReadResult", description="The notifications marked read, or why not."
    ),
]
RevokeSessionResult = Annotated[
    SessionRevoked | Refusal,
    strawberry.union("RevokeSessionResult", description="The session ended, or why not."),
]
BoosterResult = Annotated[
    BoosterPack | Refusal,
    strawberry.union("BoosterPackResult", description="The pack opened, or why not."),
]


@strawberry.type(
    description="Changes. Each returns its result or a typed `Refusal`; game mutations take "
    "`idempotencyKey` and `expectedVersion`."
)
class Mutation:
    @strawberry.mutation(description="A guest account; its token is returned once.")
    async def create_player(
        self,
        info: Info,
        name: Annotated[
            str, strawberry.argument(description="1 to 40 printable characters, shown to others")
        ],
        idempotency_key: Key = None,
    ) -> NewPlayerResult:
        await info.context.player()  # a bad token is refused on every operation
        try:
            check_key(idempotency_key)
            new = await players.create_player(info.context.deps, name, idempotency_key)
        except DomainError as e:
            return Refusal.of(e)
        return NewPlayer(player=Player.from_domain(new.player), token=new.token)

    @strawberry.mutation(
        description="A new token for you; the one you sent stops working at once (a lost "
        "device's copy, say), on every server instance: its WebSockets close with 4401, "
        "its HTTP streams end with `UNAUTHENTICATED` (sent over such a socket, you get "
        "this answer first). Reconnect with the new token."
    )
    async def rotate_token(self, info: Info) -> RotateTokenResult:
        player = await info.context.require_player()
        token = info.context.token()
        assert token is not None  # require_player had one
        try:
            new = await players.rotate_token(info.context.deps, player.id, token)
        except DomainError as e:
            return Refusal.of(e)
        finally:
            info.context.forget(token)
        return NewToken(player=Player.from_domain(player), token=new)

    @strawberry.mutation(
        description="Sign out: the token you sent stops working at once, on every server "
        "instance: its WebSockets close with 4401, its HTTP streams end with "
        "`UNAUTHENTICATED`. Your other sessions go on; with none (and no identity linked), "
        "the account is out of reach for good."
    )
    async def revoke_token(self, info: Info) -> RevokeTokenResult:
        player = await info.context.require_player()
        token = info.context.token()
        assert token is not None  # require_player had one
        try:
            await players.revoke_token(info.context.deps, player.id, token)
        except DomainError as e:
            return Refusal.of(e)
        finally:
            info.context.forget(token)
        return TokenRevoked(player=Player.from_domain(player))

    @strawberry.mutation(
        description="Another token for you, on another device (pair a TV, say): a session of "
        "its own, listed in `me.sessions`; your other tokens go on (beyond 20, the least "
        "recently used ends, never yours). Sent with an MMK token: a provider's JWT is "
        "`BAD_INPUT` (sign in with it on the other device too)."
    )
    async def create_session(
        self,
        info: Info,
        label: Annotated[
            str | None,
            strawberry.argument(
                description='Up to 60 printable characters to tell it apart ("Anna\'s phone")'
            ),
        ] = None,
    ) -> CreateSessionResult:
        player = await info.context.require_player()
        try:
            new = await sessions.create_session(
                info.context.deps, player.id, label, info.context.token()
            )
        except DomainError as e:
            return Refusal.of(e)
        return NewSession(session=Session.from_domain(new.session, None), token=new.token)

    @strawberry.mutation(
        description="End one of your sessions (`me.sessions`): its token stops working at "
        "once, on every server instance (its WebSockets close with 4401, its HTTP streams end "
        "with `UNAUTHENTICATED`). Yours, or `NOT_FOUND`."
    )
    async def revoke_session(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The session's id")],
    ) -> RevokeSessionResult:
        player = await info.context.require_player()
        token = info.context.token()
        try:
            digest = await sessions.revoke_session(info.context.deps, player.id, str(id))
        except DomainError as e:
            return Refusal.of(e)
        if token is not None and token_hash(token) == digest:
            info.context.forget(token)  # the caller's own: not for the rest of this request
        return SessionRevoked(session_id=id)

    @strawberry.mutation(
        description="Sign in with your app's accounts from now on, keeping this player (its id, "
        "collection and games): `token` is a JWT of the identity provider the server trusts "
        "(docs/sign-in.md). An identity that already signs in another player is `CONFLICT`; "
        "your MMK token keeps working."
    )
    async def link_identity(
        self,
        info: Info,
        token: Annotated[
            str, strawberry.argument(description="A current JWT of your identity provider")
        ],
    ) -> LinkIdentityResult:
        player = await info.context.require_player()
        try:
            linked = await players.link_identity(info.context.deps, player.id, token)
        except DomainError as e:
            return Refusal.of(e)
        return Player.from_domain(linked)

    @strawberry.mutation(
        description="Change your display name (1 to 40 printable characters); other players "
        "see it from their next read (an instance may serve the old one for a few seconds)."
    )
    async def update_profile(
        self,
        info: Info,
        name: Annotated[str, strawberry.argument(description="Your new display name")],
    ) -> UpdateProfileResult:
        player = await info.context.require_player()
        try:
            renamed = await players.update_profile(info.context.deps, player.id, name)
        except DomainError as e:
            return Refusal.of(e)
        return Player.from_domain(renamed)

    issue_player_token = service_ops.ISSUE_PLAYER_TOKEN
    create_webhook_endpoint = webhook_ops.CREATE_WEBHOOK_ENDPOINT
    update_webhook_endpoint = webhook_ops.UPDATE_WEBHOOK_ENDPOINT
    set_webhook_endpoint_enabled = webhook_ops.SET_WEBHOOK_ENDPOINT_ENABLED
    rotate_webhook_secret = webhook_ops.ROTATE_WEBHOOK_SECRET
    delete_webhook_endpoint = webhook_ops.DELETE_WEBHOOK_ENDPOINT
    replay_webhook_message = webhook_ops.REPLAY_WEBHOOK_MESSAGE
    replay_failed_webhook_messages = webhook_ops.REPLAY_FAILED_WEBHOOK_MESSAGES
    update_notification_settings = webhook_ops.UPDATE_NOTIFICATION_SETTINGS
    create_game = moves.create_game
    join_game = moves.join_game
    leave_game = moves.leave_game
    reclaim_seat = moves.reclaim_seat
    add_bot = moves.add_bot
    start_game = moves.start_game
    quick_play = moves.quick_play
    rematch = moves.rematch
    join_by_invite_code = moves.join_by_invite_code
    accept_invitation = moves.accept_invitation
    decline_invitation = moves.decline_invitation
    invite_players = moves.invite_players
    cancel_invitation = moves.cancel_invitation
    rotate_invite_code = moves.rotate_invite_code
    clear_invite_code = moves.clear_invite_code
    send_message = moves.send_message
    deliver_message = moves.deliver_message
    decline_message = moves.decline_message
    play_card = moves.play_card
    pass_ = moves.pass_
    discard_and_play = moves.discard_and_play
    resolve_decision = moves.resolve_decision

    @strawberry.mutation(
        description="Mark your notifications up to `upToSeq` read (`me.notifications`: "
        "`unreadOnly` leaves them out)."
    )
    async def mark_notifications_read(
        self,
        info: Info,
        up_to_seq: Annotated[
            int, strawberry.argument(description="Through this seq (`lastSeq` of a page)")
        ],
    ) -> MarkNotificationsReadResult:
        player = await info.context.require_player()
        try:
            marked = await notifications.mark_read(info.context.deps, player.id, up_to_seq)
        except DomainError as e:
            return Refusal.of(e)
        return NotificationsRead(up_to_seq=up_to_seq, marked=marked)

    @strawberry.mutation(description="R1.6: open a booster pack into your collection.")
    async def open_booster_pack(self, info: Info, idempotency_key: Key = None) -> BoosterResult:
        player = await info.context.require_player()
        try:
            check_key(idempotency_key)
            record = await boosters.open_booster_pack(
                info.context.deps, Request(player.id, "openBoosterPack", {}, idempotency_key)
            )
        except DomainError as e:
            return Refusal.of(e)
        return BoosterPack.from_domain(record)
