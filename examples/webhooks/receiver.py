"""A receiver of the MMK server's webhooks (docs/push-notifications.md).

Each delivery is checked by the Standard Webhooks reference library, never
by hand: the signature over the exact bytes received, and the timestamp
(5 minutes of skew either way). A delivery whose ``webhook-id`` was handled
already (a retry whose answer was lost, a replay) is acknowledged and
dropped. A verified body goes to :func:`push`, which here prints it as one
JSON line on stdout; a real backend would queue the push to APNs, FCM or
Web Push there and answer at once.

    pip install standardwebhooks==1.3.0
    WEBHOOK_SECRET=whsec_... PORT=8080 python receiver.py

``WEBHOOK_SECRET``: the endpoint's secret, as ``createWebhookEndpoint`` or
``rotateWebhookSecret`` showed it. ``PORT`` (8080; 0: any free port, named
on stderr) and ``HOST`` (127.0.0.1): where to listen. Answers: 204 taken
(or a repeat), 401 not signed with the secret, 413 too large, 411 no
length, 405 not a POST.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

MAX_BODY = 64 * 1024  # bytes; MMK's bodies are well under 1 KiB


def push(body: dict[str, Any]) -> None:
    """One verified notification, handled once: here printed as a JSON line.
    Send the push from a queue, not here: the server waits for the answer."""
    sys.stdout.write(json.dumps(body, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Receiver(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], secret: str) -> None:
        super().__init__(address, Handler)
        self.webhook = Webhook(secret)
        # The webhook-ids handled. Keep them in your database (a unique key)
        # for a week or more: a replay sends the same id days later.
        self.seen: set[str] = set()
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"  # keep-alive: the server reuses connections

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("content-length", ""))
        except ValueError:
            return self.answer(411)
        if not 0 <= length <= MAX_BODY:
            return self.answer(413)
        raw = self.rfile.read(length)  # the exact bytes: they are what is signed
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

    def do_GET(self) -> None:
        self.answer(405)

    def answer(self, status: int) -> None:
        self.send_response(status)
        if status == 405:
            self.send_header("allow", "POST")
        if status != 204:
            self.send_header("content-length", "0")
        if status in (411, 413):
            self.send_header("connection", "close")  # the body was not read
            self.close_connection = True
        self.end_headers()


def main() -> None:
    secret = os.environ.get("WEBHOOK_SECRET", "")
    if not secret.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the endpoint's secret (whsec_...)")
    host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8080"))
    server = Receiver((host, port), secret)
    stop = threading.Thread(target=server.shutdown)
    signal.signal(signal.SIGTERM, lambda *_: stop.start())
    print(f"listening on http://{host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    with server:
        server.serve_forever()


if __name__ == "__main__":
    main()
