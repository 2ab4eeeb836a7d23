"""Logging: one JSON object per line, with the request id of the request being
handled, and secrets redacted (tokens, authorization values, URL passwords).

What is logged never includes request bodies or GraphQL variables; the
redaction here is the second line of defence for what slips into a message.
"""

from __future__ import annotations

import logging
import re
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import lru_cache
from typing import IO, Any

import orjson
from sqlalchemy.engine import make_url

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id of the request being handled (set by the API's middleware)."""

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(r"token|authorization|password|passwd|secret|cookie", re.I)
_BEARER = re.compile(r"\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", re.I)
_KEY_VALUE = re.compile(
    r"""(\b(?:authorization|access_token|token|password|secret)["']?\s*[:=]\s*["']?)"""
    r"""(?:(?:bearer|basic)\s+)?[^\s"',;&}]+""",
    re.I,
)
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's coloured duplicate of the message
}


_HINT = re.compile(r"bearer|token|authorization|password|secret", re.I)


def redact_text(text: str) -> str:
    """``text`` with bearer tokens and ``token=...``-like values hidden."""
    if not _HINT.search(text):  # the common case: one scan
        return text
    return _KEY_VALUE.sub(rf"\1{REDACTED}", _BEARER.sub(rf"\1{REDACTED}", text))


@lru_cache(maxsize=1024)
def _secret_key(key: str) -> bool:
    return _SECRET_KEY.search(key) is not None


def _scrub(key: str, value: Any) -> Any:
    if _secret_key(key):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {str(k): _scrub(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub("", v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact_text(str(value))


class JsonFormatter(logging.Formatter):
    """``{"timestamp", "level", "logger", "message", "request_id", ...extra}``
    on one line; ``extra`` fields named like secrets are redacted."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact_text(record.getMessage()),
            "request_id": getattr(record, "request_id", None) or request_id.get(),
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and key not in out and not key.startswith("_"):
                out[key] = _scrub(key, value)
        if record.exc_info:
            out["exception"] = redact_text(self.formatException(record.exc_info))
        if record.stack_info:
            out["stack"] = redact_text(self.formatStack(record.stack_info))
        return orjson.dumps(out, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


QUIET = {"sqlalchemy": "WARNING"}
"""Loggers kept quiet even at debug: SQLAlchemy would log result rows (hands)."""


def configure_logging(level: str, stream: IO[str] | None = None) -> None:
    """JSON lines on ``stream`` (stderr) for every logger, at ``level``."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    for name, quiet in QUIET.items():
        logging.getLogger(name).setLevel(quiet)


def log_config(level: str) -> dict[str, Any]:
    """``logging.config.dictConfig`` for uvicorn (``log_config=``): JSON on
    stderr for the root logger, uvicorn's included, in every worker process."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {
            "json": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["json"], "level": level.upper()},
        "loggers": {
            **{name: {"level": quiet} for name, quiet in QUIET.items()},
            **{
                name: {"handlers": [], "propagate": True, "level": level.upper()}
                for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
            },
        },
    }


def redact(url: str) -> str:
    """A database URL without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as nothing rather than leaked
        return "<unparsable url>"
