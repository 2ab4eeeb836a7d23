"""Presence changes on the bus as JSON (infra/codec.py): read back as
written, told apart from events and lobby updates, strict about types."""

from __future__ import annotations

import pytest

from domain.presence import PresenceChange
from infra import codec


def test_a_presence_change_reads_back_as_written() -> None:
    change = PresenceChange("g1", 2, False)
    data = codec.message_to_json(change)
    assert data == {"presence": {"gameId": "g1", "seat": 2, "connected": False}}
    assert codec.message_from_json(data) == change
    assert "seq" not in data  # not an event of the log


@pytest.mark.parametrize(
    "bad",
    [
        {"presence": {"gameId": "g1", "seat": "2", "connected": False}},
        {"presence": {"gameId": "g1", "seat": 2, "connected": 0}},
        {"presence": {"gameId": 1, "seat": 2, "connected": True}},
        {"presence": {"gameId": "g1", "connected": True}},
    ],
)
def test_a_malformed_presence_change_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises((TypeError, KeyError)):
        codec.message_from_json(bad)
