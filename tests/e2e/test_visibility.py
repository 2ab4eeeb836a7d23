"""R11 over the wire: what spectators (a player with no seat, and anonymous
connections) and seated people receive on their ``gameEvents`` WebSockets.

The checks run on the RAW frames. The oracle is built independently of the
frames under test: hands and peeks come from each person's own
``game(id){viewer}`` while playing, and the seq at which a card became public
from the public fields of the people's streams (a face-up play, a trick's
result, a discard, a triggered ability).
"""

from __future__ import annotations

import asyncio
import random
import uuid
from contextlib import AsyncExitStack
from typing import Any

import pytest

from tests.e2e.audiences import first_seq_with, framed, leaks, play_only, public_at
from tests.e2e.client import SECRET_PREFIX, Api, Person
from tests.e2e.conftest import Server
from tests.e2e.play import (
    Seen,
    assert_complete,
    assert_quiet,
    autoplay,
    new_game,
    read_until,
    subscribe_events,
    together,
)
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, GraphQLWebSocket, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

RAT = 2  # seats 0, 1 and 2 (the Rat) are people; seat 3 is a bot


async def test_spectators_and_players_see_only_what_r11_allows(server: Server, api: Api) -> None:
    game_id, people = await new_game(
        api, "visibility", 3, ["GREEDY"], ratSeat=RAT, abilityTrigger="EVERY_CARD"
    )
    sam = await api.new_person("visibility-sam")  # a player with no seat
    marker = f"{SECRET_PREFIX}{uuid.uuid4()}"
    texts = {
        "delivered": f"{marker}-delivered",  # 0 -> 1, the Rat delivers
        "declined": f"{marker}-declined",  # 1 -> 0, the Rat declines
        "expired": f"{marker}-expired",  # 0 -> 1, still pending at the lead
        "rat": f"{marker}-rat",  # the Rat's own, 2 -> 0
        "to-bot": f"{marker}-to-bot",  # 1 -> 3 (a bot), the Rat delivers
    }
    seen = {seat: Seen() for seat in range(3)}
    streams: dict[str, list[dict[str, Any]]] = {}
    async with AsyncExitStack() as stack:

        async def connect(protocol: str, who: Person | None, payload: Any = None) -> Any:
            token = who.token if who else None
            return await stack.enter_async_context(
                ws_connection(server.ws_url, protocol, token, payload=payload)
            )

        sockets: dict[str, GraphQLWebSocket] = {
            "seat0": await connect(TRANSPORT_WS, people[0]),
            "seat1": await connect(LEGACY_WS, people[1]),
            "seat2": await connect(TRANSPORT_WS, people[2]),
            "sam-transport": await connect(TRANSPORT_WS, sam),
            "sam-legacy": await connect(LEGACY_WS, sam),
            "anon-transport": await connect(TRANSPORT_WS, None),  # no payload at all
            "anon-legacy": await connect(LEGACY_WS, None, {}),  # an empty payload
        }
        ops = {name: await subscribe_events(ws, game_id) for name, ws in sockets.items()}
        await api.start(people[0], game_id)

        # Trick 1's message window: the Rat (a person) leads, so it stays open.
        await api.send_message(people[0], game_id, 1, texts["delivered"])
        await api.send_message(people[1], game_id, 0, texts["declined"])
        await api.send_message(people[0], game_id, 1, texts["expired"])
        await api.send_message(people[2], game_id, 0, texts["rat"])
        await api.send_message(people[1], game_id, 3, texts["to-bot"])
        recipient = await api.game(game_id, people[1].token)
        readable = {m["text"] for m in recipient["viewer"]["messages"]}
        assert texts["delivered"] not in readable, "a pending message is not the recipient's yet"
        rat_view = (await api.game(game_id, people[2].token))["viewer"]
        ids = {m["text"]: m["messageId"] for m in rat_view["messages"]}
        assert set(texts.values()) <= set(ids), rat_view["messages"]  # the Rat reads them all
        duties = {
            (a["kind"], a["arguments"]["messageId"]): a
            for a in rat_view["legalActions"]
            if a["kind"] in ("DELIVER_MESSAGE", "DECLINE_MESSAGE")
        }
        for key, kind in (
            ("delivered", "DELIVER_MESSAGE"),
            ("declined", "DECLINE_MESSAGE"),
            ("to-bot", "DELIVER_MESSAGE"),
        ):
            await api.act(people[2], game_id, duties[(kind, ids[texts[key]])])

        async def follow(name: str) -> None:
            streams[name] = []
            await read_until(ops[name], streams[name])

        finals = await together(
            *(
                autoplay(api, p, seat, game_id, random.Random(seat), seen[seat], play_only)
                for seat, p in enumerate(people)
            ),
            *(follow(name) for name in ops),
        )
        await asyncio.gather(*(assert_quiet(op) for op in ops.values()))
        assert not any(op.errors for op in ops.values())
        # A spectator arriving after the end gets the same, from the log.
        late = await connect(LEGACY_WS, None)
        ops["anon-late"] = await subscribe_events(late, game_id)
        await together(follow("anon-late"))
        sockets["anon-late"] = late
        frames = {name: framed(ws) for name, ws in sockets.items()}

    game = finals[0]
    last = game["lastSeq"]
    assert game["status"] == "FINISHED"
    spectators = ["sam-transport", "sam-legacy", "anon-transport", "anon-legacy", "anon-late"]
    seats = {0: "seat0", 1: "seat1", 2: "seat2"}

    # Every stream is complete and is the caller's own projection of the log.
    for name in spectators + list(seats.values()):
        assert_complete(streams[name], last, game_id)
    for seat, name in seats.items():
        assert streams[name] == await api.events(game_id, people[seat].token)
    public_log = await api.events(game_id)
    assert public_log == await api.events(game_id, sam.token)
    for name in spectators:
        assert streams[name] == public_log, name

    # The spectator stream is the public projection: no hand, no face-down
    # card, no given/taken/peeked card, no message text.
    face_down = 0
    for e in public_log:
        d, kind = e["data"], e["type"]
        assert "hand" not in d and "cards" not in d and "text" not in d, e
        if kind in ("CardGiven", "CardTaken"):
            assert "card" not in d, e
        if kind in ("CardPlayed", "SecondCardPlayed") and d["faceDown"]:
            assert d["card"] is None, e
            face_down += kind == "CardPlayed"
    assert face_down > 0, "the seed must make a Sleepy trick with face-down plays"
    assert sum(e["type"] == "MessageSent" for e in public_log) == len(texts)

    # The oracle: who held or peeked at which card, and when each became public.
    people_streams = [streams[name] for name in seats.values()]
    public_from = public_at(people_streams)
    secret = set().union(*(s.hands | s.peeks for s in seen.values()))
    never_public = {c for c in secret if c not in public_from}
    assert never_public, "some hand cards stay hidden to the end"
    hidden_plays = [
        (e["seq"], e["data"]["card"])
        for seat, name in seats.items()
        for e in streams[name]
        if e["type"] == "CardPlayed" and e["data"]["faceDown"] and e["data"]["seat"] == seat
    ]
    assert hidden_plays, "a person played face down (the owner sees the card)"
    for seq, card in hidden_plays:
        assert card is not None and public_from[card] > seq, (seq, card)

    for name in spectators:
        assert leaks(frames[name], secret, public_from) == [], name
        for key, text in texts.items():
            assert all(text not in raw for _, raw in frames[name]), (name, key)
        assert all(marker not in raw for _, raw in frames[name]), name

    # A seat sees another seat's cards only once they are public, the Rat
    # too (it reads messages, not hands); others' face-down plays stay null.
    for seat, name in seats.items():
        for e in streams[name]:
            if e["type"] in ("CardPlayed", "SecondCardPlayed") and e["data"]["faceDown"]:
                assert (e["data"]["card"] is None) is (e["data"]["seat"] != seat), (seat, e)
        others = set().union(*(s.hands | s.peeks for t, s in seen.items() if t != seat))
        own = seen[seat].hands | seen[seat].peeks
        assert leaks(frames[name], others - own, public_from) == [], name

    # Message texts: sender, recipient once delivered, and the Rat; nobody else.
    readers = {
        "delivered": {0, 1, RAT},
        "declined": {1, RAT},
        "expired": {0, RAT},
        "rat": {RAT, 0},
        "to-bot": {1, RAT},
    }
    for key, text in texts.items():
        for seat, name in seats.items():
            first = first_seq_with(frames[name], text)
            if seat in readers[key]:
                assert first is not None, f"seat {seat} never got the {key} message"
            else:
                assert first is None, f"seat {seat} got the {key} message at seq {first}"
    delivered_at = next(
        e["seq"]
        for e in public_log
        if e["type"] == "MessageDelivered"
        and (e["data"]["fromSeat"], e["data"]["toSeat"]) == (0, 1)
    )
    assert first_seq_with(frames["seat1"], texts["delivered"]) == delivered_at
    final_view = (await api.game(game_id, people[1].token))["viewer"]
    assert texts["delivered"] in {m["text"] for m in final_view["messages"]}


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_stream_follows_its_subscriber_into_and_out_of_a_seat(
    server: Server, api: Api, protocol: str
) -> None:
    """Seats change in the lobby: whoever subscribed while seated and then
    left must not get the next occupant's projection (their hand), and a
    spectator who takes a seat gets that seat's projection from then on."""
    game_id, (host, ann) = await new_game(api, f"seat-change-{protocol}", 2, [], seatCount=3)
    bob = await api.new_person(f"seat-change-{protocol}-bob")
    sam = await api.new_person(f"seat-change-{protocol}-sam")
    async with (
        ws_connection(server.ws_url, protocol, ann.token) as ann_ws,
        ws_connection(server.ws_url, protocol, sam.token) as sam_ws,
    ):
        ann_op = await subscribe_events(ann_ws, game_id)  # seated at 1
        sam_op = await subscribe_events(sam_ws, game_id)  # a spectator
        await api.leave(ann, game_id)
        await api.join(bob, game_id)  # takes seat 1, Ann's old seat
        await api.join(sam, game_id)  # seat 2
        await api.start(host, game_id)
        ann_events: list[dict[str, Any]] = []
        sam_events: list[dict[str, Any]] = []
        first_trick = lambda e: e["type"] == "TrickStarted"  # noqa: E731
        await together(read_until(ann_op, ann_events, first_trick))
        await together(read_until(sam_op, sam_events, first_trick))
        frames = framed(ann_ws)

    bob_view = (await api.game(game_id, bob.token))["viewer"]
    sam_view = (await api.game(game_id, sam.token))["viewer"]
    assert (bob_view["seat"], sam_view["seat"]) == (1, 2)
    bob_hand = {c["id"] for c in bob_view["hand"]}
    # Nobody has moved: the log so far is what each of them may see.
    last = ann_events[-1]["seq"]
    assert ann_events == (await api.events(game_id, ann.token))[:last]
    assert sam_events == (await api.events(game_id, sam.token))[:last]
    started = {e["type"]: e for e in ann_events}["GameStarted"]
    assert "hand" not in started["data"], "Ann left her seat: she is a spectator now"
    assert all(f'"{card}"' not in raw for _, raw in frames for card in bob_hand)
    started = {e["type"]: e for e in sam_events}["GameStarted"]
    assert set(started["data"].get("hand", [])) == {c["id"] for c in sam_view["hand"]}
