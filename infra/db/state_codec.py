"""The game state as stored: plain JSON-able data, and back, losslessly (the
RNG state travels with it, R3.5). Decoding checks shapes and raises
:class:`StateDecodeError` on malformed data instead of building a bad game.
"""

from __future__ import annotations

from typing import Any

from domain.game.cards import Card, House
from domain.game.invariants import check
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.state import (
    Decision,
    DecisionKind,
    GameState,
    Message,
    MessageStatus,
    Outcome,
    Phase,
    Play,
    SeatState,
    Termination,
    Trick,
)

FORMAT_VERSION = 1


class StateDecodeError(ValueError):
    """Stored data that is not a valid game state."""


def encode(state: GameState) -> dict[str, Any]:
    """The state as JSON-able data (written out field by field: this runs on
    every move, and generic reflection costs several times more)."""
    o, t, d, out = state.options, state.trick, state.pending, state.outcome
    return {
        "v": FORMAT_VERSION,
        "options": {
            "format": o.format.value,
            "ability_trigger": o.ability_trigger.value,
            "refill_hands": o.refill_hands,
        },
        "seats": [
            {
                "house": s.house.value if s.house else None,
                "identity": s.identity,
                "hand": list(s.hand),
                "won": list(s.won),
                "prizes": list(s.prizes),
            }
            for s in state.seats
        ],
        "rat": state.rat,
        "rat_deck": list(state.rat_deck),
        "prize_pool": list(state.prize_pool),
        "discard": list(state.discard),
        "box": list(state.box),
        "trick": None
        if t is None
        else {
            "number": t.number,
            "prize": t.prize,
            "leader": t.leader,
            "plays": [
                {"seat": p.seat, "card": p.card, "face_down": p.face_down, "second": p.second}
                for p in t.plays
            ],
            "passes": list(t.passes),
            "skipped": list(t.skipped),
            "offset": t.offset,
            "sleepy": t.sleepy,
            "sassy": t.sassy,
        },
        "phase": state.phase.value,
        "turn": state.turn,
        "rng": state.rng,
        "deck_size": state.deck_size,
        "pending": None
        if d is None
        else {"kind": d.kind.value, "seat": d.seat, "source": d.source, "cards": list(d.cards)},
        "messages": [
            {
                "id": m.id,
                "trick": m.trick,
                "sender": m.sender,
                "recipient": m.recipient,
                "text": m.text,
                "status": m.status.value,
            }
            for m in state.messages
        ],
        "message_counter": state.message_counter,
        "version": state.version,
        "outcome": None
        if out is None
        else {
            "termination": out.termination.value,
            "winners": list(out.winners),
            "disqualified": list(out.disqualified),
            "scores": list(out.scores),
        },
    }


def _card(x: Any) -> Card:
    if not isinstance(x, str):
        raise StateDecodeError("expected a card id")
    return Card(x)


def _cards(x: Any) -> list[Card]:
    if not isinstance(x, list):
        raise StateDecodeError("expected a list of card ids")
    return [_card(i) for i in x]


def _int(x: Any) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise StateDecodeError("expected an integer")
    return x


def _int_list(x: Any) -> list[int]:
    if not isinstance(x, list):
        raise StateDecodeError("expected a list of integers")
    return [_int(i) for i in x]


def _seat(d: dict[str, Any]) -> SeatState:
    return SeatState(
        house=None if d["house"] is None else House(d["house"]),
        identity=_card(d["identity"]),
        hand=_cards(d["hand"]),
        won=_cards(d["won"]),
        prizes=_cards(d["prizes"]),
    )


def _play(d: dict[str, Any]) -> Play:
    second = d["second"]
    return Play(
        _int(d["seat"]),
        _card(d["card"]),
        bool(d["face_down"]),
        None if second is None else _card(second),
    )


def _trick(d: dict[str, Any] | None) -> Trick | None:
    if d is None:
        return None
    return Trick(
        number=_int(d["number"]),
        prize=_card(d["prize"]),
        leader=_int(d["leader"]),
        plays=[_play(p) for p in d["plays"]],
        passes=_int_list(d["passes"]),
        skipped=_int_list(d["skipped"]),
        offset=_int(d["offset"]),
        sleepy=bool(d["sleepy"]),
        sassy=bool(d["sassy"]),
    )


def _decision(d: dict[str, Any] | None) -> Decision | None:
    if d is None:
        return None
    return Decision(DecisionKind(d["kind"]), _int(d["seat"]), _int(d["source"]), _cards(d["cards"]))


def _message(d: dict[str, Any]) -> Message:
    return Message(
        str(d["id"]),
        _int(d["trick"]),
        _int(d["sender"]),
        _int(d["recipient"]),
        str(d["text"]),
        MessageStatus(d["status"]),
    )


def _outcome(d: dict[str, Any] | None) -> Outcome | None:
    if d is None:
        return None
    return Outcome(
        Termination(d["termination"]),
        tuple(_int_list(d["winners"])),
        tuple(_int_list(d["disqualified"])),
        tuple(_int_list(d["scores"])),
    )


def decode(data: Any) -> GameState:
    """Rebuild a state from :func:`encode`'s output; raise on malformed data."""
    try:
        if not isinstance(data, dict) or data.get("v") != FORMAT_VERSION:
            raise StateDecodeError("not a game state of a known format version")
        o = data["options"]
        state = GameState(
            options=GameOptions(
                Format(o["format"]), AbilityTrigger(o["ability_trigger"]), bool(o["refill_hands"])
            ),
            seats=[_seat(s) for s in data["seats"]],
            rat=_int(data["rat"]),
            rat_deck=_cards(data["rat_deck"]),
            prize_pool=_cards(data["prize_pool"]),
            discard=_cards(data["discard"]),
            box=_cards(data["box"]),
            trick=_trick(data["trick"]),
            phase=Phase(data["phase"]),
            turn=_int(data["turn"]),
            rng=_int(data["rng"]),
            deck_size=_int(data["deck_size"]),
            pending=_decision(data["pending"]),
            messages=[_message(m) for m in data["messages"]],
            message_counter=_int(data["message_counter"]),
            version=_int(data["version"]),
            outcome=_outcome(data["outcome"]),
        )
        check(state)
    except StateDecodeError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise StateDecodeError(f"malformed game state: {e}") from e
    return state
