"""docs/rules.md is the rules' reference: every rule id the schema, the
rules engine, the API or the tests cite is there, each with its own anchor
(``R7.2``: ``docs/rules.md#r7-2``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"
RULE_ID = re.compile(r"\bR\d+(?:\.\d+[a-z]?)?\b")
# A rule as docs/rules.md defines it: its anchor, then its id in bold (a
# rule) or after the anchor (a section heading).
DEFINED = re.compile(r'<a id="([a-z0-9-]+)"></a>(?:\*\*)?(R\d+(?:\.\d+[a-z]?)?)\b')


def anchor(rule: str) -> str:
    """The anchor of a rule id: ``R7.0b`` is ``r7-0b``."""
    return rule.lower().replace(".", "-")


def defined() -> dict[str, str]:
    """Each rule id docs/rules.md defines, with its anchor."""
    pairs = DEFINED.findall(RULES.read_text(encoding="utf-8"))
    ids = [rule for _, rule in pairs]
    assert len(ids) == len(set(ids)), "a rule id defined twice"
    return {rule: a for a, rule in pairs}


def cited(*paths: Path) -> dict[str, set[str]]:
    """Each rule id cited in the files, with the files citing it."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for rule in RULE_ID.findall(path.read_text(encoding="utf-8")):
            found.setdefault(rule, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_rule_has_its_anchor() -> None:
    rules = defined()
    assert {rule: anchor(rule) for rule in rules} == rules
    # Sections R1 to R11, and rules such as R7.0b.
    assert {f"R{n}" for n in range(1, 12)} <= set(rules)
    assert {"R1.1", "R7.0", "R7.0b", "R7.7", "R11"} <= set(rules)


def test_the_schema_cites_only_rules_of_docs_rules() -> None:
    found = cited(ROOT / "schema.graphql")
    assert len(found) > 40
    assert not set(found) - set(defined())


def test_the_code_cites_only_rules_of_docs_rules() -> None:
    """The rules engine's docstrings, and the API's and tests' too."""
    files = [p for d in ("domain", "api", "infra", "tests") for p in (ROOT / d).rglob("*.py")]
    found = cited(*files)
    missing = {rule: sorted(where) for rule, where in found.items() if rule not in defined()}
    assert not missing


def test_the_anchor_links_resolve() -> None:
    text = RULES.read_text(encoding="utf-8")
    links = set(re.findall(r"\]\(#([a-z0-9-]+)\)", text))
    assert links and links <= set(defined().values())
