"""Releases and the GraphQL API's compatibility between them (docs/releases.md).

    python -m tools.release check          # schema.graphql against the last release
    python -m tools.release cut X.Y.Z      # `make release VERSION=X.Y.Z`

A release is a version of ``pyproject.toml`` with a dated heading in
CHANGELOG.md (``## [X.Y.Z] - YYYY-MM-DD``) and the committed schema of that
moment, kept as ``docs/releases/schema-X.Y.Z.graphql``. Against the last
release's schema, the current one may add anything and deprecate anything;
graphql-core's ``find_breaking_changes`` lists what else changed, and of
that only removals pass, each of a field, argument, input field or enum value
that was deprecated in that release and is past its window: deprecated since
a release at least two minor versions before the next one (it shipped
deprecated in two minor releases or more) and at least ``WINDOW_DAYS`` ago.
A removed type passes when everything that led to it was such a removal.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from graphql import (
    BreakingChange,
    BreakingChangeType,
    DangerousChangeType,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
    find_breaking_changes,
    find_dangerous_changes,
    get_named_type,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema.graphql"
CHANGELOG = ROOT / "CHANGELOG.md"
PYPROJECT = ROOT / "pyproject.toml"
SNAPSHOTS = ROOT / "docs" / "releases"
WINDOW_DAYS = 90
"""The least time between the release that deprecates something and the
release that removes it."""
WINDOW_MINORS = 2
"""The least distance in minor versions between those two releases (the
element ships deprecated in at least two minor releases)."""

Version = tuple[int, int, int]
VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)
REMOVALS = {
    BreakingChangeType.FIELD_REMOVED,
    BreakingChangeType.ARG_REMOVED,
    BreakingChangeType.VALUE_REMOVED_FROM_ENUM,
}
ADDITIONS = {
    DangerousChangeType.VALUE_ADDED_TO_ENUM,
    DangerousChangeType.TYPE_ADDED_TO_UNION,
    DangerousChangeType.IMPLEMENTED_INTERFACE_ADDED,
    DangerousChangeType.OPTIONAL_INPUT_FIELD_ADDED,
    DangerousChangeType.OPTIONAL_ARG_ADDED,
}
"""The "dangerous" changes graphql-core lists that are additions: a client
that does not know them keeps working. Any other (an argument's default
changed) changes what a client's unchanged request means, and fails."""
# "Field Game.seats was removed.", "Argument Query.game(id:) was removed.",
# "Enum value Phase.DEAL was removed.": graphql-core's schema coordinates.
COORDINATE = re.compile(r"\b([_A-Za-z]\w*)\.([_A-Za-z]\w*)(?:\(([_A-Za-z]\w*):\))?")


class ReleaseError(Exception):
    """A release that cannot be cut, or an API change no release may ship."""


def parse_version(text: str) -> Version:
    m = VERSION.fullmatch(text.strip())
    if m is None:
        raise ReleaseError(f"{text!r} is not a version (MAJOR.MINOR.PATCH, e.g. 0.3.0)")
    return int(m[1]), int(m[2]), int(m[3])


def show(version: Version) -> str:
    return ".".join(map(str, version))


def changelog_releases(text: str) -> dict[Version, date]:
    """The released versions of CHANGELOG.md, with their dates."""
    return {parse_version(v): date.fromisoformat(d) for v, d in HEADING.findall(text)}


def snapshot_path(version: Version, directory: Path = SNAPSHOTS) -> Path:
    return directory / f"schema-{show(version)}.graphql"


def snapshots(directory: Path = SNAPSHOTS) -> dict[Version, str]:
    """Every release's schema (SDL) kept in ``directory``, oldest first."""
    found = {}
    for path in directory.glob("schema-*.graphql"):
        found[parse_version(path.stem.removeprefix("schema-"))] = path.read_text()
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class Release:
    version: Version
    date: date
    schema: GraphQLSchema


def history(sdl: Mapping[Version, str], dates: Mapping[Version, date]) -> list[Release]:
    """The releases with a schema, oldest first; each must be in the changelog."""
    missing = [show(v) for v in sdl if v not in dates]
    if missing:
        raise ReleaseError(f"CHANGELOG.md has no dated heading for release(s) {missing}")
    return [Release(v, dates[v], build_schema(text)) for v, text in sorted(sdl.items())]


# ---------------------------------------------------------------- deprecations
def deprecated(schema: GraphQLSchema) -> set[str]:
    """The coordinates of the deprecated elements of ``schema``: ``Type.field``,
    ``Type.field(arg:)``, ``Input.field``, ``Enum.VALUE``."""
    found = set()
    for name, t in schema.type_map.items():
        if name.startswith("__"):
            continue
        if isinstance(t, GraphQLObjectType | GraphQLInterfaceType):
            for fname, field in t.fields.items():
                if field.deprecation_reason is not None:
                    found.add(f"{name}.{fname}")
                for aname, arg in field.args.items():
                    if arg.deprecation_reason is not None:
                        found.add(f"{name}.{fname}({aname}:)")
        elif isinstance(t, GraphQLInputObjectType):
            for fname, input_field in t.fields.items():
                if input_field.deprecation_reason is not None:
                    found.add(f"{name}.{fname}")
        elif isinstance(t, GraphQLEnumType):
            for vname, value in t.values.items():
                if value.deprecation_reason is not None:
                    found.add(f"{name}.{vname}")
    return found


def deprecated_since(coordinate: str, releases: Sequence[Release]) -> Release | None:
    """The release since which ``coordinate`` has been deprecated without a
    break (the oldest of the last releases that all deprecate it)."""
    since = None
    for release in reversed(releases):
        if coordinate not in deprecated(release.schema):
            break
        since = release
    return since


def minor_distance(old: Version, new: Version) -> int:
    """Minor versions from ``old`` to ``new`` (a major version counts as many)."""
    return (new[0] - old[0]) * 1000 + new[1] - old[1]


# ---------------------------------------------------------------- the check
def coordinate_of(change: BreakingChange) -> str:
    m = COORDINATE.search(change.description)
    if m is None:  # pragma: no cover - graphql-core changed its messages
        raise ReleaseError(f"no schema coordinate in {change.description!r}")
    return f"{m[1]}.{m[2]}" + (f"({m[3]}:)" if m[3] else "")


def references(schema: GraphQLSchema, type_name: str) -> Iterator[str]:
    """The coordinates of the fields, arguments and input fields of
    ``schema`` whose type is ``type_name`` (lists and non-null unwrapped)."""
    for name, t in schema.type_map.items():
        if name.startswith("__") or not hasattr(t, "fields"):
            continue
        for fname, field in t.fields.items():
            if get_named_type(field.type).name == type_name:
                yield f"{name}.{fname}"
            for aname, arg in getattr(field, "args", {}).items():
                if get_named_type(arg.type).name == type_name:
                    yield f"{name}.{fname}({aname}:)"


def problems(
    releases: Sequence[Release], current: GraphQLSchema, next_version: Version | None, today: date
) -> list[str]:
    """Why ``current`` may not ship as the release after ``releases[-1]``
    (``next_version``: that release's, None if not known yet: a minor
    release is assumed), empty if it may."""
    last = releases[-1]
    changes = find_breaking_changes(last.schema, current)
    next_version = next_version or (last.version[0], last.version[1] + 1, 0)
    patch = next_version[:2] == last.version[:2]
    out: list[str] = []

    def removal(coordinate: str) -> str | None:
        """Why removing ``coordinate`` is not allowed, or None if it is."""
        since = deprecated_since(coordinate, releases)
        if since is None:
            return f"it was not deprecated in {show(last.version)}"
        if patch:
            return f"{show(next_version)} is a patch release, which removes nothing"
        if minor_distance(since.version, next_version) < WINDOW_MINORS:
            return (
                f"it was deprecated in {show(since.version)}: removable from "
                f"{show((since.version[0], since.version[1] + WINDOW_MINORS, 0))} on"
            )
        if today < since.date + timedelta(days=WINDOW_DAYS):
            when = since.date + timedelta(days=WINDOW_DAYS)
            return (
                f"it was deprecated in {show(since.version)} ({since.date}): "
                f"removable from {when} on"
            )
        return None

    removed_types = {_removed_type(c) for c in changes} - {None}

    def type_removal(name: str) -> str | None:
        """Why removing type ``name`` is not allowed, or None if it is: every
        field or argument that led to it goes too, each allowed to."""
        stays = {n: t for n, t in last.schema.type_map.items() if n not in removed_types}
        unions = [n for n, t in stays.items() if name in [m.name for m in getattr(t, "types", ())]]
        if unions:
            return f"it is a member of {unions}, which stay"
        interfaces = [i.name for i in getattr(last.schema.type_map[name], "interfaces", ())]
        if [i for i in interfaces if i in stays]:
            return f"it implements {interfaces}: a client may select it in a fragment"
        refs = [r for r in references(last.schema, name) if r.split(".")[0] in stays]
        whys = [f"{r}: {w}" for r in refs if (w := removal(r)) is not None]
        return "; ".join(whys) if whys else None

    for change in changes:
        why: str | None = None
        removed_type = _removed_type(change)
        if change.type in REMOVALS:
            coordinate = coordinate_of(change)
            if coordinate.split(".")[0] in removed_types:
                continue  # its type went with it: judged as the type
            why = removal(coordinate)
        elif removed_type is not None:
            why = type_removal(removed_type)
        else:
            why = "only removals of deprecated elements past their window may break clients"
        if why is not None:
            out.append(f"{change.description} ({change.type.name}) Not allowed: {why}.")
    for danger in find_dangerous_changes(last.schema, current):
        if danger.type not in ADDITIONS:
            out.append(
                f"{danger.description} ({danger.type.name}) Not allowed: it changes what a "
                "client's unchanged request means."
            )
    return out


def _removed_type(change: BreakingChange) -> str | None:
    """The type a ``TYPE_REMOVED`` change removes ("Game was removed.",
    "Standard scalar Float was removed because ..."), else None."""
    if change.type is not BreakingChangeType.TYPE_REMOVED:
        return None
    m = re.match(r"(?:Standard scalar )?([_A-Za-z]\w*) was removed", change.description)
    return m[1] if m else None


def check(
    current_sdl: str,
    next_version: Version | None = None,
    today: date | None = None,
    directory: Path = SNAPSHOTS,
    changelog: str | None = None,
) -> list[str]:
    """:func:`problems` of ``current_sdl`` against the releases kept in
    ``directory`` (none kept: nothing to break)."""
    kept = snapshots(directory)
    if not kept:
        return []
    dates = changelog_releases(CHANGELOG.read_text() if changelog is None else changelog)
    releases = history(kept, dates)
    return problems(releases, build_schema(current_sdl), next_version, today or date.today())


# ---------------------------------------------------------------- cutting
def git_schema(revision: str = "HEAD") -> str:
    return subprocess.run(
        ["git", "show", f"{revision}:schema.graphql"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def cut(version_text: str) -> Path:
    """Check that ``version_text`` may be released now and keep its schema
    (the committed one) as its snapshot; returns the snapshot's path."""
    version = parse_version(version_text)
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    if declared != show(version):
        raise ReleaseError(f"pyproject.toml's version is {declared}: set it to {show(version)}")
    changelog = CHANGELOG.read_text()
    dates = changelog_releases(changelog)
    if version not in dates:
        raise ReleaseError(
            f"CHANGELOG.md has no '## [{show(version)}] - YYYY-MM-DD' heading: move the "
            "[Unreleased] entries under one (and keep an empty [Unreleased] above it)"
        )
    if "## [Unreleased]" not in changelog.split(f"## [{show(version)}]")[0]:
        raise ReleaseError("CHANGELOG.md: keep a '## [Unreleased]' section above the release")
    kept = snapshots()
    newer = [show(v) for v in kept if v >= version]
    if newer:
        raise ReleaseError(f"{show(version)} is not newer than the releases {newer}")
    sdl = git_schema()
    if SCHEMA.read_text() != sdl:
        raise ReleaseError(
            "schema.graphql differs from the committed one: commit it (`make schema` "
            "writes it), then cut the release"
        )
    found = check(sdl, version, dates[version], changelog=changelog)
    if found:
        raise ReleaseError("breaking changes (docs/releases.md):\n  " + "\n  ".join(found))
    path = snapshot_path(version)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sdl)
    return path


def main(argv: Sequence[str]) -> int:
    try:
        match list(argv):
            case ["check"]:
                found = check(SCHEMA.read_text())
                for line in found:
                    print(line, file=sys.stderr)
                return 1 if found else 0
            case ["cut", version]:
                path = cut(version)
                print(f"{path.relative_to(ROOT)} written: commit it, then tag v{version}")
                return 0
            case _:
                print(__doc__, file=sys.stderr)
                return 2
    except ReleaseError as e:
        print(f"release: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
