"""Your app's backend in front of an MMK server: it signs its own users in
to MMK with a service key (docs/sign-in.md, "Your app's backend: service
keys"), and turns MMK's webhooks into pushes (docs/push-notifications.md).

- ``POST /sign-in`` with ``{"userId": "user-42", "name": "Ann", "device":
  "iPhone"}``: the MMK token for that user, issued by ``issuePlayerToken``
  (the same player for the same ``userId`` every time, a session per
  call). Answers ``{"token": "...", "playerId": "..."}``; the device sends
  the token to MMK as ``Authorization: Bearer <token>``. Your own sign-in
  comes first: here the user id is read from the body, where your session
  would give it.
- ``POST /mmk-webhooks``: a notification from MMK. Checked by the Standard
  Webhooks reference library (the signature over the exact bytes received,
  the timestamp), handled once per ``webhook-id``, answered 204 at once;
  :func:`push` then tells the user (here: one JSON line on stdout in place
  of APNs, FCM or Web Push).

Set up once (the key and the secret are printed once; keep them secret):

    mmk service-key create --name "App backend" --scopes players:write,webhooks
    MMK_URL=http://127.0.0.1:8000/graphql MMK_SERVICE_KEY=mmk_sk_... \\
      python backend.py register https://app.example.com/mmk-webhooks
    # WEBHOOK_SECRET=whsec_...

then run it:

    MMK_URL=... MMK_SERVICE_KEY=mmk_sk_... WEBHOOK_SECRET=whsec_... PORT=8080 \\
      python backend.py serve

``PORT`` (8080; 0: any free port) and ``HOST`` (127.0.0.1): where it
listens, named on stderr. Needs ``pip install standardwebhooks==1.3.0``;
the rest is the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import urllib.request
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

MAX_BODY = 64 * 1024  # bytes; MMK's webhook bodies are well under 1 KiB
KINDS = ("YOUR_TURN", "YOUR_DEADLINE_SOON", "YOUR_INVITATION", "YOUR_GAME_ENDED")

ISSUE = """mutation($user: String!, $name: String!, $device: String, $key: String) {
  issuePlayerToken(externalId: $user, name: $name, label: $device, idempotencyKey: $key) {
    __typename
    ... on IssuedPlayerToken { token player { id } }
    ... on Refusal { code message }
  }
}"""
REGISTER = """mutation($url: String!, $kinds: [NoticeKind!]!) {
  createWebhookEndpoint(url: $url, kinds: $kinds, description: "app backend") {
    __typename
    ... on WebhookEndpointSecret { secret endpoint { id } }
    ... on Refusal { code message }
  }
}"""


class MmkError(Exception):
    """MMK refused the call (a GraphQL error, or a ``Refusal``)."""


class Mmk:
    """The MMK API as this backend calls it: with its service key."""

    def __init__(self, url: str, service_key: str) -> None:
        self.url, self.key = url, service_key

    def call(self, query: str, **variables: Any) -> dict[str, Any]:
        """The one root field's result."""
        request = urllib.request.Request(
            self.url,
            data=json.dumps({"query": query, "variables": variables}).encode(),
            headers={"content-type": "application/json", "authorization": f"Bearer {self.key}"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            body: dict[str, Any] = json.load(answer)
        if body.get("errors"):
            raise MmkError(body["errors"][0]["message"])
        (result,) = body["data"].values()
        if result["__typename"] == "Refusal":
            raise MmkError(f"{result['code']}: {result['message']}")
        return dict(result)

    def issue_token(self, user_id: str, name: str, device: str | None) -> dict[str, str]:
        """A token for your user; retried once with the same idempotency key,
        so a lost answer opens no second session."""
        key = str(uuid.uuid4())
        for attempt in (1, 2):
            try:
                issued = self.call(ISSUE, user=user_id, name=name, device=device, key=key)
                return {"token": issued["token"], "playerId": issued["player"]["id"]}
            except OSError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def push(body: dict[str, Any]) -> None:
    """One verified notification, handled once. A real backend queues the
    push for the user's devices here and returns at once: the server waits
    for the answer. Here: one JSON line on stdout."""
    data, notice = body["data"], body["data"]["notice"]
    if data["externalId"] is None:  # a guest, not one of your users
        return
    deadline = notice.get("deadline")
    if deadline and datetime.fromisoformat(deadline) < datetime.now(UTC):
        return  # a replayed, stale "your turn"
    texts = {
        "YOUR_TURN": "It is your turn",
        "YOUR_DEADLINE_SOON": "Your turn is about to time out",
        "YOUR_INVITATION": "You are invited to a game",
        "YOUR_GAME_ENDED": "Your game has ended",
    }
    sent = {
        "to": data["externalId"],
        "kind": data["kind"],
        "gameId": notice.get("gameId"),
        "seq": data["seq"],
        "text": texts.get(data["kind"], data["kind"]),
    }
    sys.stdout.write(json.dumps({"push": sent}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Backend(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], mmk: Mmk, secret: str) -> None:
        super().__init__(address, Handler)
        self.mmk = mmk
        self.webhook = Webhook(secret)
        # The webhook-ids handled. Keep them in your database (a unique key)
        # for a week or more: a replay sends the same id days later.
        self.seen: set[str] = set()
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: Backend
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("content-length", ""))
        except ValueError:
            return self.answer(411)
        if not 0 <= length <= MAX_BODY:
            return self.answer(413)
        raw = self.rfile.read(length)  # the exact bytes: they are what is signed
        if self.path == "/mmk-webhooks":
            return self.webhook(raw)
        if self.path == "/sign-in":
            return self.sign_in(raw)
        self.answer(404)

    def webhook(self, raw: bytes) -> None:
        try:
            body = self.server.webhook.verify(raw, dict(self.headers.items()))
        except WebhookVerificationError:
            return self.answer(401)
        msg_id = self.headers["webhook-id"]
        with self.server.lock:
            if msg_id not in self.server.seen:
                push(body)
                self.server.seen.add(msg_id)
        self.answer(204)

    def sign_in(self, raw: bytes) -> None:
        try:
            asked = json.loads(raw)
            user, name, device = asked["userId"], asked["name"], asked.get("device")
        except (ValueError, KeyError, TypeError):
            return self.answer(400)
        try:
            issued = self.server.mmk.issue_token(user, name, device)
        except MmkError as e:
            return self.answer(400, {"error": str(e)})
        except OSError:
            return self.answer(502, {"error": "MMK cannot be reached"})
        self.answer(200, issued)

    def answer(self, status: int, body: dict[str, Any] | None = None) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if payload:
            self.send_header("content-type", "application/json")
        if status != 204:
            self.send_header("content-length", str(len(payload)))
        if status in (411, 413):
            self.send_header("connection", "close")  # the body was not read
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)


def register(mmk: Mmk, url: str, kinds: list[str]) -> None:
    """Once: MMK posts these kinds to ``url`` from now on."""
    made = mmk.call(REGISTER, url=url, kinds=kinds)
    print(f"endpoint {made['endpoint']['id']}", file=sys.stderr)
    print(f"WEBHOOK_SECRET={made['secret']}", flush=True)


def serve(mmk: Mmk) -> None:
    secret = os.environ.get("WEBHOOK_SECRET", "")
    if not secret.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the endpoint's secret (whsec_...): `register` printed it")
    host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8080"))
    server = Backend((host, port), mmk, secret)
    stop = threading.Thread(target=server.shutdown)
    signal.signal(signal.SIGTERM, lambda *_: stop.start())
    print(f"listening on http://{host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    with server:
        server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description="An app's backend in front of MMK.")
    commands = parser.add_subparsers(dest="command", required=True)
    reg = commands.add_parser("register", help="register the webhook URL; prints its secret")
    reg.add_argument("url")
    reg.add_argument("--kinds", default=",".join(KINDS), help="comma-separated NoticeKinds")
    commands.add_parser("serve", help="sign users in, receive webhooks")
    args = parser.parse_args()
    url, key = os.environ.get("MMK_URL", ""), os.environ.get("MMK_SERVICE_KEY", "")
    if not url or not key.startswith("mmk_sk_"):
        sys.exit("set MMK_URL (http://.../graphql) and MMK_SERVICE_KEY (mmk_sk_...)")
    mmk = Mmk(url, key)
    if args.command == "register":
        register(mmk, args.url, args.kinds.split(","))
    else:
        serve(mmk)


if __name__ == "__main__":
    main()
