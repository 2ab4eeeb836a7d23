"""Webhooks for the app's backend (issue #25, docs/decisions/0064): each
notification of a kind an endpoint takes becomes a *message* to it, written
in the notification's own transaction (an outbox), then delivered, signed
as the Standard Webhooks specification says, and retried until it is taken
or its time runs out. Pure: the deliverer (infra) does the I/O.

A message's body is its player's notification with the app's id for the
player (its external id, #24) and carries only what the player may see
(R11): it is made from the notice the player's own stream carries.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from domain.errors import BadRequest
from domain.notifications import NOTICE_KINDS, Notice, Notification

Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24
MAX_URL = 2000
MAX_DESCRIPTION = 200
MAX_ENDPOINTS = 20
MAX_ATTEMPTS_SHOWN = 50
"""A message's log in the API shows at most its last 50 tries (a replay adds more)."""
SETTINGS_ENDPOINT = "whk_settings"
"""The id of the endpoint named by the settings (``MMK_WEBHOOK_URL``)."""


def _name(cls: type[Notice]) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).upper()


KINDS: dict[str, type[Notice]] = {_name(k): k for k in NOTICE_KINDS}
_KIND_OF = {k: name for name, k in KINDS.items()}


def kind_of(cls: type[Notice]) -> str:
    """``YourTurn`` → ``YOUR_TURN``: a notice kind's name in the API and in
    a message's ``type``."""
    return _KIND_OF[cls]


ALL_KINDS = frozenset(KINDS)
PUSHED_ONLY_WHEN_AWAY = frozenset({"YOUR_TURN", "YOUR_DEADLINE_SOON"})
"""Kinds not pushed to a player who holds a live stream of the game
(seat presence, 0047): they see it there."""


class Status(StrEnum):
    """A message's state: waiting for its next attempt, taken (2xx), given
    up after its retries, or not sent (the player held the game's stream).
    A kind the player does not want pushed makes no message at all."""

    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


class Disabled(StrEnum):
    BY_APP = "BY_APP"
    FAILING = "FAILING"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A URL of the app's backend and the kinds it takes. Its secret (and
    the previous one, which also signs until ``previous_until``) is kept
    sealed apart: see :class:`Secrets`."""

    id: str
    url: str
    kinds: frozenset[str]
    description: str
    created_at: datetime
    disabled_at: datetime | None = None
    disabled_reason: Disabled | None = None
    previous_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class Secrets:
    """An endpoint's signing secrets as stored (sealed with the server's key)."""

    current: str
    previous: str | None = None
    previous_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try of a message: when, the answer's status (None: no answer,
    see ``error``), how long it took."""

    at: datetime
    status_code: int | None
    latency_ms: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """A notification on its way to one endpoint. ``id`` is the
    ``webhook-id`` of every attempt (receivers drop repeats by it);
    ``payload`` the exact body, the same on every attempt."""

    id: str
    endpoint_id: str
    player_id: str
    seq: int
    kind: str
    game_id: str
    created_at: datetime
    payload: str
    status: Status = Status.PENDING
    next_at: datetime | None = None
    tries: int = 0
    retry_from: datetime | None = None
    attempts: tuple[Attempt, ...] = field(default=())
    retry_tries: int = 0  # ``tries`` when its retries (re)started: a replay's are fresh


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an attempt did to its message: the new status, when to try
    again, and whether its endpoint is now disabled."""

    status: Status
    next_at: datetime | None
    disable: bool = False


@dataclass(frozen=True, slots=True)
class Policy:
    """The settings of webhooks: the networks a private target may be in
    (``MMK_WEBHOOK_ALLOWED_NETWORKS``), the retries, how long a done
    message is kept in the log."""

    allowed: Networks = ()
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy())
    retention: timedelta = timedelta(days=7)
    overlap: timedelta = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter (``first``, times ``factor`` each
    try, at most ``cap``); the last try comes ``give_up_after`` the first,
    and if it fails too the message has failed."""

    first: timedelta = timedelta(seconds=5)
    factor: float = 4.0
    cap: timedelta = timedelta(hours=6)
    give_up_after: timedelta = timedelta(days=1)

    def delay(self, tries: int, jitter: float) -> timedelta:
        """The wait after the ``tries``-th failed try; ``jitter`` in [0, 1)
        spreads it over ±20%."""
        base = min(
            self.first.total_seconds() * self.factor ** (tries - 1), self.cap.total_seconds()
        )
        return timedelta(seconds=base * (0.8 + 0.4 * jitter))

    def after(self, m: Message, attempt: Attempt, jitter: float) -> Outcome:
        """The message's fate after ``attempt`` (its ``m.tries``-th)."""
        if attempt.status_code is not None and 200 <= attempt.status_code < 300:
            return Outcome(Status.DELIVERED, None)
        end = (m.retry_from or m.created_at) + self.give_up_after
        if attempt.at >= end:
            return Outcome(Status.FAILED, None, disable=True)
        over = attempt.at + timedelta(milliseconds=attempt.latency_ms)  # waited from its end
        wait = self.delay(m.tries - m.retry_tries, jitter)
        return Outcome(Status.PENDING, min(over + wait, end))


def message_id(endpoint_id: str, player_id: str, seq: int) -> str:
    """The one id of a notification's message to an endpoint."""
    raw = hashlib.sha256(f"{endpoint_id}\x00{player_id}\x00{seq}".encode()).digest()[:16]
    return "msg_" + base64.b32encode(raw).decode().rstrip("=").lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def instant(at: datetime) -> str:
    """As the API writes a ``DateTime``: UTC, milliseconds, ``Z``."""
    return at.astimezone(UTC).isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"


def notice_fields(notice: Notice) -> dict[str, Any]:
    """The notice's fields as the API names and writes them (``gameId``,
    ``deadline`` as a ``DateTime``), with its ``__typename``."""
    out: dict[str, Any] = {"__typename": type(notice).__name__}
    for f in fields(notice):
        value = getattr(notice, f.name)
        out[_camel(f.name)] = instant(value) if isinstance(value, datetime) else value
    return out


def payload_of(n: Notification, external_id: str | None) -> dict[str, Any]:
    """A message's body (Standard Webhooks: ``type``, ``timestamp``,
    ``data``): the notification, its player's MMK id and external id."""
    kind = kind_of(type(n.notice))
    return {
        "type": f"notification.{kind.lower()}",
        "timestamp": instant(n.at),
        "data": {
            "playerId": n.player_id,
            "externalId": external_id,
            "seq": n.seq,
            "at": instant(n.at),
            "kind": kind,
            "notice": notice_fields(n.notice),
        },
    }


def outbox(
    endpoints: Iterable[Endpoint],
    told: Sequence[Notification],
    push_kinds: Mapping[str, frozenset[str]],
    external_ids: Mapping[str, str],
) -> list[Message]:
    """The messages of a transaction's notifications: one for each live
    endpoint that takes its kind, unless its player chose not to have that
    kind pushed (``updateNotificationSettings``)."""
    live = [e for e in endpoints if e.disabled_at is None]
    made: list[Message] = []
    for n in told:
        kind = kind_of(type(n.notice))
        if kind not in push_kinds.get(n.player_id, ALL_KINDS):
            continue
        body = json.dumps(payload_of(n, external_ids.get(n.player_id)), separators=(",", ":"))
        made += [
            Message(
                message_id(e.id, n.player_id, n.seq),
                e.id,
                n.player_id,
                n.seq,
                kind,
                n.notice.game_id,
                n.at,
                body,
                next_at=n.at,
            )
            for e in live
            if kind in e.kinds
        ]
    return made


# ---------------------------------------------------------------- signing
def new_secret(raw: bytes) -> str:
    """``whsec_`` and the key's bytes in base64, as the specification writes it."""
    return SECRET_PREFIX + base64.b64encode(raw).decode()


def check_secret(secret: str) -> bytes:
    """The key bytes of a ``whsec_`` secret (``BAD_INPUT`` otherwise)."""
    text = secret.removeprefix(SECRET_PREFIX)
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raw = b""
    if not secret.startswith(SECRET_PREFIX) or not 24 <= len(raw) <= 64:
        raise BadRequest("a webhook secret is whsec_ and 24 to 64 bytes in base64")
    return raw


def signature(secret: str, msg_id: str, timestamp: int, body: str) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">`` (Standard Webhooks)."""
    signed = f"{msg_id}.{timestamp}.{body}".encode()
    digest = hmac.new(check_secret(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secrets: Sequence[str], msg_id: str, timestamp: int, body: str) -> dict[str, str]:
    """The three headers of an attempt; during a rotation's overlap both
    secrets sign (signatures separated by spaces)."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, msg_id, timestamp, body) for s in secrets),
    }


# ---------------------------------------------------------------- targets
def check_kinds(kinds: Sequence[str]) -> frozenset[str]:
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise BadRequest(
            "kinds are one or more of "
            + ", ".join(KINDS)
            + (f" (not {', '.join(unknown)})" if unknown else "")
        )
    return frozenset(kinds)


def check_description(text: str) -> str:
    clean = text.strip()
    if len(clean) > MAX_DESCRIPTION or not clean.isprintable():
        raise BadRequest(f"a description has up to {MAX_DESCRIPTION} printable characters")
    return clean


def parse_networks(text: str) -> Networks:
    """``MMK_WEBHOOK_ALLOWED_NETWORKS``: comma-separated CIDRs."""
    return tuple(
        ipaddress.ip_network(p.strip(), strict=False) for p in text.split(",") if p.strip()
    )


def check_url(url: str, allowed: Networks) -> str:
    """An ``http(s)`` URL with a host, no credentials, no fragment, its host
    written in ASCII (an international name as IDNA: ``xn--...``); a literal
    address must be one :func:`reachable` allows (names are checked again at
    each delivery, once resolved). The URL as it will be used."""
    if len(url) > MAX_URL:
        raise BadRequest(f"a webhook URL has at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise BadRequest(f"not a URL: {e}") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise BadRequest("a webhook URL is https:// (or http://) with a host")
    if parts.username or parts.password or parts.fragment:
        raise BadRequest("a webhook URL has no user, password or #fragment")
    host = parts.hostname
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None:
        try:
            ascii_host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise BadRequest(f"{host!r} is not a host name") from None
        if ascii_host != host:
            netloc = ascii_host if port is None else f"{ascii_host}:{port}"
            url = parts._replace(netloc=netloc).geturl()
        if ascii_host.lower() == "localhost" or ascii_host.lower().endswith(".localhost"):
            address = ipaddress.ip_address("127.0.0.1")
        else:
            return url
    if not reachable(address, allowed):
        raise BadRequest(f"{host} is a private, loopback or link-local address")
    return url


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")


def _inner(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to (mapped, 6to4, Teredo's
    client, NAT64, IPv4-compatible): it is that address the packets reach."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in n for n in (*_NAT64, _COMPATIBLE)):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def reachable(address: ipaddress.IPv4Address | ipaddress.IPv6Address, allowed: Networks) -> bool:
    """A public address (and, for an IPv6 address that carries an IPv4 one,
    that one public too), or one in the networks the settings allow."""
    if any(address in n for n in allowed):
        return True
    if isinstance(address, ipaddress.IPv6Address):
        inner = _inner(address)
        if inner is not None and not reachable(inner, allowed):
            return False
        if address.is_site_local:
            return False
        if inner is not None and address.ipv4_mapped is not None:
            return True  # the mapped IPv4 address is the one reached, and it is public
    return address.is_global and not address.is_multicast
