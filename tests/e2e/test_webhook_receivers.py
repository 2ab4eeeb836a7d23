"""The worked receivers of docs/push-notifications.md (examples/webhooks),
each run as a real process, in Python (``standardwebhooks`` from PyPI) and
in Node (``standardwebhooks`` from npm, installed by ``make node-deps`` into
tests/node; the tests skip without it, and fail under
``MMK_REQUIRE_SERVICES=1``, as the other Node tests do).

- Signed here by the project's own signing (``domain.webhooks.headers``)
  over a real notification's body (``payload_of``, serialized as the outbox
  does): a receiver answers 2xx and prints the body; the same ``webhook-id``
  again is answered 2xx and not printed again; a wrong secret, a changed
  body, a stale timestamp get 4xx and print nothing; a delivery signed by
  a new and an old secret (a rotation's overlap) passes a receiver still
  on the old one.
- Delivered by a real ``mmk serve`` to an endpoint a service key made: an
  invitation's notification reaches the receiver as ``me.notifications``
  shows it, with the player's external id, and the delivery log says 204;
  a replay (same ``webhook-id``) is acknowledged but not printed again;
  after ``rotateWebhookSecret`` the receiver, still on the old secret,
  verifies the next one; a player who chose no pushes gets no message.
- The guide quotes the receivers as they are.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from domain.notifications import Notification, YourGameEnded, YourTurn
from domain.webhooks import headers, message_id, new_secret, payload_of
from tests.e2e.client import CHANGE, CREATE_GAME, ISSUED_TOKENS
from tests.e2e.conftest import ROOT
from tests.e2e.node_build import NODE_DIR
from tests.e2e.own_server import assert_no_leak, own_server
from tests.e2e.test_service_keys import ISSUE, gql, new_key
from tests.services import unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

EXAMPLES = ROOT / "examples" / "webhooks"
GUIDE = ROOT / "docs" / "push-notifications.md"
QUOTED = re.compile(r"<!-- quoted: (\S+) -->\n```\w*\n(.*?)\n```", re.S)
STEP = 10.0  # seconds for a receiver to start, or a delivery to arrive
LANGUAGES = ("python", "node")

CREATE_ENDPOINT = """
mutation($url: String!, $kinds: [NoticeKind!]!) {
  createWebhookEndpoint(url: $url, kinds: $kinds, description: "worked receiver") {
    __typename
    ... on WebhookEndpointSecret { secret endpoint { id url kinds disabledAt } }
    ... on Refusal { code message }
  }
}"""
UPDATE_URL = """
mutation($id: ID!, $url: String!) { updateWebhookEndpoint(id: $id, url: $url) {
  __typename ... on WebhookEndpoint { url } ... on Refusal { code message }
} }"""
MESSAGES = """
query($id: ID!) { webhookMessages(id: $id) {
  __typename
  ... on WebhookMessagePage { messages {
    id seq kind status payload attempts { statusCode error }
  } }
  ... on Refusal { code message }
} }"""
REPLAY = """
mutation($id: ID!) { replayWebhookMessage(id: $id) {
  __typename ... on WebhookMessage { id status } ... on Refusal { code message }
} }"""
ROTATE = """
mutation($id: ID!) { rotateWebhookSecret(id: $id, overlapSeconds: 600) {
  __typename
  ... on WebhookEndpointSecret { secret endpoint { previousSecretUntil } }
  ... on Refusal { code message }
} }"""
PUSH_SETTINGS = """
mutation($push: [NoticeKind!]!) { updateNotificationSettings(push: $push) {
  __typename ... on NotificationSettings { push } ... on Refusal { code message }
} }"""
MY_NOTIFICATIONS = """
{ me {
  notificationSettings { push }
  notifications(afterSeq: 0) { notifications {
    seq at notice { __typename ... on YourInvitation { gameId hostId } }
  } }
} }"""
INVITE = f"""
mutation($gameId: ID!, $playerIds: [ID!]!) {{
  invitePlayers(gameId: $gameId, playerIds: $playerIds) {{ {CHANGE} }}
}}"""


# ---------------------------------------------------------------- receivers
@dataclass
class Receiver:
    """A receiver process: its URL, and the lines it printed on stdout."""

    url: str
    proc: subprocess.Popen[str]
    printed: queue.Queue[str]

    def next_line(self) -> dict[str, Any]:
        try:
            line = self.printed.get(timeout=STEP)
        except queue.Empty:
            raise AssertionError(f"the receiver printed nothing in {STEP:g} s") from None
        body: dict[str, Any] = json.loads(line)
        return body

    def stop(self) -> list[str]:
        """Stop it (SIGTERM: it exits 0); every line it printed since the
        last :meth:`next_line`."""
        self.proc.terminate()
        assert self.proc.wait(STEP) == 0, self.proc.returncode
        rest = []
        while not self.printed.empty():
            rest.append(self.printed.get())
        return rest


@pytest.fixture(params=LANGUAGES)
def command(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """How to run the example receiver in this language."""
    if request.param == "python":
        return [sys.executable, str(EXAMPLES / "receiver.py")]
    node: str = request.getfixturevalue("node")  # Node.js and `make node-deps`
    installed = (NODE_DIR / "node_modules" / "standardwebhooks" / "package.json").exists()
    if not installed:
        unavailable("the npm package standardwebhooks is missing: `make node-deps`")
    # The example as a user has it: beside a node_modules (tests/node's).
    here = tmp_path / "receiver"
    here.mkdir()
    shutil.copy(EXAMPLES / "receiver.mjs", here / "receiver.mjs")
    (here / "node_modules").symlink_to(NODE_DIR / "node_modules", target_is_directory=True)
    return [node, str(here / "receiver.mjs")]


def _pump(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


@contextmanager
def running(command: list[str], secret: str) -> Iterator[Receiver]:
    """The receiver listening on a free loopback port, its secret given."""
    env = {**os.environ, "WEBHOOK_SECRET": secret, "PORT": "0", "HOST": "127.0.0.1"}
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(command[-1]).parent,
    )
    printed: queue.Queue[str] = queue.Queue()
    said: queue.Queue[str] = queue.Queue()
    for stream, into in ((proc.stdout, printed), (proc.stderr, said)):
        threading.Thread(target=_pump, args=(stream, into), daemon=True).start()
    try:
        try:
            first = said.get(timeout=STEP)
        except queue.Empty:
            raise AssertionError(f"{command} did not start in {STEP:g} s") from None
        assert first.startswith("listening on http://127.0.0.1:"), first
        yield Receiver(first.removeprefix("listening on ") + "/mmk-webhooks", proc, printed)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(STEP)


# ---------------------------------------------------------------- signed here
def _body(n: Notification, external_id: str | None) -> str:
    """The exact bytes the outbox stores and posts (domain.webhooks.outbox)."""
    return json.dumps(payload_of(n, external_id), separators=(",", ":"))


def _post(url: str, body: str, sent: dict[str, str]) -> int:
    r = httpx.post(
        url,
        content=body.encode(),
        headers={**sent, "content-type": "application/json"},
        timeout=STEP,
        trust_env=False,
    )
    assert r.content == b"", r.content  # an answer, nothing to read
    return r.status_code


def test_a_receiver_verifies_drops_repeats_and_prints_each_body_once(command: list[str]) -> None:
    secret, other = new_secret(os.urandom(24)), new_secret(os.urandom(32))
    player, game = str(uuid.uuid4()), str(uuid.uuid4())
    now = datetime.now(UTC)
    turn = Notification(player, 7, now, YourTurn(game, 2, now + timedelta(hours=24)))
    ended = Notification(player, 8, now, YourGameEnded(game, 2, 41, 1, True))
    first, second = _body(turn, "user-42"), _body(ended, None)
    first_id = message_id("whk_test", player, 7)

    def signed(
        body: str, msg_id: str = first_id, by: tuple[str, ...] = (secret,), age: float = 0
    ) -> dict[str, str]:
        return headers(list(by), msg_id, int(time.time() - age), body)

    with running(command, secret) as rx:
        assert _post(rx.url, first, signed(first)) == 204
        assert rx.next_line() == json.loads(first)
        # a retry: the same webhook-id, signed again at its own time
        assert _post(rx.url, first, signed(first, age=3)) == 204
        refused = [
            _post(rx.url, first, signed(first, "msg_other", by=(other,))),  # another secret
            _post(rx.url, first.replace('"seat":2', '"seat":3'), signed(first, "msg_x")),
            _post(rx.url, first, signed(first, "msg_stale", age=600)),  # 10 minutes old
            _post(rx.url, first, {"webhook-id": "msg_bare"}),  # unsigned
        ]
        assert all(400 <= code < 500 for code in refused), refused
        # a rotation's overlap: signed by the new secret (other) and the
        # old one, which the receiver still has
        assert _post(rx.url, second, signed(second, "msg_second", by=(other, secret))) == 204
        assert rx.next_line() == json.loads(second)
        assert _post(rx.url, second, signed(second, "msg_second")) == 204
        assert rx.stop() == []  # the repeats and the refused printed nothing


# ---------------------------------------------------------------- a real server
async def _ok(http: httpx.AsyncClient, token: str, field: str, query: str, **v: Any) -> Any:
    body = await gql(http, token, query, **v)
    assert not body.get("errors"), body
    out = body["data"][field]
    assert not (isinstance(out, dict) and out.get("__typename") == "Refusal"), out
    return out


async def _messages(http: httpx.AsyncClient, key: str, endpoint: str) -> list[dict[str, Any]]:
    page = await _ok(http, key, "webhookMessages", MESSAGES, id=endpoint)
    found: list[dict[str, Any]] = page["messages"]
    return found


async def _settled(
    http: httpx.AsyncClient, key: str, endpoint: str, attempts: int
) -> list[dict[str, Any]]:
    """The log once its newest message is delivered after ``attempts`` tries."""
    deadline = time.monotonic() + STEP
    while True:
        found = await _messages(http, key, endpoint)
        newest = found[0] if found else None
        if newest and newest["status"] == "DELIVERED" and len(newest["attempts"]) == attempts:
            return found
        assert time.monotonic() < deadline, found
        await asyncio.sleep(0.05)


async def test_a_real_server_delivers_to_the_receiver(command: list[str], tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/webhooks.sqlite3"
    allow = {"MMK_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}
    with own_server(tmp_path, database, **allow) as (srv, _):
        key = new_key(database, "App backend", "webhooks,players:write")
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=STEP, trust_env=False) as http:
            # made before its receiver listens (it needs the secret): pointed
            # at the receiver's port once it has one
            made = await _ok(
                http,
                key,
                "createWebhookEndpoint",
                CREATE_ENDPOINT,
                url="http://127.0.0.1:9/not-yet",
                kinds=["YOUR_INVITATION"],
            )
            endpoint, secret = made["endpoint"]["id"], made["secret"]
            assert secret.startswith("whsec_") and made["endpoint"]["disabledAt"] is None
            ISSUED_TOKENS.append(secret)  # never in the server's log

            people = {}
            for external in ("user-host", "user-bob"):
                issued = await _ok(http, key, "issuePlayerToken", ISSUE, x=external, n=external[5:])
                ISSUED_TOKENS.append(issued["token"])
                people[external] = (issued["player"]["id"], issued["token"])
            (host, host_token), (bob, bob_token) = people["user-host"], people["user-bob"]

            async def invite() -> str:
                game = await _ok(
                    http,
                    host_token,
                    "createGame",
                    CREATE_GAME,
                    input={"seatCount": 3, "visibility": "PRIVATE"},
                )
                await _ok(
                    http,
                    host_token,
                    "invitePlayers",
                    INVITE,
                    gameId=game["gameId"],
                    playerIds=[bob],
                )
                game_id: str = game["gameId"]
                return game_id

            with running(command, secret) as rx:
                moved = await _ok(
                    http, key, "updateWebhookEndpoint", UPDATE_URL, id=endpoint, url=rx.url
                )
                assert moved == {"__typename": "WebhookEndpoint", "url": rx.url}
                game_id = await invite()
                got = rx.next_line()
                assert got["type"] == "notification.your_invitation"
                assert got["data"] == {
                    "playerId": bob,
                    "externalId": "user-bob",
                    "seq": 1,
                    "at": got["timestamp"],
                    "kind": "YOUR_INVITATION",
                    "notice": {"__typename": "YourInvitation", "gameId": game_id, "hostId": host},
                }
                mine = await _ok(http, bob_token, "me", MY_NOTIFICATIONS)
                listed = mine["notifications"]["notifications"]
                assert [(n["seq"], n["notice"]) for n in listed] == [
                    (1, {"__typename": "YourInvitation", "gameId": game_id, "hostId": host})
                ]
                # the same instant (the API's DateTime shows milliseconds)
                at = datetime.fromisoformat(got["data"]["at"])
                shown = datetime.fromisoformat(listed[0]["at"])
                assert shown == at.replace(microsecond=at.microsecond // 1000 * 1000)

                [message] = await _settled(http, key, endpoint, 1)
                assert json.loads(message["payload"]) == got
                assert message["attempts"] == [{"statusCode": 204, "error": None}]

                # a replay: the same webhook-id, taken (204) and not printed again
                replayed = await _ok(http, key, "replayWebhookMessage", REPLAY, id=message["id"])
                assert replayed == {
                    "__typename": "WebhookMessage",
                    "id": message["id"],
                    "status": "PENDING",
                }
                [again] = await _settled(http, key, endpoint, 2)
                assert [a["statusCode"] for a in again["attempts"]] == [204, 204]

                # a new secret: the old one signs too for the overlap, so the
                # receiver, still on the old one, takes the next delivery
                rotated = await _ok(http, key, "rotateWebhookSecret", ROTATE, id=endpoint)
                ISSUED_TOKENS.append(rotated["secret"])
                assert rotated["endpoint"]["previousSecretUntil"] is not None
                second_game = await invite()
                assert rx.next_line()["data"]["notice"]["gameId"] == second_game
                await _settled(http, key, endpoint, 1)

                # Bob wants no pushes: his next notification makes no message
                # (written with the notification: none exists once it is)
                chosen = await _ok(
                    http, bob_token, "updateNotificationSettings", PUSH_SETTINGS, push=[]
                )
                assert chosen == {"__typename": "NotificationSettings", "push": []}
                await invite()
                assert len(await _messages(http, key, endpoint)) == 2
                mine = await _ok(http, bob_token, "me", MY_NOTIFICATIONS)
                assert mine["notificationSettings"] == {"push": []}
                assert [n["seq"] for n in mine["notifications"]["notifications"]] == [1, 2, 3]
                assert rx.stop() == []
    assert_no_leak(srv)


def test_the_guide_quotes_the_receivers_as_they_are() -> None:
    quotes = QUOTED.findall(GUIDE.read_text(encoding="utf-8"))
    assert sorted(path for path, _ in quotes) == [
        "examples/webhooks/receiver.mjs",
        "examples/webhooks/receiver.py",
    ]
    for path, text in quotes:
        assert text in (ROOT / path).read_text(encoding="utf-8"), f"{path} changed: quote it anew"
