"""docs/development.md's example of the rules engine runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DEVELOPMENT = Path(__file__).resolve().parents[2] / "docs" / "development.md"


def test_the_rules_engine_example_runs() -> None:
    text = DEVELOPMENT.read_text(encoding="utf-8")
    (code,) = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    scope: dict[str, object] = {}
    exec(compile(code, str(DEVELOPMENT), "exec"), scope)
    events = scope["events"]
    assert isinstance(events, list | tuple) and events
