"""The server secret that keys ``createPlayer``'s replay records
(docs/decisions/0041): ``MMK_SECRET_KEY`` when set (the same on every
instance), else the one migration 0004 generated into the database."""

from __future__ import annotations

import sqlalchemy as sa

from infra.db.tables import server_secrets
from infra.settings import Settings

SECRET_NAME = "idempotency"  # the row migration 0004 writes


class MissingSecret(RuntimeError):
    """Neither ``MMK_SECRET_KEY`` nor a generated secret in the database."""


def server_secret(settings: Settings, engine: sa.Engine) -> bytes:
    """The secret's bytes (an HMAC key)."""
    if settings.secret_key:
        return settings.secret_key.encode()
    query = sa.select(server_secrets.c.value).where(server_secrets.c.name == SECRET_NAME)
    with engine.connect() as conn:
        value = conn.execute(query).scalar()
    if not value:
        raise MissingSecret(
            "no server secret: set MMK_SECRET_KEY, or let the server migrate its database"
        )
    return str(value).encode()
