"""Logging set-up, and redaction of secrets in what is logged."""

from __future__ import annotations

import logging

from sqlalchemy.engine import make_url


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )


def redact(url: str) -> str:
    """A database URL without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as nothing rather than leaked
        return "<unparsable url>"
