"""A player's identity at the app's identity provider (issue #24): ``iss``
and ``sub`` of a verified JWT name exactly one player."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class VerifiedIdentity:
    """What a verified token says: who vouched (``issuer``), for whom
    (``subject``), the name it gives, if any, and until when it holds."""

    issuer: str
    subject: str
    name: str | None
    expires_at: datetime
