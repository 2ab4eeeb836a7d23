"""The probe of issue #14 through a real server (decision 0042): a
``sendMessage`` refused ``ILLEGAL_ACTION`` and retried with its key after it
became legal gets the first response again, byte for byte, and the message
is not sent."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.client import Api, action_document

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

KEYED_MESSAGE = action_document("sendMessage", ["to", "text"], {"idempotencyKey": "String"})


async def test_a_refused_message_retried_with_its_key_stays_refused(
    api: Api, http: httpx.AsyncClient
) -> None:
    people = [await api.new_person(f"kept-{i}") for i in range(3)]
    game_id = await api.create_game(people[0], seatCount=3, ratSeat=0)
    for p in people[1:]:
        await api.join(p, game_id)
    await api.start(people[0], game_id)
    for text in ("a", "b", "c"):  # R5.5: three pending
        await api.send_message(people[1], game_id, 2, text)
    body = {
        "query": KEYED_MESSAGE,
        "variables": {"gameId": game_id, "to": 2, "text": "d", "idempotencyKey": "probe-1"},
    }
    headers = {"Authorization": f"Bearer {people[1].token}"}
    first = await http.post("/graphql", json=body, headers=headers)
    assert first.json()["data"]["sendMessage"]["code"] == "ILLEGAL_ACTION", first.text
    rat = await api.game(game_id, people[0].token)
    pending = rat["viewer"]["messages"][0]["messageId"]
    await api.act(
        people[0], game_id, {"mutation": "declineMessage", "arguments": {"messageId": pending}}
    )
    version = (await api.game(game_id))["version"]
    again = await http.post("/graphql", json=body, headers=headers)
    assert (again.status_code, again.json()["data"]) == (first.status_code, first.json()["data"])
    after = await api.game(game_id, people[1].token)
    assert after["version"] == version, "nothing applied"
    assert [m["text"] for m in after["viewer"]["messages"]] == ["a", "b", "c"]
