"""Explicit record <-> row conversions, one pair per table.

A row is the ``dict`` of column values a Core statement takes, or the mapping
a query returns. Reading a malformed row raises :class:`CorruptRow` (never a
half-built record); writing a naive datetime raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from domain.bots.strategy import Strategy
from domain.clocks import TurnClock
from domain.featured import LiveGame, people
from domain.game.boosters import BoosterPack
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.log import ExportedEvent, LoggedEvent
from domain.my_games import SeatEntry
from domain.notifications import Notification
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    GameSummary,
    IdempotencyRecord,
    Invitation,
    Occupant,
    Player,
    ServiceKey,
    SessionRecord,
    Visibility,
)
from domain.services.bot_turn import bot_to_act
from infra import codec
from infra.db.state_codec import StateDecodeError, decode, encode

Row = Mapping[Any, Any]
R = TypeVar("R")


class CorruptRow(ValueError):
    """A stored row that does not map to a valid record."""


def _aware(at: datetime) -> datetime:
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"naive datetime {at!r}: records must carry a time zone")
    return at


def _key(row: Row) -> object:
    for names in (("id",), ("game_id", "seq"), ("player_id", "key")):
        if all(n in row for n in names):
            return tuple(row[n] for n in names) if len(names) > 1 else row[names[0]]
    return None


def _read(table: str, row: Row, build: Callable[[Row], R]) -> R:
    """Run ``build``; any shape error becomes :class:`CorruptRow`."""
    try:
        return build(row)
    except (KeyError, TypeError, ValueError, AttributeError, StateDecodeError) as e:
        raise CorruptRow(f"{table} row {_key(row)!r} is malformed: {e}") from e


# ---------------------------------------------------------------- players
def player_to_row(player: Player, key_digest: str | None = None) -> dict[str, Any]:
    return {
        "id": player.id,
        "name": player.name,
        "created_at": _aware(player.created_at),
        "key_digest": key_digest,
    }


def player_from_row(row: Row) -> Player:
    return _read("players", row, lambda r: Player(r["id"], r["name"], r["created_at"]))


def service_key_to_row(key: ServiceKey, key_hash: str) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "key_hash": key_hash,
        "scopes": " ".join(sorted(key.scopes)),
        "created_at": _aware(key.created_at),
        "revoked_at": None if key.revoked_at is None else _aware(key.revoked_at),
    }


def service_key_from_row(row: Row) -> ServiceKey:
    return _read(
        "service_keys",
        row,
        lambda r: ServiceKey(
            r["id"], r["name"], frozenset(r["scopes"].split()), r["created_at"], r["revoked_at"]
        ),
    )


def session_to_row(session: SessionRecord, token_hash: str) -> dict[str, Any]:
    return {
        "id": session.id,
        "player_id": session.player_id,
        "token_hash": token_hash,
        "label": session.label,
        "created_at": _aware(session.created_at),
        "last_used_at": _aware(session.last_used_at),
    }


def session_from_row(row: Row) -> SessionRecord:
    return _read(
        "sessions",
        row,
        lambda r: SessionRecord(
            r["id"], r["player_id"], r["label"], r["created_at"], r["last_used_at"]
        ),
    )


def session_found(found: Row) -> tuple[Player, SessionRecord, str]:
    """A session's row joined with its player's name and creation time
    (``SESSION_BY_HASH``): the player, the session, its stored hash."""
    player = {"id": found["player_id"], "name": found["player_name"]}
    player["created_at"] = found["player_created_at"]
    return player_from_row(player), session_from_row(found), found["token_hash"]


# ---------------------------------------------------------------- games
_DEFAULT_OPTIONS = GameOptions()
_CLOCK_OPTIONS = ("turn_seconds", "bank_seconds", "timeouts_to_takeover")


def options_to_json(options: GameOptions) -> dict[str, Any]:
    """The options; the time control only when set (older rows have none)."""
    out: dict[str, Any] = {
        "format": options.format.value,
        "ability_trigger": options.ability_trigger.value,
        "refill_hands": options.refill_hands,
    }
    for name in _CLOCK_OPTIONS:
        if (value := getattr(options, name)) != getattr(_DEFAULT_OPTIONS, name):
            out[name] = value
    return out


def _int(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name, getattr(_DEFAULT_OPTIONS, name))
    if type(value) is not int:
        raise TypeError(f"{name} is not an integer")
    return value


def options_from_json(data: Mapping[str, Any]) -> GameOptions:
    refill = data["refill_hands"]
    if not isinstance(refill, bool):
        raise TypeError("refill_hands is not a boolean")
    return GameOptions(
        Format(data["format"]),
        AbilityTrigger(data["ability_trigger"]),
        refill,
        *(_int(data, n) for n in _CLOCK_OPTIONS),
    )


def clock_to_json(clock: TurnClock | None) -> dict[str, Any] | None:
    if clock is None:
        return None
    return {
        "banks": list(clock.banks),
        "timeouts": list(clock.timeouts),
        "left": list(clock.left),
        "waiting": clock.waiting,
        "started": None if clock.started is None else _aware(clock.started).isoformat(),
        "deadline": None if clock.deadline is None else _aware(clock.deadline).isoformat(),
        "warnAt": None if clock.warn_at is None else _aware(clock.warn_at).isoformat(),
    }


def _at(value: Any) -> datetime | None:
    return None if value is None else _aware(datetime.fromisoformat(value))


def clock_from_json(data: Mapping[str, Any] | None) -> TurnClock | None:
    if data is None:
        return None
    waiting = data["waiting"]
    if waiting is not None and type(waiting) is not int:
        raise TypeError("waiting is not a seat")
    return TurnClock(
        tuple(float(b) for b in data["banks"]),
        tuple(int(t) for t in data["timeouts"]),
        tuple(int(s) for s in data["left"]),
        waiting,
        _at(data["started"]),
        _at(data["deadline"]),
        _at(data.get("warnAt")),  # absent from clocks stored before #25
    )


def seat_to_json(seat: Occupant | None) -> dict[str, str] | None:
    if seat is None:
        return None
    out: dict[str, str] = {}
    if seat.player_id is not None:
        out["playerId"] = seat.player_id
    if seat.bot is not None:
        out["bot"] = seat.bot.value
    return out


def seat_from_json(data: Mapping[str, Any] | None) -> Occupant | None:
    if data is None:
        return None
    player_id, bot = data.get("playerId"), data.get("bot")
    if player_id is not None and not isinstance(player_id, str):
        raise TypeError("playerId is not a string")
    return Occupant(player_id, None if bot is None else Strategy(bot))


def game_to_row(game: GameRecord) -> dict[str, Any]:
    return {
        "id": game.id,
        "host": game.host,
        "status": game.status.value,
        "seat_count": game.seat_count,
        "options": options_to_json(game.options),
        "seed": game.seed,
        "rat_choice": game.rat_choice,
        "seats": [seat_to_json(s) for s in game.seats],
        "state": None if game.state is None else encode(game.state),
        "version": game.version,
        "last_seq": game.last_seq,
        "created_at": _aware(game.created_at),
        "updated_at": _aware(game.updated_at),
        "bot_turn": bot_to_act(game) is not None,
        "salt": game.salt,
        "practice": game.practice,
        "deadline": game.due_at,  # the sweep's time: a warning due, then the deadline
        "clock": clock_to_json(game.clock),
        "quick_play": game.quick_play,
        "fill_bots_at": None if game.fill_bots_at is None else _aware(game.fill_bots_at),
        "rematch_id": game.rematch_id,
        "reserved": list(game.reserved) if any(r is not None for r in game.reserved) else None,
        "abandon_at": None if game.abandon_at is None else _aware(game.abandon_at),
        "visibility": game.visibility.value,
        "invite_code": game.invite_code,
        "invitations": [_invitation_to_json(i) for i in game.invitations] or None,
        "rated": game.rated,
    }


def _invitation_to_json(i: Invitation) -> dict[str, Any]:
    return {"player": i.player_id, "by": i.invited_by, "at": _aware(i.at).isoformat()}


def _invitations(data: Any) -> list[Invitation]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError("invitations is not a list")
    return [Invitation(d["player"], d["by"], datetime.fromisoformat(d["at"])) for d in data]


def invitation_row(game_id: str, i: Invitation) -> dict[str, Any]:
    """An ``invitations`` row: a copy of one of the game's (0062)."""
    return {
        "game_id": game_id,
        "player_id": i.player_id,
        "invited_by": i.invited_by,
        "created_at": _aware(i.at),
    }


def _game(r: Row) -> GameRecord:
    return GameRecord(
        id=r["id"],
        host=r["host"],
        seat_count=r["seat_count"],
        options=options_from_json(r["options"]),
        seed=r["seed"],
        rat_choice=r["rat_choice"],
        seats=[seat_from_json(s) for s in r["seats"]],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        status=GameStatus(r["status"]),
        state=None if r["state"] is None else decode(r["state"]),
        version=r["version"],
        last_seq=r["last_seq"],
        salt=r["salt"],
        practice=r["practice"],
        clock=clock_from_json(r["clock"]),
        quick_play=r["quick_play"],
        fill_bots_at=r["fill_bots_at"],
        rematch_id=r["rematch_id"],
        reserved=_reserved(r["reserved"], r["seat_count"]),
        abandon_at=r["abandon_at"],
        visibility=Visibility(r["visibility"]),
        invite_code=r["invite_code"],
        invitations=_invitations(r["invitations"]),
        rated=r["rated"],
    )


def _reserved(data: Any, seat_count: int) -> list[str | None]:
    if data is None:
        return []
    if len(data) != seat_count or not all(p is None or isinstance(p, str) for p in data):
        raise ValueError("reserved is not one player id or null per seat")
    return list(data)


def game_from_row(row: Row) -> GameRecord:
    return _read("games", row, _game)


def _summary(r: Row) -> GameSummary:
    return GameSummary(
        r["id"],
        r["host"],
        GameStatus(r["status"]),
        r["seat_count"],
        sum(seat_from_json(s) is not None for s in r["seats"]),
        options_from_json(r["options"]),
        r["version"],
        r["created_at"],
        r["practice"],
        Visibility(r["visibility"]),
        r["rated"],
    )


def summary_from_row(row: Row) -> GameSummary:
    """A listing's row: no state is read (SUMMARY_COLUMNS)."""
    return _read("games", row, _summary)


def live_from_row(row: Row) -> LiveGame:
    """A running game's listing row with its ``updated_at``: its people
    seated (not bots) and its last change (domain/featured.py)."""

    def build(r: Row) -> LiveGame:
        seated = people(map(seat_from_json, r["seats"]))
        return LiveGame(_summary(r), seated, r["updated_at"])

    return _read("games", row, build)


SUMMARY_COLUMNS = (
    "id",
    "host",
    "status",
    "seat_count",
    "seats",
    "options",
    "version",
    "created_at",
    "practice",
    "visibility",
    "rated",
)


# ---------------------------------------------------------------- events
def event_to_row(logged: LoggedEvent) -> dict[str, Any]:
    """The event as each audience sees it (R11): the public projection, and
    the projection of each seat that has one of its own."""
    e = logged.event
    return {
        "game_id": logged.game_id,
        "seq": logged.seq,
        "type": logged.type,
        "public": codec.event_to_json(e.seen_by(None)),
        "private": {str(seat): codec.event_to_json(e.seen_by(seat)) for seat in e.private_to()},
        "created_at": _aware(logged.at),
        "cause": None if logged.cause is None else codec.cause_to_json(logged.cause),
    }


def event_from_row(row: Row, seat: int | None, *, causes: bool = True) -> LoggedEvent:
    """The event as ``seat`` (None: a spectator) sees it, and (``causes``)
    its cause."""

    def build(r: Row) -> LoggedEvent:
        private = r["private"]
        if not isinstance(private, dict):
            raise TypeError("private is not an object")
        data: Any = r["public"] if seat is None else private.get(str(seat), r["public"])
        cause = r["cause"] if causes else None
        return LoggedEvent(
            r["game_id"],
            r["seq"],
            r["created_at"],
            codec.event_from_json(r["type"], data),
            None if cause is None else codec.cause_from_json(cause),
        )

    return _read("game_events", row, build)


def audiences_from_row(row: Row, seat_count: int, *, causes: bool) -> ExportedEvent:
    """The event as the public and each seat saw it, from one row: the
    public projection decoded once, a seat's own only where it has one."""

    def build(r: Row) -> ExportedEvent:
        private = r["private"]
        if not isinstance(private, dict):
            raise TypeError("private is not an object")
        kind = r["type"]
        public = codec.event_from_json(kind, r["public"])
        seats = tuple(
            public if (own := private.get(str(s))) is None else codec.event_from_json(kind, own)
            for s in range(seat_count)
        )
        cause = r["cause"] if causes else None
        return ExportedEvent(
            r["seq"],
            r["created_at"],
            public,
            seats,
            None if cause is None else codec.cause_from_json(cause),
        )

    return _read("game_events", row, build)


# ---------------------------------------------------------------- idempotency
def idempotency_to_row(record: IdempotencyRecord) -> dict[str, Any]:
    return {
        "player_id": record.player_id,
        "key": record.key,
        "fingerprint": record.fingerprint,
        "result": codec.remembered_to_json(record.result),
        "created_at": _aware(record.created_at),
        "expires_at": _aware(record.expires_at),
    }


def idempotency_from_row(row: Row) -> IdempotencyRecord:
    return _read(
        "idempotency_keys",
        row,
        lambda r: IdempotencyRecord(
            r["player_id"],
            r["key"],
            r["fingerprint"],
            codec.remembered_from_json(r["result"]),
            r["created_at"],
            r["expires_at"],
        ),
    )


# ---------------------------------------------------------------- boosters
def booster_to_row(record: BoosterRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "player_id": record.player_id,
        "pack": codec.to_json(record.pack),
        "opened_at": _aware(record.opened_at),
        "game_id": record.game_id,
    }


def booster_from_row(row: Row) -> BoosterRecord:
    return _read(
        "booster_packs",
        row,
        lambda r: BoosterRecord(
            r["id"],
            r["player_id"],
            codec.from_json(r["pack"], BoosterPack),
            r["opened_at"],
            r["game_id"],
        ),
    )


# ---------------------------------------------------------------- my games
def entry_row(e: SeatEntry) -> dict[str, Any]:
    """A ``game_seats`` row (domain/my_games.py)."""
    return {
        "player_id": e.player_id,
        "game_id": e.game_id,
        "seat": e.seat,
        "status": e.status.value,
        "your_turn": e.your_turn,
        "deadline": None if e.deadline is None else _aware(e.deadline),
        "rank": e.rank,
        "format": e.format,
        "seat_count": e.seat_count,
        "created_at": _aware(e.created_at),
        "updated_at": _aware(e.updated_at),
        "score": e.score,
        "place": e.place,
        "won": e.won,
    }


def _my_game(r: Row) -> tuple[SeatEntry, GameSummary, list[Occupant | None]]:
    entry = SeatEntry(
        r["player_id"],
        r["game_id"],
        r["seat"],
        GameStatus(r["status"]),
        r["your_turn"],
        r["deadline"],
        r["rank"],
        r["format"],
        r["seat_count"],
        r["created_at"],
        r["updated_at"],
        r["score"],
        r["place"],
        r["won"],
    )
    game = {n: r[f"g_{n}"] for n in SUMMARY_COLUMNS}
    seats = [seat_from_json(s) for s in game["seats"]]
    return entry, _summary(game), seats


def my_game_from_row(row: Row) -> tuple[SeatEntry, GameSummary, list[Occupant | None]]:
    """A ``game_seats`` row joined to its game's listing columns."""
    return _read("game_seats", row, _my_game)


def _invited(r: Row) -> tuple[Invitation, GameSummary]:
    invitation = Invitation(r["player_id"], r["invited_by"], r["created_at"])
    return invitation, _summary({n: r[f"g_{n}"] for n in SUMMARY_COLUMNS})


def invited_from_row(row: Row) -> tuple[Invitation, GameSummary]:
    """An ``invitations`` row joined to its game's listing columns."""
    return _read("invitations", row, _invited)


# ---------------------------------------------------------------- notifications
def notification_row(n: Notification) -> dict[str, Any]:
    """A ``notifications`` row (issue #25)."""
    return {
        "player_id": n.player_id,
        "seq": n.seq,
        "game_id": n.notice.game_id,
        "kind": type(n.notice).__name__,
        "body": codec.to_json(n.notice),
        "created_at": _aware(n.at),
        "read_at": None if n.read_at is None else _aware(n.read_at),
    }


def _notification(r: Row) -> Notification:
    notice = codec.from_json(r["body"], codec.NOTICES[r["kind"]])
    return Notification(r["player_id"], r["seq"], r["created_at"], notice, r["read_at"])


def notification_from_row(row: Row) -> Notification:
    return _read("notifications", row, _notification)
