"""The in-process revocation notices (infra/revocations/memory.py,
docs/decisions/0053): every listener hears a notice before ``announce``
returns, a failing listener keeps it from no other, and a listener that
stopped hears nothing more. The Redis adapter: tests/integration/
test_redis_revocations.py."""

from __future__ import annotations

import logging

import pytest

from infra.revocations.memory import InProcessRevocations


class Listener:
    def __init__(self, fail: bool = False) -> None:
        self.heard: list[str] = []
        self.misses = 0
        self.fail = fail

    def revoked(self, digest: str) -> None:
        self.heard.append(digest)
        if self.fail:
            raise RuntimeError("listener bug")

    def missed(self) -> None:
        self.misses += 1


async def test_every_listener_hears_a_notice_at_once(caplog: pytest.LogCaptureFixture) -> None:
    notices = InProcessRevocations()
    failing, other = Listener(fail=True), Listener()
    notices.listen(failing)
    stop = notices.listen(other)
    with (
        caplog.at_level(logging.ERROR, logger="mmk.revocations"),
        pytest.raises(StopIteration),  # done in one step: never suspended
    ):
        notices.announce("d1").send(None)
    assert failing.heard == other.heard == ["d1"]
    assert "a listener failed on a notice" in caplog.text
    stop()
    stop()  # twice is harmless
    await notices.announce("d2")
    assert other.heard == ["d1"] and failing.heard == ["d1", "d2"]
    assert other.misses == 0  # nothing is ever missed in one process
    notices.start()
    await notices.aclose()
    await notices.announce("d3")
    assert failing.heard == ["d1", "d2"]
