"""Plays one game of Muffin's Magical Kingdom against bots with the Python
``gql`` client, over one WebSocket, from the game's event stream alone:

1. ``createPlayer``: a guest and its token;
2. ``quickPlay``: a seat in a quick-play game whose empty seats bots fill;
3. ``gameEvents`` from ``afterSeq: 0``: every change that leaves the game
   waiting ends with an ``ActionRequired``; when it names this player's seat
   it carries the hand and the choices, and the player answers with the
   mutation the choice names, on the same socket;
4. ``GameEnded``: the result is printed, and the stream completes.

    pip install "gql[websockets]"
    python play.py --url http://127.0.0.1:8000/graphql [--name Ann] [--seats 3]

The last line printed is the result as JSON, after ``result: ``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, Literal, TypedDict, TypeVar, cast

from gql import Client, GraphQLRequest
from gql.client import AsyncClientSession
from gql.transport.exceptions import TransportClosed, TransportConnectionFailed
from gql.transport.websockets import WebsocketsTransport

# ---------------------------------------------------------------- documents
CHANGE = "__typename ... on GameChange { gameId version } ... on Refusal { code message }"
CREATE_PLAYER = """mutation($name: String!) { createPlayer(name: $name) {
  __typename ... on NewPlayer { token player { id name } } ... on Refusal { code message }
} }"""
QUICK_PLAY = f"""mutation($seats: Int!) {{
  quickPlay(seatCount: $seats, fillWithBotsAfter: 0) {{ {CHANGE} }}
}}"""
EVENTS = """subscription($gameId: ID!, $afterSeq: Int!) {
  gameEvents(gameId: $gameId, afterSeq: $afterSeq) {
    __typename seq
    ... on SeatTaken { seat playerId name }
    ... on BotSeated { seat }
    ... on GameStarted { ratSeat hand { id } }
    ... on TrickWon { trick winner scores }
    ... on ActionRequired {
      seat phase
      choices { kind cards { id } discards { id } seats giftCount gifts { to cards { id } } }
    }
    ... on GameEnded { termination winners scores }
  }
}"""
# The mutations a choice names; each takes the game and an idempotency key.
PLAY_CARD = f"""mutation($gameId: ID!, $key: String, $card: ID!) {{
  playCard(gameId: $gameId, idempotencyKey: $key, card: $card) {{ {CHANGE} }}
}}"""
PASS = f"""mutation($gameId: ID!, $key: String) {{
  pass(gameId: $gameId, idempotencyKey: $key) {{ {CHANGE} }}
}}"""
DISCARD_AND_PLAY = f"""mutation($gameId: ID!, $key: String, $discard: ID!, $card: ID!) {{
  discardAndPlay(gameId: $gameId, idempotencyKey: $key, discard: $discard, card: $card) {{
    {CHANGE}
  }}
}}"""
RESOLVE_DECISION = f"""mutation($gameId: ID!, $key: String, $decision: DecisionInput!) {{
  resolveDecision(gameId: $gameId, idempotencyKey: $key, decision: $decision) {{ {CHANGE} }}
}}"""
RECLAIM_SEAT = f"""mutation($gameId: ID!, $key: String) {{
  reclaimSeat(gameId: $gameId, idempotencyKey: $key) {{ {CHANGE} }}
}}"""


# ---------------------------------------------------------------- the shapes selected
class Card(TypedDict):
    id: str


class GiftOption(TypedDict):
    to: int
    cards: list[Card]


class Choice(TypedDict):
    kind: str
    cards: list[Card]
    discards: list[Card]
    seats: list[int]
    giftCount: int
    gifts: list[GiftOption]


class SeatTaken(TypedDict):
    __typename: Literal["SeatTaken"]
    seq: int
    seat: int
    playerId: str
    name: str


class BotSeated(TypedDict):
    __typename: Literal["BotSeated"]
    seq: int
    seat: int


class GameStarted(TypedDict):
    __typename: Literal["GameStarted"]
    seq: int
    ratSeat: int
    hand: list[Card] | None


class TrickWon(TypedDict):
    __typename: Literal["TrickWon"]
    seq: int
    trick: int
    winner: int
    scores: list[int]


class ActionRequired(TypedDict):
    __typename: Literal["ActionRequired"]
    seq: int
    seat: int
    phase: str
    choices: list[Choice] | None  # null but for the seat to act


class GameEnded(TypedDict):
    __typename: Literal["GameEnded"]
    seq: int
    termination: str
    winners: list[int]
    scores: list[int]


class OtherEvent(TypedDict):
    """Any other kind: only ``__typename`` and ``seq`` are selected."""

    __typename: str
    seq: int


Event = SeatTaken | BotSeated | GameStarted | TrickWon | ActionRequired | GameEnded | OtherEvent


T = TypeVar("T")


class Refused(Exception):
    """The server refused a request (a ``Refusal``: code and message)."""


# ---------------------------------------------------------------- requests
async def run(session: AsyncClientSession, document: str, **variables: Any) -> dict[str, Any]:
    """The one root field's result; a ``Refusal`` raises."""
    data = await session.execute(GraphQLRequest(document, variable_values=variables))
    (result,) = data.values()
    if result["__typename"] == "Refusal":
        raise Refused(f"{result['code']}: {result['message']}")
    return cast(dict[str, Any], result)


def _first(items: list[T], what: str) -> T:
    if not items:
        raise ValueError(f"no {what} on offer")
    return items[0]


MESSAGES = {"SEND_MESSAGE", "DELIVER_MESSAGE", "DECLINE_MESSAGE"}
ONE_CARD = {"CRAZY_SECOND_CARD", "HUNGRY_DISCARD", "HUNGRY_TAKE", "NEEDY_GIFT"}


async def answer(session: AsyncClientSession, game_id: str, choices: list[Choice], key: str) -> str:
    """Sends the first move on offer (never a message); what it was."""
    choice = _first([c for c in choices if c["kind"] not in MESSAGES], "move")
    kind, cards = choice["kind"], [c["id"] for c in choice["cards"]]
    game = {"gameId": game_id, "key": key}
    if kind == "PLAY_CARD":
        card = _first(cards, "card")
        await run(session, PLAY_CARD, **game, card=card)
        return f"play {card}"
    if kind == "PASS":
        await run(session, PASS, **game)
        return "pass"
    if kind == "DISCARD_AND_PLAY":
        discard = _first(choice["discards"], "discard")["id"]
        card = _first([c for c in cards if c != discard], "card")
        await run(session, DISCARD_AND_PLAY, **game, discard=discard, card=card)
        return f"discard {discard}, play {card}"
    if kind == "RECLAIM_SEAT":  # a bot took the seat over (turn clocks): take it back
        await run(session, RECLAIM_SEAT, **game)
        return "reclaim the seat"
    decision: dict[str, Any] = {"kind": kind}
    if kind in ONE_CARD:
        decision["card"] = _first(cards, "card")
    elif kind == "NEEDY_NEIGHBOUR":
        decision["seat"] = _first(choice["seats"], "seat")
    elif kind == "CURIOUS_ORDER":
        decision["cards"] = cards
    elif kind == "STINKY_GIFTS":  # a different card to each neighbour
        gifts: list[dict[str, Any]] = []
        used: set[str] = set()
        for option in choice["gifts"][: choice["giftCount"]]:
            card = _first([c["id"] for c in option["cards"] if c["id"] not in used], "gift")
            used.add(card)
            gifts.append({"to": option["to"], "card": card})
        decision["gifts"] = gifts
    else:
        raise ValueError(f"unknown choice {kind}")
    await run(session, RESOLVE_DECISION, **game, decision=decision)
    return f"{kind} {json.dumps({k: v for k, v in decision.items() if k != 'kind'})}"


def transport(ws_url: str, token: str | None) -> WebsocketsTransport:
    """graphql-transport-ws; the token in ``connection_init``."""
    init = {} if token is None else {"authorization": f"Bearer {token}"}
    return WebsocketsTransport(url=ws_url, init_payload=init)


# ---------------------------------------------------------------- the game
class Seat:
    """One player at one game, acting on what its stream says."""

    def __init__(self, player_id: str, game_id: str) -> None:
        self.player_id, self.game_id = player_id, game_id
        self.seat: int | None = None  # known from its SeatTaken
        self.last = 0  # the last seq handled
        self.moves = 0
        self.ended: GameEnded | None = None

    async def handle(self, session: AsyncClientSession, event: Event) -> None:
        if event["__typename"] == "SeatTaken":
            taken = cast(SeatTaken, event)
            mine = taken["playerId"] == self.player_id
            self.seat = taken["seat"] if mine else self.seat
            print(f"seat {taken['seat']}: {taken['name']}{' (you)' if mine else ''}")
        elif event["__typename"] == "BotSeated":
            print(f"seat {cast(BotSeated, event)['seat']}: a bot")
        elif event["__typename"] == "GameStarted":
            started = cast(GameStarted, event)
            hand = len(started["hand"] or [])
            print(f"the game starts; the Rat is seat {started['ratSeat']}; your hand: {hand} cards")
        elif event["__typename"] == "TrickWon":
            won = cast(TrickWon, event)
            scores = " ".join(map(str, won["scores"]))
            print(f"trick {won['trick']} to seat {won['winner']}; scores {scores}")
        elif event["__typename"] == "ActionRequired":
            asked = cast(ActionRequired, event)
            # Only the seat to act gets its choices; everyone else sees nulls.
            if asked["seat"] == self.seat and asked["choices"] is not None:
                key = f"{self.game_id}:{asked['seq']}"  # sent again, the same answer
                said = await answer(session, self.game_id, asked["choices"], key)
                self.moves += 1
                print(f"you ({asked['phase'].lower()}): {said}", flush=True)
        elif event["__typename"] == "GameEnded":
            self.ended = cast(GameEnded, event)


async def follow(ws_url: str, token: str, seat: Seat) -> None:
    """Reads the game's stream to its end, answering on the same socket.
    After a dropped connection it subscribes again after the last event it
    handled (``afterSeq``): an event whose move was lost with the socket
    comes again, and its idempotency key makes a move that had landed a
    replay of its first answer."""
    for attempt in range(4):
        try:
            async with Client(transport=transport(ws_url, token)) as session:
                variables = {"gameId": seat.game_id, "afterSeq": seat.last}
                async for data in session.subscribe(
                    GraphQLRequest(EVENTS, variable_values=variables)
                ):
                    event = cast(Event, data["gameEvents"])  # ends after GameEnded
                    await seat.handle(session, event)
                    seat.last = event["seq"]
                return
        except (TransportClosed, TransportConnectionFailed, OSError) as e:
            if attempt == 3:
                raise
            print(f"connection lost ({e}); resuming after seq {seat.last}", flush=True)
            await asyncio.sleep(0.5 * 2**attempt)


async def play(url: str, name: str, seats: int) -> dict[str, Any]:
    ws_url = "ws" + url.removeprefix("http")  # http -> ws, https -> wss
    async with Client(transport=transport(ws_url, None)) as anonymous:
        made = await run(anonymous, CREATE_PLAYER, name=name)
        token, me = made["token"], made["player"]
    print(f"signed in as {me['name']} ({me['id']})", flush=True)
    async with Client(transport=transport(ws_url, token)) as session:
        game_id = (await run(session, QUICK_PLAY, seats=seats))["gameId"]
    print(f"quick play: game {game_id}, {seats} seats, bots fill the empty ones", flush=True)

    seat = Seat(me["id"], game_id)
    await follow(ws_url, token, seat)
    ended = seat.ended
    if ended is None:
        raise RuntimeError("the stream completed before GameEnded")
    won = seat.seat is not None and seat.seat in ended["winners"]
    print(
        f"game over ({ended['termination']}): winners {', '.join(map(str, ended['winners']))}; "
        f"scores {' '.join(map(str, ended['scores']))}; "
        f"you (seat {seat.seat}) {'won' if won else 'did not win'}"
    )
    return {
        "gameId": game_id,
        "seat": seat.seat,
        "moves": seat.moves,
        "events": ended["seq"],
        "termination": ended["termination"],
        "winners": ended["winners"],
        "scores": ended["scores"],
        "won": won,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Play one game against bots, from the stream.")
    parser.add_argument("--url", default="http://127.0.0.1:8000/graphql")
    parser.add_argument("--name", default="python-example")
    parser.add_argument("--seats", type=int, default=3)
    args = parser.parse_args()
    try:
        result = asyncio.run(play(args.url, args.name, args.seats))
    except Refused as e:
        sys.exit(f"refused: {e}")
    print(f"result: {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    main()
