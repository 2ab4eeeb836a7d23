"""The schema as SQLModel table classes, kept apart from the domain records.

The repositories run Core statements on the ``Table`` objects below (no ORM
identity map on the hot path); ``infra.db.mappers`` converts rows to records.
``migrations/versions`` writes the same schema out explicitly.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from infra.db.types import UtcDateTime, json_type


def _col(type_: Any, *args: Any, nullable: bool = False, **kw: Any) -> Any:
    """``sa_column`` for a Field: explicit types and nullability."""
    return Field(sa_column=sa.Column(type_, *args, nullable=nullable, **kw))


class PlayerRow(SQLModel, table=True):
    __tablename__ = "players"

    id: str = _col(sa.String(), primary_key=True)
    name: str = _col(sa.String())
    created_at: datetime = _col(UtcDateTime())
    # HMAC(server secret, createPlayer's idempotency key): how a repeat finds
    # its player, for good (docs/decisions/0041); null without a key.
    key_digest: str | None = _col(sa.String(), nullable=True)

    __table_args__ = (sa.Index("ix_players_key_digest", "key_digest", unique=True),)


class NoticeCounterRow(SQLModel, table=True):
    """The seq of a player's last notification (migration 0014, issue #25):
    the next ones are taken by adding to it at the commit, the row locked to
    the end of the transaction (its own table: no lock of ``players``)."""

    __tablename__ = "notice_counters"

    player_id: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_notice_counters_player"), primary_key=True
    )
    last_seq: int = _col(sa.Integer())


class NotificationRow(SQLModel, table=True):
    """A player's notification (migration 0014, issue #25): its seq (1, 2,
    3... per player), its kind and its fields as JSON; unread: ``read_at``
    null."""

    __tablename__ = "notifications"

    player_id: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_notifications_player"), primary_key=True
    )
    seq: int = _col(sa.Integer(), primary_key=True, autoincrement=False)
    game_id: str = _col(sa.String())
    kind: str = _col(sa.String(32))
    body: dict[str, Any] = _col(json_type())
    created_at: datetime = _col(UtcDateTime())
    read_at: datetime | None = _col(UtcDateTime(), nullable=True)

    # Partial: a player's unread ones (``unreadOnly``); the read ones by
    # when (the expiry sweep).
    __table_args__ = (
        sa.Index(
            "ix_notifications_unread",
            "player_id",
            "seq",
            sqlite_where=sa.text("read_at IS NULL"),
            postgresql_where=sa.text("read_at IS NULL"),
        ),
        sa.Index(
            "ix_notifications_read_at",
            "read_at",
            sqlite_where=sa.text("read_at IS NOT NULL"),
            postgresql_where=sa.text("read_at IS NOT NULL"),
        ),
    )


class SessionRow(SQLModel, table=True):
    """A player's live MMK token, as its hash (migration 0010, issue #24): a
    player holds several; ending one deletes its row."""

    __tablename__ = "sessions"

    id: str = _col(sa.String(), primary_key=True)
    player_id: str = _col(sa.String(), sa.ForeignKey("players.id", name="fk_sessions_player"))
    token_hash: str = _col(sa.String())
    label: str | None = _col(sa.String(), nullable=True)
    created_at: datetime = _col(UtcDateTime())
    last_used_at: datetime = _col(UtcDateTime())

    __table_args__ = (
        sa.Index("ix_sessions_token_hash", "token_hash", unique=True),
        sa.Index("ix_sessions_player_id", "player_id", "last_used_at"),
    )


class GameRow(SQLModel, table=True):
    __tablename__ = "games"

    id: str = _col(sa.String(), primary_key=True)
    host: str = _col(sa.String(), sa.ForeignKey("players.id", name="fk_games_host"))
    status: str = _col(sa.String(16))
    seat_count: int = _col(sa.Integer())
    options: dict[str, Any] = _col(json_type())
    seed: str = _col(sa.String())
    rat_choice: int | None = _col(sa.Integer(), nullable=True)
    seats: list[Any] = _col(json_type())
    state: dict[str, Any] | None = _col(json_type(nullable=True), nullable=True)
    version: int = _col(sa.Integer())
    last_seq: int = _col(sa.Integer())
    created_at: datetime = _col(UtcDateTime())
    updated_at: datetime = _col(UtcDateTime())
    # A bot must act (derived on save): how any instance finds stalled bots.
    bot_turn: bool = _col(sa.Boolean(), server_default=sa.false())
    # The seed's commitment salt ("" before fair deals) and the practice mark
    # (a host-chosen seed, shown to all): docs/decisions/0040.
    salt: str = _col(sa.String(), server_default="")
    practice: bool = _col(sa.Boolean(), server_default=sa.false())
    # Turn clocks (migration 0005, docs/decisions/0046): when the deadline
    # sweep must look at the game (derived on save; null: never): the
    # running wait's deadline, or its warning before it when one is due
    # first (#25, 0063); and the clocks (banks, timeouts in a row, the wait,
    # seats left, the warning's time); null before the start.
    deadline: datetime | None = _col(UtcDateTime(), nullable=True)
    clock: dict[str, Any] | None = _col(json_type(nullable=True), nullable=True)
    # Quick play and rematch (migration 0006, docs/decisions/0048): the
    # quick-play match key, when the empty seats fill with bots, a finished
    # game's rematch, and the seats kept for a rematch's players.
    quick_play: str | None = _col(sa.String(), nullable=True)
    fill_bots_at: datetime | None = _col(UtcDateTime(), nullable=True)
    rematch_id: str | None = _col(sa.String(), nullable=True)
    reserved: list[Any] | None = _col(json_type(nullable=True), nullable=True)
    # When the game ends as abandoned unless it changes first (migration
    # 0007, docs/decisions/0051; set on every change, null: never).
    abandon_at: datetime | None = _col(UtcDateTime(), nullable=True)
    # Private games and invitations (migration 0013, docs/decisions/0062):
    # who may find it, its invite code (unique; null: none), its pending
    # invitations (also in ``invitations``, for each player's list).
    visibility: str = _col(sa.String(16), server_default="public")
    invite_code: str | None = _col(sa.String(), nullable=True)
    invitations: list[Any] | None = _col(json_type(nullable=True), nullable=True)
    # A rated game (migration 0016, docs/decisions/0065).
    rated: bool = _col(sa.Boolean(), server_default=sa.false())

    # Newest-first paging of the public games, with and without a status
    # filter (partial: unlisted and private games are never listed).
    __table_args__ = (
        sa.CheckConstraint(
            "status IN ('lobby', 'running', 'finished', 'abandoned')", name="ck_games_status"
        ),
        sa.Index(
            "ix_games_public_created_at",
            "created_at",
            "id",
            sqlite_where=sa.text("visibility = 'public'"),
            postgresql_where=sa.text("visibility = 'public'"),
        ),
        sa.Index(
            "ix_games_public_status",
            "status",
            "created_at",
            "id",
            sqlite_where=sa.text("visibility = 'public'"),
            postgresql_where=sa.text("visibility = 'public'"),
        ),
        sa.Index(
            "ix_games_invite_code",
            "invite_code",
            unique=True,
            sqlite_where=sa.text("invite_code IS NOT NULL"),
            postgresql_where=sa.text("invite_code IS NOT NULL"),
        ),
        # Partial: the rated games (``mmk ratings rebuild``).
        sa.Index(
            "ix_games_rated",
            "status",
            sqlite_where=sa.text("rated"),
            postgresql_where=sa.text("rated"),
        ),
        # Partial: only games waiting on a bot are in it (few; stalled-bot sweeps).
        sa.Index(
            "ix_games_bot_turn",
            "updated_at",
            sqlite_where=sa.text("bot_turn"),
            postgresql_where=sa.text("bot_turn"),
        ),
        # Partial: only games with a timed wait are in it (the deadline sweep).
        sa.Index(
            "ix_games_deadline",
            "deadline",
            sqlite_where=sa.text("deadline IS NOT NULL"),
            postgresql_where=sa.text("deadline IS NOT NULL"),
        ),
        # Partial: open quick-play games (oldest first) and due bot fills.
        sa.Index(
            "ix_games_quick_play",
            "quick_play",
            "created_at",
            sqlite_where=sa.text("status = 'lobby' AND quick_play IS NOT NULL"),
            postgresql_where=sa.text("status = 'lobby' AND quick_play IS NOT NULL"),
        ),
        sa.Index(
            "ix_games_fill_bots_at",
            "fill_bots_at",
            sqlite_where=sa.text("fill_bots_at IS NOT NULL"),
            postgresql_where=sa.text("fill_bots_at IS NOT NULL"),
        ),
        # Partial: games that end if left alone (the abandonment sweep), and
        # each host's lobby games (the cap on open games; 0051).
        sa.Index(
            "ix_games_abandon_at",
            "abandon_at",
            sqlite_where=sa.text("abandon_at IS NOT NULL"),
            postgresql_where=sa.text("abandon_at IS NOT NULL"),
        ),
        sa.Index(
            "ix_games_lobby_host",
            "host",
            sqlite_where=sa.text("status = 'lobby'"),
            postgresql_where=sa.text("status = 'lobby'"),
        ),
    )


class GameEventRow(SQLModel, table=True):
    __tablename__ = "game_events"

    game_id: str = _col(
        sa.String(), sa.ForeignKey("games.id", name="fk_game_events_game"), primary_key=True
    )
    seq: int = _col(sa.Integer(), primary_key=True, autoincrement=False)
    type: str = _col(sa.String())
    public: dict[str, Any] = _col(json_type())
    private: dict[str, Any] = _col(json_type())
    created_at: datetime = _col(UtcDateTime())
    cause: dict[str, Any] | None = _col(json_type(), nullable=True)


class IdempotencyKeyRow(SQLModel, table=True):
    __tablename__ = "idempotency_keys"

    player_id: str = _col(
        sa.String(),
        sa.ForeignKey("players.id", name="fk_idempotency_keys_player"),
        primary_key=True,
    )
    key: str = _col(sa.String(), primary_key=True)
    fingerprint: str = _col(sa.String())
    result: dict[str, Any] = _col(json_type())
    created_at: datetime = _col(UtcDateTime())
    expires_at: datetime = _col(UtcDateTime())

    # The expiry sweep (docs/decisions/0041).
    __table_args__ = (sa.Index("ix_idempotency_keys_expires_at", "expires_at"),)


class BoosterPackRow(SQLModel, table=True):
    __tablename__ = "booster_packs"

    id: str = _col(sa.String(), primary_key=True)
    player_id: str = _col(sa.String(), sa.ForeignKey("players.id", name="fk_booster_packs_player"))
    pack: dict[str, Any] = _col(json_type())
    opened_at: datetime = _col(UtcDateTime())
    game_id: str | None = _col(
        sa.String(), sa.ForeignKey("games.id", name="fk_booster_packs_game"), nullable=True
    )

    __table_args__ = (sa.Index("ix_booster_packs_player_id", "player_id", "opened_at"),)


class IdentityRow(SQLModel, table=True):
    """A player's identity at the app's identity provider (migration 0009,
    issue #24): ``iss`` and ``sub`` of its JWTs name exactly one player."""

    __tablename__ = "identities"

    issuer: str = _col(sa.String(), primary_key=True)
    subject: str = _col(sa.String(), primary_key=True)
    player_id: str = _col(sa.String(), sa.ForeignKey("players.id", name="fk_identities_player"))
    created_at: datetime = _col(UtcDateTime())

    __table_args__ = (sa.Index("ix_identities_player_id", "player_id"),)


class GameSeatRow(SQLModel, table=True):
    """A person's seat in a game, as "my games" lists it (migration 0012,
    issue #24): derived from the game each time it is stored
    (domain/my_games.py); ``rank`` orders a player's games in one index."""

    __tablename__ = "game_seats"

    player_id: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_game_seats_player"), primary_key=True
    )
    game_id: str = _col(
        sa.String(), sa.ForeignKey("games.id", name="fk_game_seats_game"), primary_key=True
    )
    seat: int = _col(sa.Integer())
    status: str = _col(sa.String(16))
    your_turn: bool = _col(sa.Boolean())
    deadline: datetime | None = _col(UtcDateTime(), nullable=True)
    rank: str = _col(sa.String(20))
    format: str = _col(sa.String(16))
    seat_count: int = _col(sa.Integer())
    created_at: datetime = _col(UtcDateTime())
    updated_at: datetime = _col(UtcDateTime())
    score: int | None = _col(sa.Integer(), nullable=True)
    place: int | None = _col(sa.Integer(), nullable=True)
    won: bool | None = _col(sa.Boolean(), nullable=True)

    __table_args__ = (
        sa.Index("ix_game_seats_rank", "player_id", "rank", "game_id"),
        sa.Index("ix_game_seats_status_rank", "player_id", "status", "rank", "game_id"),
        sa.Index("ix_game_seats_game_id", "game_id"),
    )


class InvitationRow(SQLModel, table=True):
    """A pending invitation (migration 0013, docs/decisions/0062): a copy of
    the game's, written each time they change, for each player's list
    (``me.invitations``) and each host's count (the cap)."""

    __tablename__ = "invitations"

    game_id: str = _col(
        sa.String(), sa.ForeignKey("games.id", name="fk_invitations_game"), primary_key=True
    )
    player_id: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_invitations_player"), primary_key=True
    )
    invited_by: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_invitations_invited_by")
    )
    created_at: datetime = _col(UtcDateTime())

    __table_args__ = (
        sa.Index("ix_invitations_player", "player_id", "created_at", "game_id"),
        sa.Index("ix_invitations_invited_by", "invited_by"),
    )


class ServiceKeyRow(SQLModel, table=True):
    """A key of the app's backend, as its hash (migration 0011, issue #24):
    its scopes space-separated; revoked: ``revoked_at`` set."""

    __tablename__ = "service_keys"

    id: str = _col(sa.String(), primary_key=True)
    name: str = _col(sa.String())
    key_hash: str = _col(sa.String())
    scopes: str = _col(sa.String())
    created_at: datetime = _col(UtcDateTime())
    revoked_at: datetime | None = _col(UtcDateTime(), nullable=True)

    __table_args__ = (sa.Index("ix_service_keys_key_hash", "key_hash", unique=True),)


class WebhookEndpointRow(SQLModel, table=True):
    """An endpoint of the app's backend (migration 0015, issue #25): its
    kinds as a JSON list; its secrets sealed with the server's key."""

    __tablename__ = "webhook_endpoints"

    id: str = _col(sa.String(), primary_key=True)
    url: str = _col(sa.String())
    kinds: list[str] = _col(json_type())
    description: str = _col(sa.String())
    created_at: datetime = _col(UtcDateTime())
    disabled_at: datetime | None = _col(UtcDateTime(), nullable=True)
    disabled_reason: str | None = _col(sa.String(16), nullable=True)
    secret: str = _col(sa.String())
    previous_secret: str | None = _col(sa.String(), nullable=True)
    previous_until: datetime | None = _col(UtcDateTime(), nullable=True)


class WebhookMessageRow(SQLModel, table=True):
    """A notification on its way to an endpoint (migration 0015): the
    outbox, written with the notification; ``next_at`` is when it is due
    (a lease moves it on), ``tries`` its attempts so far."""

    __tablename__ = "webhook_messages"

    id: str = _col(sa.String(), primary_key=True)
    endpoint_id: str = _col(
        sa.String(), sa.ForeignKey("webhook_endpoints.id", name="fk_webhook_messages_endpoint")
    )
    player_id: str = _col(sa.String())
    seq: int = _col(sa.Integer())
    kind: str = _col(sa.String(32))
    game_id: str = _col(sa.String())
    created_at: datetime = _col(UtcDateTime())
    payload: str = _col(sa.Text())
    status: str = _col(sa.String(10))
    next_at: datetime | None = _col(UtcDateTime(), nullable=True)
    tries: int = _col(sa.Integer())
    retry_from: datetime | None = _col(UtcDateTime(), nullable=True)
    retry_tries: int = _col(sa.Integer())

    # Partial: the pending ones by when due (the deliverers' lease); the
    # endpoint's log newest first; the done ones by age (the sweep).
    __table_args__ = (
        sa.Index(
            "ix_webhook_messages_due",
            "endpoint_id",
            "next_at",
            sqlite_where=sa.text("status = 'PENDING'"),
            postgresql_where=sa.text("status = 'PENDING'"),
        ),
        sa.Index("ix_webhook_messages_log", "endpoint_id", "created_at", "id"),
        sa.Index(
            "ix_webhook_messages_done",
            "created_at",
            sqlite_where=sa.text("status <> 'PENDING'"),
            postgresql_where=sa.text("status <> 'PENDING'"),
        ),
    )


class WebhookAttemptRow(SQLModel, table=True):
    """One try of a message (migration 0015): the delivery log."""

    __tablename__ = "webhook_attempts"

    message_id: str = _col(
        sa.String(),
        sa.ForeignKey("webhook_messages.id", name="fk_webhook_attempts_message"),
        primary_key=True,
    )
    n: int = _col(sa.Integer(), primary_key=True, autoincrement=False)
    at: datetime = _col(UtcDateTime())
    status_code: int | None = _col(sa.Integer(), nullable=True)
    latency_ms: float = _col(sa.Float())
    error: str | None = _col(sa.String(), nullable=True)


class PushSettingsRow(SQLModel, table=True):
    """The kinds a player wants pushed (migration 0015): no row, all."""

    __tablename__ = "push_settings"

    player_id: str = _col(
        sa.String(), sa.ForeignKey("players.id", name="fk_push_settings_player"), primary_key=True
    )
    kinds: list[str] = _col(json_type())


class RatingRow(SQLModel, table=True):
    """A subject's rating in a pool (migration 0016, docs/decisions/0065):
    a player's id, or ``bot:<STRATEGY>``. The leaderboard reads the index
    backwards (mu down, then subject down); games and last_at are in it so
    that its filter reads no row."""

    __tablename__ = "ratings"

    pool: str = _col(sa.String(16), primary_key=True)
    subject: str = _col(sa.String(), primary_key=True)
    mu: float = _col(sa.Float())
    sigma: float = _col(sa.Float())
    games: int = _col(sa.Integer())
    last_at: datetime = _col(UtcDateTime())

    __table_args__ = (
        sa.Index("ix_ratings_board", "pool", "mu", "subject", "games", "last_at"),
        sa.Index("ix_ratings_subject", "subject"),
    )


class ServerSecretRow(SQLModel, table=True):
    """Secrets the server generated for itself (migration 0004): used only
    when no ``MMK_SECRET_KEY`` is set (docs/decisions/0041)."""

    __tablename__ = "server_secrets"

    name: str = _col(sa.String(), primary_key=True)
    value: str = _col(sa.String())


metadata = SQLModel.metadata
players: sa.Table = metadata.tables["players"]
games: sa.Table = metadata.tables["games"]
game_events: sa.Table = metadata.tables["game_events"]
idempotency_keys: sa.Table = metadata.tables["idempotency_keys"]
booster_packs: sa.Table = metadata.tables["booster_packs"]
server_secrets: sa.Table = metadata.tables["server_secrets"]
identities: sa.Table = metadata.tables["identities"]
sessions: sa.Table = metadata.tables["sessions"]
service_keys: sa.Table = metadata.tables["service_keys"]
game_seats: sa.Table = metadata.tables["game_seats"]
invitations: sa.Table = metadata.tables["invitations"]
notifications: sa.Table = metadata.tables["notifications"]
notice_counters: sa.Table = metadata.tables["notice_counters"]
webhook_endpoints: sa.Table = metadata.tables["webhook_endpoints"]
webhook_messages: sa.Table = metadata.tables["webhook_messages"]
webhook_attempts: sa.Table = metadata.tables["webhook_attempts"]
push_settings: sa.Table = metadata.tables["push_settings"]
ratings: sa.Table = metadata.tables["ratings"]
