"""The README and the guides of docs/ link only to files that exist and to
headings (or anchors) those files have, as GitHub renders them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    str(p.relative_to(ROOT))
    for p in [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        *ROOT.glob("docs/**/*.md"),
        *ROOT.glob("examples/*.md"),
        *ROOT.glob("examples/*/README.md"),
    ]
)
"""Every guide, decision record and example's README."""
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ *```.*?^ *```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped,
    spaces as hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found = {slug(h) for h in re.findall(r"^#{1,6} (.*)$", text, re.M)}
    return found | set(re.findall(r'<a id="([^"]+)"></a>', text))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_link_resolves(document: str) -> None:
    path = ROOT / document
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        exists = linked.exists()
        if not exists or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
            broken.append(target)
    assert not broken, f"{document}: {broken}"
