"""Domain values as JSON: the one place where events, results, booster
packs and causes get their stored and wire shapes (camelCase keys, enums by
value, cards by id), and are read back.

Events are (un)structured by cattrs from their dataclass fields: a field
marked ``PRIVATE`` (domain/game/events.py) is left out when empty, so a
projection has exactly the keys its audience may see; a ``WHOLE`` field never
leaves the domain; a ``SET_ONLY`` field is left out when unset (older logs
lack it). Reading is strict about what it reads: a missing required key or a
value of the wrong type is an error (``ValueError``, ``TypeError`` or
``KeyError``), never coerced; a key it does not know is ignored (a newer
server may have written it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast, get_args, get_origin

from cattrs import Converter
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from domain.errors import ErrorCode
from domain.event_kinds import EVENT_KINDS
from domain.game.boosters import BoosterPack
from domain.game.cards import Card
from domain.game.choice import Choice
from domain.game.events import Event
from domain.log import Cause, GameStart, LoggedEvent, SeatCommand
from domain.notifications import NOTICE_KINDS, Notice, Notification
from domain.presence import PresenceChange
from domain.records import (
    BoosterRecord,
    GameStatus,
    LobbyUpdate,
    MutationResult,
    Refused,
    Remembered,
    SealedToken,
)
from infra.db.command_codec import command_from_dict, command_to_dict

Json = dict[str, Any]
T = TypeVar("T")


def camel(name: str) -> str:
    """A field's JSON key, as its GraphQL name: ``rat_deck_size`` is ``ratDeckSize``."""
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


WRITTEN_BEFORE: dict[str, dict[str, str]] = {
    "GameCreated": {"host": "hostId", "ratSeat": "chosenRatSeat"},
    "GameStarted": {"rat": "ratSeat"},
    **{
        kind: {"id": "messageId", "from": "fromSeat", "to": "toSeat"}
        for kind in ("MessageSent", "MessageDelivered", "MessageDeclined", "MessageExpired")
    },
    "CardGiven": {"from": "fromSeat", "to": "toSeat"},
}
"""The keys of fields whose name changed on 2026-12-06 (issue #23: one name
from the dataclass to the wire), as logs, kept results and exports written
before hold them: read, never written (a won play's ``second`` too). A
migration (0008) rewrites the stored rows; this serves an instance of the
version before during a rolling upgrade, and older exports."""


def _upgraded(kind: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` with the keys :data:`WRITTEN_BEFORE` names under their names now."""
    renames = WRITTEN_BEFORE.get(kind)
    if renames is not None and not any(new in data for new in renames.values()):
        data = {renames.get(k, k): v for k, v in data.items()}
    plays = data.get("plays") if kind == "TrickWon" else None
    if isinstance(plays, list) and any(isinstance(p, Mapping) and "second" in p for p in plays):
        data = {**data, "plays": [_second_card(p) for p in plays]}
    return data


def _strict(kind: type[T]) -> Callable[[Any, type], T]:
    def structure(value: Any, _: type) -> T:
        if type(value) is not kind and not (kind is str and isinstance(value, str)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return cast(T, value)

    return structure


def _is_tuple(cls: Any) -> bool:
    return get_origin(cls) is tuple


def _card(value: Any, _: type) -> Card:
    if not isinstance(value, str):
        raise TypeError(f"a card id is a string, not {type(value).__name__}")
    return Card(value)


def _converter() -> Converter:
    conv = Converter(
        unstruct_collection_overrides={tuple: list, Sequence: list}, detailed_validation=False
    )
    for kind in (int, bool, str):
        conv.register_structure_hook(kind, _strict(kind))

    def structure_tuple(value: Any, cls: type) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        item = get_args(cls)[0]
        return tuple(conv.structure(v, item) for v in value)

    conv.register_structure_hook_func(_is_tuple, structure_tuple)
    conv.register_unstructure_hook(Card, lambda card: card)
    conv.register_structure_hook(Card, _card)
    conv.register_unstructure_hook(datetime, datetime.isoformat)
    conv.register_structure_hook(datetime, lambda v, _: datetime.fromisoformat(v))

    def unstructure(cls: type) -> Callable[[Any], Json]:
        return make_dict_unstructure_fn(cls, conv, **_overrides(cls, unstructure=True))

    def structure(cls: type) -> Callable[[Any, type], Any]:
        return make_dict_structure_fn(cls, conv, **_overrides(cls, unstructure=False))

    conv.register_unstructure_hook_factory(dataclasses.is_dataclass, unstructure)
    conv.register_structure_hook_factory(dataclasses.is_dataclass, structure)
    return conv


_SPARSE = (Choice,)
"""Value classes written without their empty (default) fields."""


def _overrides(cls: type, unstructure: bool) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("whole"):
            out[f.name] = override(omit=True)
        elif unstructure:
            omitted = (
                bool(f.metadata.get("private") or f.metadata.get("set_only")) or cls in _SPARSE
            )
            out[f.name] = override(rename=camel(f.name), omit_if_default=omitted)
        else:
            out[f.name] = override(rename=camel(f.name))
    return out


CONVERTER = _converter()


def _prepare(conv: Converter) -> None:
    """cattrs writes each class's functions on first use: write them all now,
    at start-up, not in the middle of a game (the first trick's end)."""
    for kind in (*EVENT_KINDS.values(), BoosterRecord, BoosterPack):
        conv.get_unstructure_hook(kind)
        conv.get_structure_hook(kind)


_prepare(CONVERTER)


def to_json(value: object) -> Json:
    """A domain value (an event or a projection of one, a booster pack or
    record) as its JSON object."""
    data: Json = CONVERTER.unstructure(value)
    return data


def from_json(data: Mapping[str, Any], cls: type[T]) -> T:
    """The ``cls`` that ``data`` is; raises on malformed data."""
    if not isinstance(data, Mapping):
        raise TypeError(f"a {cls.__name__} is a JSON object")
    value: T = CONVERTER.structure(data, cls)
    return value


# ---------------------------------------------------------------- events
def _second_card(play: Any) -> Any:
    if not isinstance(play, Mapping):
        return play
    return {("secondCard" if k == "second" else k): v for k, v in play.items()}


def event_to_json(event: Event) -> Json:
    """An event (or a projection of one) as its JSON object."""
    return to_json(event)


def event_from_json(kind: str, data: Mapping[str, Any]) -> Event:
    """The event of kind ``kind`` that ``data`` is (written now or before:
    :data:`WRITTEN_BEFORE`); raises on malformed data."""
    if isinstance(data, Mapping):
        data = _upgraded(kind, data)
    return from_json(data, EVENT_KINDS[kind])


def logged_to_json(e: LoggedEvent) -> Json:
    """A logged event as a client and the bus see it (no cause)."""
    return {
        "gameId": e.game_id,
        "seq": e.seq,
        "type": e.type,
        "at": e.at.isoformat(),
        "data": event_to_json(e.event),
    }


def logged_from_json(m: Mapping[str, Any]) -> LoggedEvent:
    game_id, seq, at = m["gameId"], m["seq"], m["at"]
    if not (isinstance(game_id, str) and type(seq) is int and isinstance(at, str)):
        raise TypeError("malformed event message")
    return LoggedEvent(
        game_id, seq, datetime.fromisoformat(at), event_from_json(m["type"], m["data"])
    )


# ---------------------------------------------------------------- the bus
def lobby_to_json(u: LobbyUpdate) -> Json:
    return {
        "gameId": u.game_id,
        "status": u.status.value,
        "seatCount": u.seat_count,
        "seatsTaken": u.seats_taken,
        "version": u.version,
    }


def lobby_from_json(m: Mapping[str, Any]) -> LobbyUpdate:
    return LobbyUpdate(
        str(m["gameId"]),
        GameStatus(m["status"]),
        _strict(int)(m["seatCount"], int),
        _strict(int)(m["seatsTaken"], int),
        _strict(int)(m["version"], int),
    )


def presence_to_json(c: PresenceChange) -> Json:
    """Keyed by ``presence`` (the other bus messages have no such key)."""
    return {"presence": {"gameId": c.game_id, "seat": c.seat, "connected": c.connected}}


def presence_from_json(m: Mapping[str, Any]) -> PresenceChange:
    p = m["presence"]
    return PresenceChange(
        _strict(str)(p["gameId"], str),
        _strict(int)(p["seat"], int),
        _strict(bool)(p["connected"], bool),
    )


NOTICES: dict[str, type[Notice]] = {k.__name__: k for k in NOTICE_KINDS}


def notification_to_json(n: Notification) -> Json:
    """Keyed by ``notification`` (the other bus messages have no such key)."""
    return {
        "notification": {
            "playerId": n.player_id,
            "seq": n.seq,
            "at": n.at.isoformat(),
            "kind": type(n.notice).__name__,
            "notice": to_json(n.notice),
        }
    }


def notification_from_json(m: Mapping[str, Any]) -> Notification:
    n = m["notification"]
    notice = from_json(n["notice"], NOTICES[n["kind"]])
    at = datetime.fromisoformat(_strict(str)(n["at"], str))
    return Notification(_strict(str)(n["playerId"], str), _strict(int)(n["seq"], int), at, notice)


BusJson = LoggedEvent | LobbyUpdate | PresenceChange | Notification


def message_to_json(m: BusJson) -> Json:
    if isinstance(m, LoggedEvent):
        return logged_to_json(m)
    if isinstance(m, Notification):
        return notification_to_json(m)
    return presence_to_json(m) if isinstance(m, PresenceChange) else lobby_to_json(m)


def message_from_json(m: Mapping[str, Any]) -> BusJson:
    if "seq" in m:
        return logged_from_json(m)
    if "notification" in m:
        return notification_from_json(m)
    return presence_from_json(m) if "presence" in m else lobby_from_json(m)


# ---------------------------------------------------------------- results
def remembered_to_json(result: Remembered) -> Json:
    """What an idempotency key keeps, as stored."""
    if isinstance(result, MutationResult):
        return {
            "gameId": result.game_id,
            "version": result.version,
            "events": [logged_to_json(e) for e in result.events],
        }
    if isinstance(result, SealedToken):
        return {"sealedToken": result.sealed}
    if isinstance(result, Refused):
        return {"refusal": {"code": result.code.value, "message": result.message}}
    return to_json(result)


def remembered_from_json(data: Mapping[str, Any]) -> Remembered:
    if "events" in data:
        return MutationResult(
            str(data["gameId"]),
            _strict(int)(data["version"], int),
            tuple(logged_from_json(e) for e in data["events"]),
        )
    if "sealedToken" in data:
        return SealedToken(_strict(str)(data["sealedToken"], str))
    if "refusal" in data:
        refusal = data["refusal"]
        return Refused(
            ErrorCode(_strict(str)(refusal["code"], str)),
            _strict(str)(refusal["message"], str),
        )
    return from_json(data, BoosterRecord)


# ---------------------------------------------------------------- causes
def cause_to_json(cause: Cause) -> Json:
    if isinstance(cause, SeatCommand):
        return {"seat": cause.seat, "command": command_to_dict(cause.command)}
    collections = cause.collections
    return {
        "start": {"collections": None if collections is None else [list(c) for c in collections]}
    }


def cause_from_json(data: Mapping[str, Any]) -> Cause:
    if "start" in data:
        collections = data["start"]["collections"]
        if collections is None:
            return GameStart(None)
        return GameStart(tuple(tuple(_card(c, Card) for c in cs) for cs in collections))
    return SeatCommand(_strict(int)(data["seat"], int), command_from_dict(data["command"]))
