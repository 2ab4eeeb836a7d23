"""Generated worst cases against the request limits (issue #14): any such
document is served or refused cleanly, with ``BAD_INPUT`` (a limit or the
schema's rules) and never ``INTERNAL``; a document refused by a limit was
never validated, and one accepted is within every limit."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from api.graphql import limits
from api.graphql.limits import Checks, parse_document
from api.graphql.schema import schema
from api.graphql.shape import shape_of
from tests.api.conftest import Client
from tests.api.test_rate_limits import codes, context
from tests.costly_documents import document
from tests.fakes import harness

CLIENT = Client(harness())
LIMIT_WORDS = (
    "characters",
    "tokens",
    "aliases",
    "fragments expanded",
    "pairs of fields",
    "spreads itself",
    "values; the limit",
)


@given(st.integers(min_value=0, max_value=2**32))
def test_a_generated_document_is_served_or_refused_cleanly(seed: int) -> None:
    text = document(seed)
    result = asyncio.run(schema.execute(text, context_value=context(CLIENT, None)))
    assert set(codes(result)) <= {"BAD_INPUT"}, result.errors
    if len(text) > limits.MAX_CHARS:
        assert result.errors and "characters" in result.errors[0].message
        return
    try:
        parsed = parse_document(text)
    except Exception:
        assert result.errors  # a syntax or token-limit refusal
        return
    checked = Checks().of(parsed)
    if checked.refusal is not None:
        assert result.errors and result.errors[0].message == checked.refusal.message
        assert checked.errors is None  # never validated
        return
    shape = shape_of(parsed)
    assert shape.fields <= limits.MAX_FIELDS and shape.overlap <= limits.MAX_OVERLAP
    assert shape.aliases <= limits.MAX_ALIASES
    verdicts = ("values; the limit", "conflict", "maximum operation depth")
    for error in result.errors or []:  # the cost limit, or a validation rule's verdict
        assert any(v in error.message for v in verdicts), error
