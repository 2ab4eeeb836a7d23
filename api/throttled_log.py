"""A log line that an attacker can make happen at will, written at most once
an interval with a count of the others (issue #14: a descriptor flood wrote
~80,000 lines with tracebacks in 20 s; docs/decisions/0044)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class ThrottledLog:
    """The first event logs at once; the next ones within ``interval``
    seconds are only counted, and the first event after it logs the count."""

    def __init__(
        self,
        logger: logging.Logger,
        level: int,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger, self.level, self.interval, self.clock = logger, level, interval, clock
        self._last: float | None = None
        self._unlogged = 0

    def __call__(self, message: str, *args: object) -> bool:
        """Logs ``message % args`` with how many were held back; False when
        this one was only counted."""
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            self._unlogged += 1
            return False
        held, self._unlogged, self._last = self._unlogged, 0, now
        if self.logger.isEnabledFor(self.level):
            suffix = f" ({held} more like it since the last such line)" if held else ""
            text = (message % args if args else message) + suffix
            self.logger.log(self.level, text, extra={"count": held + 1})
        return True


class ThrottledRecords(logging.Filter):
    """A library's own lines that a client can cause (``messages``, as the
    library writes them) go through ``line`` instead: once an interval,
    with a count, never with a traceback."""

    def __init__(self, messages: frozenset[str], line: ThrottledLog) -> None:
        super().__init__()
        self.messages, self.line = messages, line

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str) or record.msg not in self.messages:
            return True
        self.line("%s", record.getMessage())
        return False


def add_filter(logger: logging.Logger, records: ThrottledRecords) -> None:
    """Adds ``records`` to ``logger`` once (a filter of its class replaced)."""
    for old in [f for f in logger.filters if isinstance(f, ThrottledRecords)]:
        logger.removeFilter(old)
    logger.addFilter(records)
