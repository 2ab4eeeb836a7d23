"""The R11 oracle over raw WebSocket frames, shared by the end-to-end tests:
which seq each frame carries, when a card became public (from the public
fields of events), and which secret cards a stream showed too early."""

from __future__ import annotations

import json
import random
from typing import Any

from tests.e2e.wsclient import GraphQLWebSocket

NEVER = 1 << 30  # "never became public"


def play_only(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Any listed action but messenger duties (the tests deliver by hand, or
    let messages expire)."""
    plays = [a for a in actions if a["kind"] not in ("DELIVER_MESSAGE", "DECLINE_MESSAGE")]
    return rng.choice(plays or actions)


def framed(ws: GraphQLWebSocket) -> list[tuple[int, str]]:
    """Every raw frame with the seq of the event it carries (0: none)."""
    out = []
    for raw in ws.raw:
        frame = json.loads(raw)
        seq = 0
        if frame.get("type") in ("next", "data"):
            seq = frame["payload"]["data"]["gameEvents"]["seq"]
        out.append((seq, raw))
    return out


def public_cards(event: dict[str, Any]) -> list[str]:
    """Card ids an event shows everyone (R11: plays face up, tricks won,
    discards), read from the public fields of any seat's projection."""
    d, kind = event["data"], event["type"]
    if kind in ("CardPlayed", "SecondCardPlayed") and not d["faceDown"]:
        return [d["card"]]
    if kind in ("CardDiscarded", "AbilityTriggered"):
        return [d["card"]]
    if kind == "TrickWon":
        return [c for p in d["plays"] for c in (p["card"], p["secondCard"]) if c]
    return []


def public_at(streams: list[list[dict[str, Any]]]) -> dict[str, int]:
    """The first seq at which each card was public, over ``streams``."""
    first: dict[str, int] = {}
    for events in streams:
        for e in events:
            for card in public_cards(e):
                first[card] = min(first.get(card, NEVER), e["seq"])
    return first


def leaks(
    frames: list[tuple[int, str]], secret: set[str], public_from: dict[str, int]
) -> list[tuple[int, str]]:
    """(seq, card) for every secret card in a frame before it was public."""
    found = []
    for seq, raw in frames:
        for card in secret:
            if public_from.get(card, NEVER) > seq and f'"{card}"' in raw:
                found.append((seq, card))
    return found


def first_seq_with(frames: list[tuple[int, str]], text: str) -> int | None:
    return next((seq for seq, raw in frames if text in raw), None)
