"""A client's policy that plays from its own event stream alone: given the
choices of the ``ActionRequired`` event addressed to its seat (as the
GraphQL API sends them), the mutation to send and its arguments. It plays
the first option of the first choice that moves the game on (never a
message), so a game always ends."""

from __future__ import annotations

from typing import Any

Action = tuple[str, dict[str, Any]]

ACTION_REQUIRED = """... on ActionRequired {
  seat phase hand { id }
  choices { kind mutation cards { id } discards { id } seats giftCount gifts { to cards { id } } }
}"""
"""The typed selection of ``ActionRequired`` a stream-only client needs."""

_MESSAGES = {"SEND_MESSAGE", "DELIVER_MESSAGE", "DECLINE_MESSAGE"}
_ONE_CARD = {"CRAZY_SECOND_CARD", "HUNGRY_DISCARD", "HUNGRY_TAKE", "NEEDY_GIFT"}


def action_for(choices: list[dict[str, Any]]) -> Action:
    """The first move on offer, as (mutation, arguments besides gameId)."""
    choice = next(c for c in choices if c["kind"] not in _MESSAGES)
    kind, cards = choice["kind"], [c["id"] for c in choice["cards"]]
    if kind == "RECLAIM_SEAT":  # a bot took the seat over: take it back (0050)
        return "reclaimSeat", {}
    if kind == "PLAY_CARD":
        return "playCard", {"card": cards[0]}
    if kind == "PASS":
        return "pass", {}
    if kind == "DISCARD_AND_PLAY":
        discard = choice["discards"][0]["id"]
        return "discardAndPlay", {
            "discard": discard,
            "card": next(c for c in cards if c != discard),
        }
    decision: dict[str, Any] = {"kind": kind}
    if kind in _ONE_CARD:
        decision["card"] = cards[0]
    elif kind == "NEEDY_NEIGHBOUR":
        decision["seat"] = choice["seats"][0]
    elif kind == "CURIOUS_ORDER":
        decision["cards"] = cards
    else:  # STINKY_GIFTS: distinct cards, one per neighbour
        gifts, used = [], set()
        for option in choice["gifts"][: choice["giftCount"]]:
            card = next(c["id"] for c in option["cards"] if c["id"] not in used)
            used.add(card)
            gifts.append({"to": option["to"], "card": card})
        decision["gifts"] = gifts
    return "resolveDecision", {"decision": decision}
