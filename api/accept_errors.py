"""The event loop's exception handler, quiet about failed accepts (issue #14,
docs/decisions/0044).

Out of descriptors, asyncio's ``_accept_connection`` reports each failed
``accept()`` to ``loop.call_exception_handler`` ("socket.accept() out of
system resource"), which logs it as an error with a traceback: ~80,000 lines
in 20 s. Here those become one warning an interval
(``MMK_CONNECTION_LOG_INTERVAL``) with a count and no traceback; anything
else goes to the loop's default handler, as before, but asyncio's retry of
such an accept running after the server closed at shutdown (a debug line).
"""

from __future__ import annotations

import asyncio
import errno
import logging
from typing import Any

from api.throttled_log import ThrottledLog

log = logging.getLogger("mmk.connections")
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def is_accept_failure(context: dict[str, Any]) -> bool:
    """asyncio's report of an ``accept()`` that ran out of a resource."""
    exc = context.get("exception")
    return str(context.get("message", "")).startswith("socket.accept() out of system") or (
        isinstance(exc, OSError) and exc.errno in OUT_OF_RESOURCES and "socket" in context
    )


def is_accept_after_close(context: dict[str, Any]) -> bool:
    """asyncio's retry of a failed accept (it waits a second) that ran after
    the server closed its socket at shutdown: harmless, nothing to accept."""
    exc = context.get("exception")
    message = str(context.get("message", ""))
    retried = "._start_serving(" in message or "._accept_connection(" in message
    closed_socket = isinstance(exc, ValueError) or (
        isinstance(exc, OSError) and exc.errno in (errno.EBADF, errno.ENOTSOCK)
    )
    return retried and "<Server sockets=()>" in message and closed_socket


class AcceptFailures:
    """A loop exception handler: accept failures throttled, the rest as usual."""

    def __init__(self, interval: float) -> None:
        self.line = ThrottledLog(log, logging.WARNING, interval)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if is_accept_after_close(context):
            log.debug("an accept retried after the server closed: %s", context.get("exception"))
            return
        if not is_accept_failure(context):
            loop.default_exception_handler(context)
            return
        exc = context.get("exception")
        self.line("accept() failed: %s; new connections wait", exc or context.get("message"))


def install(loop: asyncio.AbstractEventLoop, interval: float) -> None:
    """Makes ``loop`` throttle its accept failures (once, at start-up)."""
    if loop.get_exception_handler() is None:
        loop.set_exception_handler(AcceptFailures(interval))
