"""The schema changes only by additions and deprecations (issue #23):
against the baseline (``tests/api/schema_baseline.graphql``, the schema as
clients were last promised it), graphql-core finds no breaking change, and
of its "dangerous" changes only additions (an enum value, a union member, an
interface's implementation, an optional argument). Descriptions and the
order of fields may change. A deliberate break replaces the baseline, with
a decision record."""

from __future__ import annotations

from pathlib import Path

from graphql import (
    DangerousChangeType,
    build_schema,
    find_breaking_changes,
    find_dangerous_changes,
)

from api.graphql.export import sdl

BASELINE = Path(__file__).with_name("schema_baseline.graphql")
ADDITIONS = {
    DangerousChangeType.VALUE_ADDED_TO_ENUM,
    DangerousChangeType.TYPE_ADDED_TO_UNION,
    DangerousChangeType.IMPLEMENTED_INTERFACE_ADDED,
    DangerousChangeType.OPTIONAL_INPUT_FIELD_ADDED,
    DangerousChangeType.OPTIONAL_ARG_ADDED,
}


def test_the_running_schema_breaks_nothing_the_baseline_promised() -> None:
    before, now = build_schema(BASELINE.read_text()), build_schema(sdl())
    assert find_breaking_changes(before, now) == []
    assert [c for c in find_dangerous_changes(before, now) if c.type not in ADDITIONS] == []


def test_the_check_sees_a_removed_field_and_a_changed_default() -> None:
    """The comparison can fail: a field gone, a type narrowed, an
    argument's default changed."""
    before = build_schema(BASELINE.read_text())
    broken = build_schema(
        BASELINE.read_text()
        .replace('  """The giver"""\n  fromSeat: Int!\n', "", 1)
        .replace("timeoutsToTakeover: Int! = 2", "timeoutsToTakeover: Int! = 3", 1)
    )
    assert find_breaking_changes(before, broken)
    assert [c for c in find_dangerous_changes(before, broken) if c.type not in ADDITIONS]
