"""``mmk serve`` with pushed frames off: every live event goes Strawberry's
way (the operation's task wakes for it), as before decision 0038. The
ramp's target ``unpushed`` runs it beside ``mmk`` to measure the seam with
and without it in the same turns (#23).

    python -m tests.bench.capacity.unpushed serve --port 8001
"""

from __future__ import annotations

import sys

import api.app  # noqa: F401  (the schema first, in the server's own order)
from api.cli import main
from api.graphql import subscriptions


def _never(meter: object) -> tuple[None, None]:
    """No pusher: the stream yields every event."""
    return None, None


subscriptions._pushing = _never

if __name__ == "__main__":
    sys.exit(main())
