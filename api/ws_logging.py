"""A client that goes away while its subscription is being sent to is
normal on mobile networks: Strawberry logs it as an error with a traceback;
this filter keeps such records out of the error log."""

from __future__ import annotations

import logging

from starlette.websockets import WebSocketDisconnect

STRAWBERRY_TASK_LOGGER = "strawberry.ws.task"


def _is_disconnect(error: BaseException | None) -> bool:
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, WebSocketDisconnect) or type(error).__name__ == "ClientDisconnected":
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


class DisconnectFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not _is_disconnect(exc)


def install() -> None:
    logger = logging.getLogger(STRAWBERRY_TASK_LOGGER)
    if not any(isinstance(f, DisconnectFilter) for f in logger.filters):
        logger.addFilter(DisconnectFilter())
