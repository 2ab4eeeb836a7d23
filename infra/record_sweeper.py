"""The expiry sweep of idempotency records (docs/decisions/0041) and read
notifications (#25), run every ``interval`` seconds on every instance: each
run deletes what expired by then, so two instances sweeping at once only
find less to delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from infra.periodic import Periodic

SWEEP_INTERVAL = 600.0  # seconds; a record outlives its expiry by at most this


class RecordSweeper(Periodic):
    """Calls ``sweep`` at start and then every ``interval`` seconds."""

    def __init__(
        self, sweep: Callable[[], Awaitable[int]], interval: float = SWEEP_INTERVAL
    ) -> None:
        super().__init__(
            "record sweep", sweep, interval, "deleted %d expired record(s) and notification(s)"
        )
