"""The decision records' index (docs/decisions/README.md) lists every record
once, under its own title's number, with the status the record gives."""

from __future__ import annotations

import re
from pathlib import Path

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions"
ROW = re.compile(r"^\| \[(\d{4})\]\(([^)]+)\) \| .+ \| (.+) \|$")


def _rows() -> list[tuple[str, str, str]]:
    text = (DECISIONS / "README.md").read_text(encoding="utf-8")
    return [m.groups() for line in text.splitlines() if (m := ROW.match(line))]  # type: ignore[misc]


def _status(record: Path) -> str:
    """The first line of the record's Status section."""
    lines = record.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Status") + 1
    return next(line for line in lines[start:] if line.strip())


def test_every_record_is_listed_once() -> None:
    numbers = [number for number, _, _ in _rows()]
    records = sorted(p.name for p in DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert len(numbers) == len(set(numbers)), "a record listed twice"
    assert sorted(link for _, link, _ in _rows()) == records
    assert all(link.startswith(number) for number, link, _ in _rows())


def test_each_rows_status_is_the_records() -> None:
    """The row's status begins as the record's does (Accepted, Superseded
    by ..., Amended ...): a record that changed status changes its row."""
    for number, link, status in _rows():
        first_word = _status(DECISIONS / link).split()[0].rstrip(";.,")
        assert status.split()[0].rstrip(";.,") == first_word, (number, status)
