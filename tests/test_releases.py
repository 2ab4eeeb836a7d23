"""The release discipline (docs/releases.md, tools/release.py): schema.graphql
against the last release's kept schema (docs/releases/schema-X.Y.Z.graphql)
with graphql-core's ``find_breaking_changes``; deprecations and additions
pass, a removal only of what that release deprecated and only past its
window, anything else that breaks fails. The check is seen to catch planted
changes, on the real schema and on small made-up histories."""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

import pytest

from tools import release
from tools.release import (
    CHANGELOG,
    PYPROJECT,
    SCHEMA,
    SNAPSHOTS,
    ReleaseError,
    changelog_releases,
    check,
    parse_version,
    snapshots,
)

TODAY = date.today()


# ---------------------------------------------------------------- the real files
def test_the_schema_keeps_the_last_release_s_promises() -> None:
    assert check(SCHEMA.read_text()) == []


def test_every_kept_schema_is_a_dated_release_of_the_changelog() -> None:
    kept = snapshots()
    assert kept, f"no release schema in {SNAPSHOTS}"
    dates = changelog_releases(CHANGELOG.read_text())
    assert set(kept) <= set(dates), "a kept schema's release has no dated CHANGELOG heading"
    # Releases after the first kept one all keep their schema.
    assert [v for v in dates if v >= min(kept)] == sorted(kept, reverse=True)
    version = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert parse_version(version) == max(kept), "pyproject.toml's version is not the last release"
    text = CHANGELOG.read_text()
    assert text.index("## [Unreleased]") < text.index("## [" + version + "]")


# ---------------------------------------------------------------- planted changes
LAST = max(snapshots()) if snapshots() else (0, 0, 0)
DESCRIBED = r'(?:\n  """(?:[^"]|"(?!""))*""")?'  # a field's description, if any
ME = DESCRIBED + r"\n  me: Me(?=\n)"  # Query.me, not deprecated
DEPRECATED_TYPE = DESCRIBED + r'\n  type: String! @deprecated\(reason: "Use __typename"\)'


def planted(pattern: str, replacement: str) -> str:
    """The last release's schema with every match of ``pattern`` replaced."""
    text, count = re.subn(
        pattern, replacement, SNAPSHOTS.joinpath(f"schema-{release.show(LAST)}.graphql").read_text()
    )
    assert count, f"the case no longer applies: {pattern}"
    return text


def test_a_removed_field_is_caught() -> None:
    (problem,) = check(planted(ME, ""))
    assert problem.startswith("Field Query.me was removed. (FIELD_REMOVED) Not allowed")
    assert f"it was not deprecated in {release.show(LAST)}" in problem


def test_a_changed_type_is_caught() -> None:
    found = check(planted(r"(game\(\n(?:.*\n){1,2}?\s*id: )ID!", r"\1String!"))
    assert found == [
        "Argument Query.game(id:) has changed type from ID! to String!. (ARG_CHANGED_KIND) "
        "Not allowed: only removals of deprecated elements past their window may break clients."
    ]
    (problem,) = check(planted(ME, "\n  me: [Me]"))
    assert "Query.me changed type from Me to [Me]" in problem and "FIELD_CHANGED_KIND" in problem


def test_a_required_argument_is_caught() -> None:
    (problem,) = check(planted(ME, "\n  me(as: ID!): Me"))
    assert "REQUIRED_ARG_ADDED" in problem


def test_a_changed_default_is_caught() -> None:
    (problem,) = check(planted(r"timeoutsToTakeover: Int! = 2", "timeoutsToTakeover: Int! = 3"))
    assert "INPUT_FIELD_DEFAULT_VALUE_CHANGE" in problem and "Not allowed" in problem


def test_a_deprecation_and_additions_pass() -> None:
    text = planted(ME, '\n  me: Me @deprecated(reason: "Use whoAmI")\n  whoAmI: Me')
    assert check(text) == []


def test_a_deprecated_field_goes_only_after_its_window() -> None:
    """The event types' ``type`` field, deprecated in the last release."""
    removed = planted(DEPRECATED_TYPE, "")
    next_minor = (LAST[0], LAST[1] + 1, 0)
    too_soon = check(removed, next_minor, TODAY)
    assert too_soon and all(
        "(FIELD_REMOVED) Not allowed: it was deprecated in" in p for p in too_soon
    )
    assert f"removable from {LAST[0]}.{LAST[1] + 2}.0 on" in too_soon[0]
    second_minor = (LAST[0], LAST[1] + 2, 0)
    dates = changelog_releases(CHANGELOG.read_text())
    early = check(removed, second_minor, dates[LAST])
    assert early and "removable from" in early[0] and str(dates[LAST].year) in early[0]
    assert check(removed, second_minor, date(dates[LAST].year + 1, 12, 31)) == []
    patch = check(removed, (*LAST[:2], LAST[2] + 1), date(9999, 1, 1))
    assert patch and "is a patch release, which removes nothing" in patch[0]


# ---------------------------------------------------------------- made-up histories
V1 = """
type Query { game(id: ID!, old: Int @deprecated(reason: "no")): Game, news: News }
type Game { id: ID!, seats: Int @deprecated(reason: "Use players"), players: Int, phase: Phase }
enum Phase { DEAL, PLAY, OLD @deprecated(reason: "gone") }
type News { text: String }
"""


def history(tmp_path: Path, *releases: tuple[str, str, str]) -> tuple[Path, str]:
    """Kept schemas and their CHANGELOG: (version, date, SDL) per release."""
    for version, _, sdl in releases:
        (tmp_path / f"schema-{version}.graphql").write_text(sdl)
    headings = "".join(f"## [{v}] - {d}\n\n" for v, d, _ in reversed(releases))
    return tmp_path, f"# Changelog\n\n## [Unreleased]\n\n{headings}"


def verdict(directory: Path, changelog: str, sdl: str, version: str, today: str) -> list[str]:
    return check(sdl, parse_version(version), date.fromisoformat(today), directory, changelog)


def test_the_window_counts_from_the_first_release_that_deprecates(tmp_path: Path) -> None:
    v2 = V1.replace("players: Int,", 'players: Int, name: String @deprecated(reason: "x"),')
    d, log = history(tmp_path, ("0.1.0", "2026-01-01", V1), ("0.2.0", "2026-06-01", v2))
    without_seats = v2.replace('seats: Int @deprecated(reason: "Use players"),', "")
    assert verdict(d, log, without_seats, "0.3.0", "2026-06-02") == []  # 0.1.0 + 2, 152 days
    assert "0.2.1 is a patch release" in verdict(d, log, without_seats, "0.2.1", "2026-06-02")[0]
    without_name = v2.replace('name: String @deprecated(reason: "x"),', "")
    (problem,) = verdict(d, log, without_name, "0.3.0", "2027-01-01")
    assert "Field Game.name was removed." in problem and "removable from 0.4.0 on" in problem
    assert verdict(d, log, without_name, "0.4.0", "2026-08-29") != []  # 89 days
    assert verdict(d, log, without_name, "0.4.0", "2026-08-30") == []  # 90 days


def test_an_undeprecated_element_starts_over(tmp_path: Path) -> None:
    v2 = V1.replace('seats: Int @deprecated(reason: "Use players")', "seats: Int")
    v3 = V1
    d, log = history(
        tmp_path,
        ("0.1.0", "2026-01-01", V1),
        ("0.2.0", "2026-02-01", v2),
        ("0.3.0", "2026-03-01", v3),
    )
    gone = V1.replace('seats: Int @deprecated(reason: "Use players"),', "")
    (problem,) = verdict(d, log, gone, "0.4.0", "2027-01-01")
    assert "deprecated in 0.3.0" in problem and "removable from 0.5.0 on" in problem


def test_enum_values_arguments_and_types(tmp_path: Path) -> None:
    d, log = history(tmp_path, ("0.1.0", "2026-01-01", V1))
    later = ("0.3.0", "2027-01-01")
    assert verdict(d, log, V1.replace(', OLD @deprecated(reason: "gone")', ""), *later) == []
    assert verdict(d, log, V1.replace(', old: Int @deprecated(reason: "no")', ""), *later) == []
    (enum,) = verdict(d, log, V1.replace("DEAL, ", ""), *later)
    assert enum.startswith("Enum value Phase.DEAL was removed. (VALUE_REMOVED_FROM_ENUM)")
    (arg,) = verdict(d, log, V1.replace("(id: ID!, ", "("), *later)
    assert arg.startswith("Argument Query.game(id:) was removed. (ARG_REMOVED)")
    # News: only reachable through Query.news, which was not deprecated.
    no_news = V1.replace(", news: News", "").replace("type News { text: String }", "")
    problems = verdict(d, log, no_news, *later)
    assert any(p.startswith("Field Query.news was removed.") for p in problems), problems
    assert any(p.startswith("News was removed. (TYPE_REMOVED)") for p in problems), problems
    deprecated_news = V1.replace("news: News", 'news: News @deprecated(reason: "x")')
    (tmp_path / "b").mkdir()
    d2, log2 = history(tmp_path / "b", ("0.1.0", "2026-01-01", deprecated_news))
    assert verdict(d2, log2, no_news, *later) == []


def test_an_interface_s_implementation_stays(tmp_path: Path) -> None:
    v1 = """
    type Query { event: Event }
    interface Event { seq: Int }
    type Started implements Event { seq: Int }
    type Ended implements Event { seq: Int }
    """
    d, log = history(tmp_path, ("0.1.0", "2026-01-01", v1))
    gone = v1.replace("type Ended implements Event { seq: Int }", "")
    (problem,) = verdict(d, log, gone, "0.3.0", "2027-01-01")
    assert problem.startswith("Ended was removed. (TYPE_REMOVED)") and "fragment" in problem


# ---------------------------------------------------------------- cutting
def test_a_release_is_cut_only_when_declared(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    major, minor, _ = parse_version(declared)
    assert release.main(["cut", f"{major}.{minor + 1}.0"]) == 1
    assert f"pyproject.toml's version is {declared}" in capsys.readouterr().err
    assert release.main(["cut", "x.y"]) == 1
    assert "is not a version" in capsys.readouterr().err
    assert release.main([]) == 2
    with pytest.raises(ReleaseError, match="not newer than the releases"):
        release.cut(declared)
