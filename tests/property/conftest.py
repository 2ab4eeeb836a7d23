"""Report how many games the property tests played (and under which scale)."""

from __future__ import annotations

import pytest

from tests.property.harness import GAMES_PLAYED, SCALE


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not GAMES_PLAYED:
        return
    total = sum(GAMES_PLAYED.values())
    terminalreporter.write_sep("-", f"property tests: {total} games played (scale x{SCALE})")
    for test, games in sorted(GAMES_PLAYED.items()):
        terminalreporter.write_line(f"  {games:6d}  {test}")
