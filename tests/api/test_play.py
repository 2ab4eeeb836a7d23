"""Playing through the schema by sending the listed legalActions as is: a
whole game between three people, every decision kind, pass and
discardAndPlay (R5-R7, R9, R11)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.support import (
    game,
    hands,
    mark,
    ok,
    players,
    refused,
    seeded,
    send_action,
    start,
    strings,
)

MESSENGER = {"DELIVER_MESSAGE", "DECLINE_MESSAGE"}


def check_view(client: Client, game_id: str, g: dict[str, Any]) -> None:
    """R11: the viewer's hand is its own, and no other seat's card shows."""
    held = hands(client, game_id)
    seat = g["viewer"]["seat"]
    assert sorted(c["id"] for c in g["viewer"]["hand"]) == sorted(held[seat])
    others = {c for s, h in enumerate(held) if s != seat for c in h}
    assert not strings(g) & others, f"seat {seat} sees another seat's card"


async def probe_unlisted(client: Client, game_id: str, tokens: list[str], g: dict[str, Any]) -> int:
    """Anything not listed is refused: an unlisted card of the acting seat,
    and a card of a seat whose turn it is not; neither changes anything.
    Returns how many unlisted cards were tried (0 or 1)."""
    before = mark(client, game_id)
    seat, table = g["viewer"]["seat"], g["table"]
    listed = {a["card"] for a in g["viewer"]["legalActions"] if a["kind"] == "PLAY_CARD"}
    unlisted = [c["id"] for c in g["viewer"]["hand"] if c["id"] not in listed]
    tried = int(bool(unlisted and listed and table["pending"] is None))
    if tried:
        await refused(
            client, tokens[seat], "playCard", "ILLEGAL_ACTION", gameId=game_id, card=unlisted[0]
        )
    other = next(s for s in range(3) if s != seat and hands(client, game_id)[s])
    card = hands(client, game_id)[other][0]
    await refused(client, tokens[other], "playCard", "NOT_YOUR_TURN", gameId=game_id, card=card)
    assert mark(client, game_id) == before
    return tried


def known(action: dict[str, Any]) -> set[str]:
    """Cards the actor may know in another hand: its gifts (giver and
    receiver see them, R7.2, R7.5) and the Curious top cards, which a refill
    in the same change may deal to others (R7.6, R8.3)."""
    decision = action["arguments"].get("decision", {})
    kind = decision.get("kind")
    if kind == "STINKY_GIFTS":
        return {g["card"] for g in decision["gifts"]}
    if kind == "CURIOUS_ORDER":
        return set(decision["cards"])
    return {decision["card"]} if kind == "NEEDY_GIFT" else set()


@pytest.mark.parametrize("seed", ["whole-1", "whole-2", "whole-3"])
async def test_three_people_play_a_whole_game_by_sending_listed_actions(
    client: Client, seed: str
) -> None:
    tokens = await players(client, 3)
    game_id = await start(client, tokens, seed=seed)
    sent: Counter[str] = Counter()
    talked: set[int] = set()
    unlisted_tried = 0
    for step in range(1_000):
        public = await game(client, None, game_id)
        table = public["table"]
        if public["status"] == "FINISHED":
            break
        assert public["viewer"] is None
        assert not strings(public) & {c for h in hands(client, game_id) for c in h}
        trick, rat = table["trick"]["number"], table["ratSeat"]
        if table["phase"] == "LEAD" and trick not in talked:
            talked.add(trick)
            sender = (rat + 1 + trick % 2) % 3
            view = await game(client, tokens[sender], game_id)
            to = view["viewer"]["messageTargets"][0]
            await ok(
                client, tokens[sender], "sendMessage", gameId=game_id, to=to, text=f"trick {trick}"
            )
        rat_view = await game(client, tokens[rat], game_id)
        messenger = [a for a in rat_view["viewer"]["legalActions"] if a["kind"] in MESSENGER]
        if messenger:
            seat, view, action = rat, rat_view, messenger[trick % len(messenger)]
        else:
            seat = table["toAct"]
            view = await game(client, tokens[seat], game_id)
            actions = view["viewer"]["legalActions"]
            assert actions, f"seat {seat} is to act and has nothing listed"
            if step % 7 == 0:
                unlisted_tried += await probe_unlisted(client, game_id, tokens, view)
            action = actions[step % len(actions)]
        check_view(client, game_id, view)
        version, last = (
            client.h.store.games[game_id].version,
            client.h.store.games[game_id].last_seq,
        )
        r = await send_action(client, tokens[seat], game_id, action)
        assert r["__typename"] == "GameChange", (action, r)
        assert r["version"] == version + 1
        now = client.h.store.games[game_id].last_seq
        assert [e["seq"] for e in r["events"]] == list(range(last + 1, now + 1))
        others = {c for i, h in enumerate(hands(client, game_id)) if i != seat for c in h}
        assert strings(r) & others <= known(action), "a result shows another hand"
        sent[action["mutation"]] += 1
    else:
        raise AssertionError("the game did not end")
    assert {"playCard", "resolveDecision", "deliverMessage", "declineMessage"} <= set(sent)
    assert unlisted_tried > 0, "an unlisted card was tried and refused"
    assert table["outcome"]["winners"]
    assert table["toAct"] is None and table["phase"] == "FINISHED"
    for token in tokens:
        viewer = (await game(client, token, game_id))["viewer"]
        assert viewer["legalActions"] == [] and viewer["messageTargets"] == []


FLOWS = {
    "crazy": ["CRAZY_SECOND_CARD"],
    "stinky": ["STINKY_GIFTS"],
    "hungry": ["HUNGRY_DISCARD", "HUNGRY_TAKE"],
    "needy": ["NEEDY_NEIGHBOUR", "NEEDY_GIFT"],
    "curious": ["CURIOUS_ORDER"],
}


def effect_shown(
    client: Client, game_id: str, seat: int, decision: dict[str, Any], g: dict[str, Any]
) -> None:
    """The answered decision did what it says (seen in the store and table)."""
    held = hands(client, game_id)
    state = client.h.store.games[game_id].state
    assert state is not None
    kind, card = decision["kind"], decision.get("card")
    if kind == "CRAZY_SECOND_CARD":
        assert g["table"]["trick"]["plays"][0]["secondCard"]["id"] == card
    elif kind == "STINKY_GIFTS":
        assert all(gift["card"] in held[gift["to"]] for gift in decision["gifts"])
    elif kind == "HUNGRY_DISCARD":
        assert card in [c["id"] for c in g["table"]["discard"]]
    elif kind in ("HUNGRY_TAKE", "NEEDY_GIFT"):
        taker = seat if kind == "HUNGRY_TAKE" else g["table"]["trick"]["leader"]
        assert card in held[taker]
    elif kind == "NEEDY_NEIGHBOUR":
        assert g["table"]["pending"] == {
            "kind": "NEEDY_GIFT",
            "seat": decision["seat"],
            "source": seat,
        }
    else:
        assert state.rat_deck[:3] == decision["cards"]


@pytest.mark.parametrize(("house", "kinds"), FLOWS.items())
async def test_a_led_ability_is_answered_with_listed_decisions(
    client: Client, house: str, kinds: list[str]
) -> None:
    tokens = await players(client, 3)
    game_id = await seeded(
        client,
        tokens,
        lambda s: any(c.startswith(f"{house}-") for c in s.seats[0].hand),
        ratSeat=0,
    )
    lead = next(
        a
        for a in (await game(client, tokens[0], game_id))["viewer"]["legalActions"]
        if a["card"].startswith(f"{house}-")
    )
    r = await send_action(client, tokens[0], game_id, lead)
    assert "DecisionRequired" in [e["type"] for e in r["events"]]
    answered = []
    while (pending := (await game(client, None, game_id))["table"]["pending"]) is not None:
        seat = pending["seat"]
        answered.append(pending["kind"])
        for other in set(range(3)) - {seat}:
            viewer = (await game(client, tokens[other], game_id))["viewer"]
            assert viewer["legalActions"] == [] and viewer["decisionCards"] == []
        g = await game(client, tokens[seat], game_id)
        check_view(client, game_id, g)
        actions = g["viewer"]["legalActions"]
        assert actions and all(a["mutation"] == "resolveDecision" for a in actions)
        assert {a["arguments"]["decision"]["kind"] for a in actions} == {pending["kind"]}
        shown = sorted(c["id"] for c in g["viewer"]["decisionCards"])
        deck = client.h.store.games[game_id].state.rat_deck  # type: ignore[union-attr]
        if pending["kind"] == "HUNGRY_TAKE":
            assert shown == sorted(deck), "the Rat Deck's contents, never its order"
        elif pending["kind"] == "CURIOUS_ORDER":
            assert shown == sorted(deck[:3])
        else:
            assert shown == []
        action = actions[-1]
        r = await send_action(client, tokens[seat], game_id, action)
        assert r["__typename"] == "GameChange", r
        after = await game(client, tokens[seat], game_id)
        effect_shown(client, game_id, seat, action["arguments"]["decision"], after)
    assert answered == kinds


def sassy_stuck(state: Any) -> bool:
    """The Rat (seat 0) holds a Sassy card; seat 1 holds none."""
    return any(c.startswith("sassy-") for c in state.seats[0].hand) and not any(
        c.startswith("sassy-") for c in state.seats[1].hand
    )


async def sassy_led(client: Client) -> tuple[str, list[str], list[dict[str, Any]]]:
    tokens = await players(client, 3)
    game_id = await seeded(client, tokens, sassy_stuck, ratSeat=0, abilityTrigger="LEAD_ONLY")
    actions = (await game(client, tokens[0], game_id))["viewer"]["legalActions"]
    await send_action(
        client, tokens[0], game_id, next(a for a in actions if a["card"].startswith("sassy-"))
    )
    stuck = (await game(client, tokens[1], game_id))["viewer"]["legalActions"]
    return game_id, tokens, stuck


async def test_pass_when_holding_no_sassy_card(client: Client) -> None:
    game_id, tokens, actions = await sassy_led(client)
    assert {a["kind"] for a in actions} == {"PASS", "DISCARD_AND_PLAY"}
    pass_ = next(a for a in actions if a["kind"] == "PASS")
    assert (pass_["mutation"], pass_["arguments"]) == ("pass", {})
    hand = hands(client, game_id)[1]
    r = await send_action(client, tokens[1], game_id, pass_)
    assert [e["type"] for e in r["events"]] == ["Passed", "ActionRequired"]
    table = (await game(client, None, game_id))["table"]
    assert table["trick"]["passes"] == [1] and table["toAct"] == 2
    assert hands(client, game_id)[1] == hand


async def test_discard_and_play_when_holding_no_sassy_card(client: Client) -> None:
    game_id, tokens, actions = await sassy_led(client)
    move = next(a for a in actions if a["kind"] == "DISCARD_AND_PLAY")
    assert move["mutation"] == "discardAndPlay"
    assert move["arguments"] == {"discard": move["discard"], "card": move["card"]}
    await send_action(client, tokens[1], game_id, move)
    table = (await game(client, None, game_id))["table"]
    assert move["discard"] in [c["id"] for c in table["discard"]]
    plays = table["trick"]["plays"]
    assert plays[1]["seat"] == 1 and plays[1]["card"]["id"] == move["card"]
    assert len(hands(client, game_id)[1]) == 8


EVENTS = """query($id: ID!) { gameEvents(gameId: $id, first: 100) {
  ... on GameEventPage { events { seq type data } } } }"""


async def test_messages_are_read_only_by_sender_recipient_and_rat(client: Client) -> None:
    tokens = await players(client, 4)
    game_id = await seeded(client, tokens, lambda s: True, ratSeat=0)
    secret = "meet me at the Sassy prize"
    sent = await ok(client, tokens[1], "sendMessage", gameId=game_id, to=2, text=secret)
    assert sent["events"][0]["data"]["text"] == secret, "the sender's own projection"
    rat = (await game(client, tokens[0], game_id))["viewer"]
    assert [(m["text"], m["status"]) for m in rat["messages"]] == [(secret, "PENDING")]
    message_id = rat["messages"][0]["messageId"]
    assert rat["messages"][0]["id"] == f"{game_id}:{message_id}", "unique across games"
    listed = [a for a in rat["legalActions"] if a["messageId"] == message_id]
    assert {a["kind"] for a in listed} == MESSENGER
    recipient = await game(client, tokens[2], game_id)
    assert secret not in strings(recipient), "not the recipient's to read until delivered"
    deliver = next(a for a in listed if a["kind"] == "DELIVER_MESSAGE")
    assert deliver["arguments"] == {"messageId": message_id}
    await send_action(client, tokens[0], game_id, deliver)
    recipient = (await game(client, tokens[2], game_id))["viewer"]
    assert [(m["text"], m["status"], m["fromSeat"]) for m in recipient["messages"]] == [
        (secret, "DELIVERED", 1)
    ]
    spectator, _ = await client.new_player("spectator")
    for token in (tokens[3], spectator, None):
        seen = await game(client, token, game_id)
        assert secret not in strings(seen)
        routes = seen["table"]["messages"]
        assert routes == [
            {
                "id": f"{game_id}:{message_id}",
                "messageId": message_id,
                "trick": 1,
                "fromSeat": 1,
                "toSeat": 2,
                "status": "DELIVERED",
            }
        ]
        log = (await client.run(EVENTS, token, id=game_id))["gameEvents"]["events"]
        assert secret not in strings(log)
        assert "MessageDelivered" in [e["type"] for e in log], "the route is public"
    for reader in tokens[:3]:
        log = (await client.run(EVENTS, reader, id=game_id))["gameEvents"]["events"]
        assert secret in strings(log)


async def test_the_rat_declines_and_the_lead_card_expires_pending_messages(
    client: Client,
) -> None:
    tokens = await players(client, 3)
    game_id = await seeded(client, tokens, lambda s: True, ratSeat=0)
    await ok(client, tokens[1], "sendMessage", gameId=game_id, to=2, text="one")
    await ok(client, tokens[2], "sendMessage", gameId=game_id, to=1, text="two")
    own = await ok(client, tokens[0], "sendMessage", gameId=game_id, to=1, text="rat")
    assert [e["type"] for e in own["events"]] == [
        "MessageSent",
        "MessageDelivered",
        "ActionRequired",
    ]
    rat = (await game(client, tokens[0], game_id))["viewer"]
    first = rat["messages"][0]["messageId"]
    decline = next(
        a for a in rat["legalActions"] if a["kind"] == "DECLINE_MESSAGE" and a["messageId"] == first
    )
    r = await send_action(client, tokens[0], game_id, decline)
    assert [e["type"] for e in r["events"]] == ["MessageDeclined", "ActionRequired"]
    lead = next(a for a in rat["legalActions"] if a["kind"] == "PLAY_CARD")
    r = await send_action(client, tokens[0], game_id, lead)
    assert "MessageExpired" in [e["type"] for e in r["events"]]
    statuses = [m["status"] for m in (await game(client, None, game_id))["table"]["messages"]]
    assert statuses == ["DECLINED", "EXPIRED", "DELIVERED"]
    viewer = (await game(client, tokens[1], game_id))["viewer"]
    assert viewer["messageTargets"] == [], "the window closed with the lead card (R5.3)"


async def test_a_change_returns_the_game_as_the_caller_sees_it(client: Client) -> None:
    tokens = await players(client, 3)
    game_id = await seeded(client, tokens, lambda s: True, ratSeat=0)
    text = (
        'mutation($g: ID!) { sendMessage(gameId: $g, to: 2, text: "hi") {'
        " ... on GameChange { version game { version viewer { seat hand { id } messages { text } }"
        " table { messages { status } } } } } }"
    )
    change = (await client.run(text, tokens[1], g=game_id))["sendMessage"]
    g = change["game"]
    assert g["version"] == change["version"]
    assert g["viewer"]["seat"] == 1
    assert sorted(c["id"] for c in g["viewer"]["hand"]) == sorted(hands(client, game_id)[1])
    assert g["viewer"]["messages"] == [{"text": "hi"}]
    assert g["table"]["messages"] == [{"status": "PENDING"}]
