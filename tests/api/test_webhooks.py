"""Webhooks as the app's backend drives them (issue #25, 0064): a service
key of scope ``webhooks`` makes, lists, changes, rotates, disables and
deletes endpoints and reads their delivery log; each message's body
carries the notice exactly as the player's own ``me.notifications`` shows
it; a player chooses what is pushed. Bad input is refused and changes
nothing; a player's token, or a key without the scope, is ``FORBIDDEN``."""

from __future__ import annotations

import json
from typing import Any

from domain.services.service_keys import create_service_key
from infra.webhooks.deliverer import Signal, WebhookDeliverer
from tests.api.conftest import Client
from tests.api.support import players, start
from tests.fakes import FakeSender

URL = "https://hooks.example.com/mmk"
ENDPOINT = "id url kinds description createdAt disabledAt disabledReason previousSecretUntil"
CREATE = (
    "mutation($url: String!, $kinds: [NoticeKind!]!, $d: String!) { r: createWebhookEndpoint("
    "url: $url, kinds: $kinds, description: $d) { __typename ... on Refusal { code message }"
    f" ... on WebhookEndpointSecret {{ secret endpoint {{ {ENDPOINT} }} }} }} }}"
)
LIST = f"{{ webhookEndpoints {{ {ENDPOINT} }} }}"
MESSAGES = (
    "query($id: ID!, $first: Int!, $after: String, $status: WebhookStatus) {"
    " r: webhookMessages(id: $id, first: $first, after: $after, status: $status) {"
    " __typename ... on Refusal { code } ... on WebhookMessagePage { hasMore endCursor"
    " messages { id playerId seq kind gameId status nextAttemptAt payload"
    " attempts { statusCode latencyMs error } } } } }"
)
ME_NOTICES = (
    "{ me { id notifications(first: 100) { notifications { seq at notice { __typename"
    " ... on YourTurn { gameId seat deadline } ... on YourGameStarted { gameId seat } } } } } }"
)


async def _key(client: Client, *scopes: str) -> str:
    return (await create_service_key(client.h.deps, "backend", list(scopes))).secret


async def _endpoint(client: Client, key: str, kinds: list[str]) -> dict[str, Any]:
    data = await client.run(CREATE, key, url=URL, kinds=kinds, d="phones")
    made: dict[str, Any] = data["r"]
    assert made["__typename"] == "WebhookEndpointSecret", made
    return made


async def test_an_endpoint_is_made_listed_and_its_messages_carry_the_players_notices(
    client: Client,
) -> None:
    key = await _key(client, "webhooks")
    made = await _endpoint(client, key, ["YOUR_TURN", "YOUR_GAME_STARTED"])
    assert made["secret"].startswith("whsec_")
    endpoint = made["endpoint"]
    assert endpoint["kinds"] == ["YOUR_GAME_STARTED", "YOUR_TURN"]
    assert endpoint["disabledAt"] is None and endpoint["description"] == "phones"
    assert (await client.run(LIST, key))["webhookEndpoints"] == [endpoint]

    tokens = await players(client, 3)
    await start(client, tokens, turnSeconds=600)  # a YourTurn has its deadline
    page = (await client.run(MESSAGES, key, id=endpoint["id"], first=50))["r"]
    assert page["__typename"] == "WebhookMessagePage" and not page["hasMore"]
    messages = page["messages"]
    assert messages and {m["status"] for m in messages} == {"PENDING"}
    told = {}
    for t in tokens:
        me = (await client.run(ME_NOTICES, t))["me"]
        for n in me["notifications"]["notifications"]:
            told[(me["id"], n["seq"])] = n
    deadlines = 0
    for m in messages:
        body = json.loads(m["payload"])
        n = told[(m["playerId"], m["seq"])]
        assert body["data"]["notice"] == n["notice"]  # the same notice, times written alike
        assert body["data"]["at"] == body["timestamp"] == n["at"]
        deadlines += "deadline" in n["notice"] and n["notice"]["deadline"] is not None
        assert body["type"] == "notification." + m["kind"].lower()
        assert body["data"]["playerId"] == m["playerId"] and body["data"]["externalId"] is None
    assert deadlines > 0
    kinds = ("YourTurn", "YourGameStarted")
    wanted = {k for k, n in told.items() if n["notice"]["__typename"] in kinds}
    assert {(m["playerId"], m["seq"]) for m in messages} == wanted

    # delivered: the log shows each attempt; one page at a time, newest first
    sender = FakeSender()
    deliverer = WebhookDeliverer(client.h.deps, sender, Signal())
    await deliverer.round()
    await deliverer.idle()
    first = (await client.run(MESSAGES, key, id=endpoint["id"], first=1))["r"]
    assert first["hasMore"] and len(first["messages"]) == 1
    rest = (await client.run(MESSAGES, key, id=endpoint["id"], first=50, after=first["endCursor"]))[
        "r"
    ]
    seen = first["messages"] + rest["messages"]
    assert [m["id"] for m in seen] == [m["id"] for m in messages]
    assert {m["status"] for m in seen} == {"DELIVERED"}
    assert all(
        [a["statusCode"] for a in m["attempts"]] == [200] and m["nextAttemptAt"] is None
        for m in seen
    )
    pending = await client.run(MESSAGES, key, id=endpoint["id"], first=50, status="PENDING")
    assert pending["r"]["messages"] == []


async def test_the_backend_manages_its_endpoints(client: Client) -> None:
    key = await _key(client, "webhooks")
    endpoint = (await _endpoint(client, key, ["YOUR_TURN"]))["endpoint"]
    eid = endpoint["id"]

    def change(op: str, args: str, selection: str = ENDPOINT) -> str:
        return (
            f"mutation {{ r: {op}({args}) {{ __typename ... on Refusal {{ code }}"
            f" ... on {selection} }} }}"
        )

    off = await client.run(
        change(
            "setWebhookEndpointEnabled",
            f'id: "{eid}", enabled: false',
            f"WebhookEndpoint {{ {ENDPOINT} }}",
        ),
        key,
    )
    assert off["r"]["disabledReason"] == "BY_APP"
    on = await client.run(
        change(
            "setWebhookEndpointEnabled",
            f'id: "{eid}", enabled: true',
            f"WebhookEndpoint {{ {ENDPOINT} }}",
        ),
        key,
    )
    assert on["r"]["disabledAt"] is None
    updated = await client.run(
        change(
            "updateWebhookEndpoint",
            f'id: "{eid}", kinds: [YOUR_GAME_ENDED, YOUR_TURN]',
            f"WebhookEndpoint {{ {ENDPOINT} }}",
        ),
        key,
    )
    assert updated["r"]["kinds"] == ["YOUR_GAME_ENDED", "YOUR_TURN"]
    rotated = await client.run(
        change(
            "rotateWebhookSecret",
            f'id: "{eid}", overlapSeconds: 3600',
            f"WebhookEndpointSecret {{ secret endpoint {{ {ENDPOINT} }} }}",
        ),
        key,
    )
    assert rotated["r"]["secret"].startswith("whsec_")
    assert rotated["r"]["endpoint"]["previousSecretUntil"] is not None
    bad = await client.run(
        change(
            "rotateWebhookSecret",
            f'id: "{eid}", overlapSeconds: -1',
            "WebhookEndpointSecret { secret }",
        ),
        key,
    )
    assert bad["r"] == {"__typename": "Refusal", "code": "BAD_INPUT"}
    gone = await client.run(
        change("deleteWebhookEndpoint", f'id: "{eid}"', "WebhookEndpointDeleted { endpointId }"),
        key,
    )
    assert gone["r"]["endpointId"] == eid
    assert (await client.run(LIST, key))["webhookEndpoints"] == []
    for op, args in [
        ("deleteWebhookEndpoint", f'id: "{eid}"'),
        ("setWebhookEndpointEnabled", f'id: "{eid}", enabled: true'),
        ("replayWebhookMessage", 'id: "msg_nope"'),
    ]:
        r = await client.run(
            f"mutation {{ r: {op}({args}) {{ __typename ... on Refusal {{ code }} }} }}", key
        )
        assert r["r"] == {"__typename": "Refusal", "code": "NOT_FOUND"}, op
    missing = await client.run(MESSAGES, key, id=eid, first=5)
    assert missing["r"] == {"__typename": "Refusal", "code": "NOT_FOUND"}


async def test_refused_endpoints_change_nothing_and_need_the_scope(client: Client) -> None:
    key = await _key(client, "webhooks")
    for url, kinds in [("https://192.168.1.2/x", ["YOUR_TURN"]), (URL, [])]:
        r = (await client.run(CREATE, key, url=url, kinds=kinds, d=""))["r"]
        assert r["__typename"] == "Refusal" and r["code"] == "BAD_INPUT", r
    assert (await client.run(LIST, key))["webhookEndpoints"] == []
    other = await _key(client, "players:write")
    errors = await client.errors(LIST, other)
    assert [e["extensions"]["code"] for e in errors] == ["FORBIDDEN"]
    player, _ = await client.new_player("ann")
    errors = await client.errors(LIST, player)
    assert [e["extensions"]["code"] for e in errors] == ["FORBIDDEN"]
    assert client.h.store.endpoints == {}


async def test_a_player_chooses_what_is_pushed(client: Client) -> None:
    key = await _key(client, "webhooks")
    endpoint = (await _endpoint(client, key, ["YOUR_TURN", "YOUR_GAME_STARTED"]))["endpoint"]
    tokens = await players(client, 3)
    settings = "{ me { notificationSettings { push } } }"
    everything = (await client.run(settings, tokens[1]))["me"]["notificationSettings"]["push"]
    assert len(everything) == 8
    chosen = await client.run(
        "mutation { r: updateNotificationSettings(push: [YOUR_TURN]) { __typename"
        " ... on NotificationSettings { push } } }",
        tokens[1],
    )
    assert chosen["r"] == {"__typename": "NotificationSettings", "push": ["YOUR_TURN"]}
    assert (await client.run(settings, tokens[1]))["me"]["notificationSettings"]["push"] == [
        "YOUR_TURN"
    ]
    await client.run(
        "mutation { r: updateNotificationSettings(push: []) { __typename } }", tokens[2]
    )
    await start(client, tokens)
    bob = (await client.run("{ me { id } }", tokens[1]))["me"]["id"]
    cy = (await client.run("{ me { id } }", tokens[2]))["me"]["id"]
    page = (await client.run(MESSAGES, key, id=endpoint["id"], first=50))["r"]
    kinds = {(m["playerId"], m["kind"]) for m in page["messages"]}
    assert (bob, "YOUR_GAME_STARTED") not in kinds and not any(p == cy for p, _ in kinds)
    told = (await client.run(ME_NOTICES, tokens[1]))["me"]["notifications"]["notifications"]
    assert any(n["notice"]["__typename"] == "YourGameStarted" for n in told)  # still kept


async def test_a_malformed_date_time_literal_is_bad_input_not_internal(client: Client) -> None:
    """The fuzzer's find: a ``DateTime`` literal the scalar refuses is the
    caller's mistake, as the same value in a variable is."""
    key = await _key(client, "webhooks")
    for since in ('"nope"', '"2026-02-30T00:00:00.000Z"', '"2026-01-01T00:00:00Z"'):
        errors = await client.errors(
            f'mutation {{ replayFailedWebhookMessages(id: "x", since: {since}) {{ __typename }} }}',
            key,
        )
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], errors
        assert "DateTime" in errors[0]["message"]
