"""Limits against abusive queries, checked before the expensive work (issue
#14, docs/operations.md "Limits"), built once so the validation cache hits (a
per-request rule factory defeats it: STACK.md).

In order: the document's length before it is lexed; its tokens while it is
parsed (graphql-core stops at the limit); its shape (api/graphql/shape.py:
fields with fragments expanded, aliases, the pairs the overlap rule would
compare) and its estimated cost (api/graphql/cost.py) before validation; a
query's cost charged to its token's and IP's budgets per minute
(infra/rate_limit.py) before validation too. So an unseen document holds
the event loop for a bounded time, and a refusal costs a walk of the
document at most. Too large is ``BAD_INPUT``; over budget is
``RATE_LIMITED`` with ``retryAfter``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    NameNode,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)
from graphql.utilities import get_operation_ast
from strawberry.extensions import SchemaExtension
from strawberry.extensions.max_aliases import create_validator as alias_validator
from strawberry.extensions.query_depth_limiter import create_validator as depth_validator
from strawberry.types import ExecutionContext

from api.fast.core_schema import core_schema
from api.graphql.cost import priced
from api.graphql.operation_choice import operation_named, unnamed_choice
from api.graphql.rate_limits import refuse, who, who_of
from api.graphql.shape import MAX_SPREAD_DEPTH, FragmentCycle, TooDeep, shape_of
from domain.errors import ErrorCode
from infra.admission_cache import AdmissionCache
from infra.rate_limit import QUERY, LocalLimiter, RateLimiter
from infra.work_meter import METER, Meter, units_so_far

MAX_DEPTH = 12
MAX_ALIASES = 15
MAX_TOKENS = 2_000
MAX_CHARS = 16_384
"""Characters of a document: lexing is linear in them (a 1 MB comment is
one token and ~100 ms of lexing)."""
MAX_FIELDS = 2_000
"""Field selections, fragments expanded."""
MAX_OPERATIONS = 32
"""Operations in one document (a request runs one; validation checks all)."""
MAX_OVERLAP = 2_500
"""Same-name field pairs validation compares, weighted (api/graphql/shape.py;
~10 ms at worst on a 2-core machine, tests/bench/test_abuse_bench.py)."""
UNITS_PER_CHAR = 2
"""An unseen document is charged this many cost units a character before it
is parsed (lexing and parsing take ~1 us a character, a unit ~0.5 us), so
that documents refused after parsing are paid for too."""
BASE_COST = 500
"""What any operation costs the budgets before its own cost: the fixed work
of a request (~250 us; completing one value with a compiled plan takes
~0.5 us, docs/benchmarks.md)."""
DEFAULT_MAX_COST = 10_000
"""Values a request may complete (``MMK_QUERY_MAX_COST``)."""
CACHE_SIZE = 512
PROBATION = 128
"""Unseen documents kept for a second request (infra/admission_cache.py)."""

RULES: list[type[ASTValidationRule]] = [
    depth_validator(MAX_DEPTH, None),
    alias_validator(MAX_ALIASES),
]

_documents: AdmissionCache[str, DocumentNode | GraphQLError] = AdmissionCache(CACHE_SIZE, PROBATION)
_STAND_IN = parse("{ __typename }")
"""The document of a request refused before parsing: the refusal replaces
its validation (Strawberry would otherwise parse the text itself)."""


def _stand_in(ctx: ExecutionContext) -> DocumentNode:
    """:data:`_STAND_IN`, its operation named as the request names the one
    to run and of a type the entry point takes: Strawberry finds the
    operation's type by that name before the validation that reports the
    refusal (else a refused ``operationName: "Me"`` was answered "Unknown
    operation named Me", a 400)."""
    allowed = {o.value for o in ctx.allowed_operations}
    # a query where one is taken; else the entry point's one type (a subscribe's)
    kind = "query" if "query" in allowed or not allowed else next(iter(allowed))
    if ctx.operation_name is None and kind == "query":
        return _STAND_IN
    (operation,) = _STAND_IN.definitions
    assert isinstance(operation, OperationDefinitionNode)
    named = OperationDefinitionNode(
        operation=OperationType(kind),
        name=None if ctx.operation_name is None else NameNode(value=ctx.operation_name),
        variable_definitions=(),
        directives=(),
        selection_set=operation.selection_set,
    )
    return DocumentNode(definitions=(named,))


def _bad_input(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": ErrorCode.BAD_INPUT.value})


def too_long(query: str) -> GraphQLError | None:
    if len(query) <= MAX_CHARS:
        return None
    return _bad_input(f"the document has {len(query):,} characters; the limit is {MAX_CHARS:,}")


def parse_document(query: str) -> DocumentNode:
    """The parsed document, from the shared cache; raises ``GraphQLError``
    (a syntax error, or over the token limit, found while parsing; kept
    too, so a bad document is parsed once)."""
    document = _documents.get(query)
    if document is None:
        try:
            document = parse(query, max_tokens=MAX_TOKENS)
        except GraphQLError as e:
            document = e
        _documents.put(query, document)
    if isinstance(document, GraphQLError):
        raise document
    return document


def parse_charge(query: str | None) -> int:
    """What parsing ``query`` costs its sender: nothing when it is cached."""
    if not query or query in _documents:
        return 0
    return 1 + len(query) * UNITS_PER_CHAR


_PAID: ContextVar[float | None] = ContextVar("mmk_parse_paid", default=None)
"""This request's parse charge, once made: the wait it got (0.0: paid). A
context variable: each HTTP request and each WebSocket operation runs in a
task of its own, and whoever parses first (the HTTP view, the legacy
WebSocket handler, the extension) charges for all."""


def _charge_parse(query: str | None, limiter: RateLimiter | None) -> tuple[int, bool]:
    """The charge to make now, and whether one was made already."""
    if limiter is None or not limiter.limits.queries_limited or _PAID.get() is not None:
        return 0, _PAID.get() is not None
    return parse_charge(query), False


def paid_now(context: object, query: str | None, limiter: LocalLimiter | None) -> float:
    """Charge an unseen document's parse to its sender's query budgets before
    anything parses it, once a request; the seconds to wait when over budget."""
    charge, made = _charge_parse(query, limiter)
    if made:
        return _PAID.get() or 0.0
    wait = 0.0
    if charge and limiter is not None:
        wait = limiter.check_now(QUERY, *who_of(context), charge)
        _reserved(wait, charge)
    _PAID.set(wait)
    return wait


async def pay_for_parse(context: object, query: str | None, limiter: RateLimiter | None) -> float:
    """:func:`paid_now` with any limiter (Redis: a round trip unless the
    instance's view of the budget decides, docs/decisions/0074)."""
    if isinstance(limiter, LocalLimiter) or limiter is None:
        return paid_now(context, query, limiter)
    charge, made = _charge_parse(query, limiter)
    if made:
        return _PAID.get() or 0.0
    wait = await limiter.check(QUERY, *who_of(context), charge) if charge else 0.0
    _reserved(wait, charge)
    _PAID.set(wait)
    return wait


def _reserved(wait: float, charge: int) -> None:
    """A charge the budgets took before the work: the caller's meter knows,
    so that the settlement charges only what the measurement adds."""
    meter = METER.get()
    if meter is not None and charge and not wait:
        meter.reserve(charge)


def operation_type(query: str | None, operation_name: str | None) -> OperationType | None:
    """The type of the operation a request would run (the HTTP view picks a
    transport by it), from the shared parse cache with the limits, so the
    execution that follows hits the cache; None when the document is too
    long, does not parse or names no such operation (the execution reports
    why)."""
    if not query or len(query) > MAX_CHARS:
        return None
    try:
        document = parse_document(query)
    except GraphQLError:
        return None
    operation = get_operation_ast(document, operation_name)
    return None if operation is None else operation.operation


@dataclass(slots=True)
class _Checked:
    """What one document's checks found, kept while the document is."""

    document: DocumentNode
    refusal: GraphQLError | None = None
    errors: list[GraphQLError] | None = None  # validation's, once run
    costs: dict[str | None, int] = field(default_factory=dict)  # by operation, when fixed


def _shape_refusal(document: DocumentNode) -> GraphQLError | None:
    try:
        shape = shape_of(document)
    except FragmentCycle as e:
        return _bad_input(f"fragment {e.args[0]} spreads itself")
    except TooDeep:
        return _bad_input(f"fragments spread fragments over {MAX_SPREAD_DEPTH} deep")
    if shape.operations > MAX_OPERATIONS:
        return _bad_input(
            f"{shape.operations} operations in one document; the limit is {MAX_OPERATIONS}"
        )
    if shape.aliases > MAX_ALIASES:
        return _bad_input(f"{shape.aliases} aliases; the limit is {MAX_ALIASES}")
    if shape.fields > MAX_FIELDS:
        return _bad_input(
            f"the document selects {shape.fields:,} fields, fragments expanded; "
            f"the limit is {MAX_FIELDS:,}"
        )
    if shape.overlap > MAX_OVERLAP:
        return _bad_input(
            f"the document repeats field names too often: validation would compare "
            f"{shape.overlap:,} pairs of fields; the limit is {MAX_OVERLAP:,}"
        )
    return None


_SUBSCRIPTION = OperationType.SUBSCRIPTION.value
_QUERY = OperationType.QUERY.value


def _kind(ctx: ExecutionContext) -> str | None:
    """The operation's type (``query``, ...); None without one."""
    try:
        return ctx.operation_type.value
    except Exception:  # no document (it did not parse), or no such operation
        return None


class Checks:
    """One schema's checks by document identity: the document cache hands
    every request of one query text the same document, and a schema's rules
    never change, so the document is the key. (Strawberry's
    ``ValidationCache`` keys on the document's value instead, hashing every
    node of the tree on every request.) ``hide_suggestions``: no "Did you
    mean ...?" in the errors (graphql-core's option)."""

    def __init__(
        self,
        max_cost: int = DEFAULT_MAX_COST,
        size: int = CACHE_SIZE,
        *,
        hide_suggestions: bool = False,
    ) -> None:
        self.max_cost = max_cost
        # Admitted as the documents are (one-off documents cannot flush it).
        self._results: AdmissionCache[int, _Checked] = AdmissionCache(size, PROBATION)
        self._hide_suggestions = hide_suggestions

    def of(self, document: DocumentNode) -> _Checked:
        hit = self._results.get(id(document))
        if hit is not None and hit.document is document:
            return hit
        checked = _Checked(document, _shape_refusal(document))
        self._results.put(id(document), checked)  # the ref keeps the id its own
        return checked

    def cost(self, checked: _Checked, ctx: ExecutionContext) -> int:
        cost = checked.costs.get(ctx.operation_name)
        if cost is None:
            variables = ctx.variables or {}
            cost, varies = priced(
                core_schema(ctx.schema), checked.document, ctx.operation_name, variables
            )
            if not varies:  # no list's size came from a variable: it holds for any
                checked.costs[ctx.operation_name] = cost
        return cost

    def errors(self, checked: _Checked, schema: GraphQLSchema, rules: Any) -> list[GraphQLError]:
        if checked.errors is None:
            checked.errors = validate(
                schema, checked.document, rules, hide_suggestions=self._hide_suggestions
            )
        return checked.errors


class CodedParserCache(SchemaExtension):
    """Parsing from the shared document cache, the request limits (length,
    tokens, shape, cost, depth, aliases), the query budgets and the
    validation cache, one extension instead of several per request. A
    refusal before validation (a syntax error too, the token limit's
    included: raised from ``on_parse`` it would skip the error extensions)
    takes validation's place, as the operation's only error, over a
    stand-in document."""

    def __init__(self, checks: Checks, limiter: LocalLimiter | None = None) -> None:
        super().__init__()
        self._checks = checks
        self._limiter = limiter
        self._refusal: GraphQLError | None = None
        self._requested = 0
        self._meter: Meter | None = None
        self._kind: str | None = None

    def _operation_kind(self) -> str | None:
        """The operation's type, worked out once (Strawberry's walks the
        document each time)."""
        if self._kind is None:
            self._kind = _kind(self.execution_context) or ""
        return self._kind or None

    def on_operation(self) -> Iterator[None]:
        ctx = self.execution_context
        ctx.parse_options["max_tokens"] = MAX_TOKENS
        ctx.validation_rules = (*ctx.validation_rules, *RULES)
        parent = METER.get()
        if parent is not None and not parent.shared:
            self._meter = parent  # a request's: its one operation's
            parent = None
        elif parent is not None:  # this operation's own work, for extensions.cost
            self._meter = Meter(parent=parent)
            METER.set(self._meter)
        yield
        if parent is not None:
            METER.set(parent)
        _PAID.set(None)  # the next operation in this task pays its own way

    def get_results(self) -> dict[str, Any]:
        """``extensions.cost`` of a query or mutation: the estimate charged
        before it ran (``requested``) and the work measured until its result
        (``actual``), in cost units (docs/decisions/0049)."""
        meter = self._meter
        if meter is None or self._operation_kind() == _SUBSCRIPTION:
            return {}
        requested = BASE_COST if self._refusal is not None else self._requested
        return {"cost": {"requested": requested, "actual": units_so_far(meter)}}

    def _parse(self, wait: float = 0.0) -> None:
        ctx = self.execution_context
        query = ctx.query
        self._refusal = None if query is None else too_long(query)
        if self._refusal is None and wait > 0:
            self._refusal = refuse(ctx, wait)
        if self._refusal is not None:
            ctx.graphql_document = _stand_in(ctx)
            return
        try:
            ctx.graphql_document = parse_document(query or "")
        except GraphQLError as e:
            # Kept with the text, so not parsed again (Strawberry's own parse
            # would): reported as the operation's only error.
            self._refusal = _bad_input(e.message)
            ctx.graphql_document = _stand_in(ctx)

    def on_parse(self) -> Iterator[None]:
        ctx = self.execution_context
        self._parse(paid_now(ctx.context, ctx.query, self._limiter))
        yield

    def _before_validation(self) -> tuple[_Checked | None, int]:
        """The document's checks, or None with the refusal recorded; and the
        base charged to the cost budgets: every operation's, refused ones
        included (a flood of cached refusals is paid for), nothing for one
        already refused by its parse's budget. The estimate, base included,
        is kept as ``_requested``."""
        ctx = self.execution_context
        if self._refusal is not None:
            code = (self._refusal.extensions or {}).get("code")
            over_budget = code == ErrorCode.RATE_LIMITED.value
            return None, 0 if over_budget else BASE_COST
        assert ctx.graphql_document is not None
        checked = self._checks.of(ctx.graphql_document)
        refusal = checked.refusal or unnamed_choice(checked.document, operation_named())
        if refusal is not None:
            self._refusal = refusal
            return None, BASE_COST
        cost = self._checks.cost(checked, ctx)
        if cost > self._checks.max_cost:
            self._refusal = _bad_input(
                f"the operation would complete about {cost:,} values; the limit is "
                f"{self._checks.max_cost:,} (select fewer fields or ask for smaller pages)"
            )
            return None, BASE_COST
        self._requested = BASE_COST + cost
        return checked, BASE_COST

    def _charges(self, base: int) -> tuple[int, int]:
        """What to charge now and the room the budgets must have. Measured
        (docs/decisions/0049): the base now, the work after it is done, and
        the estimate as the room needed; else the estimate now, a query's."""
        requested = self._requested if self._refusal is None else base
        if METER.get() is not None:
            return base, requested
        query = self._refusal is None and self._operation_kind() == "query"
        return (requested if query else base), 0

    def _over_budget(self, wait: float, checked: _Checked | None, charge: int) -> _Checked | None:
        if wait > 0:
            self._refusal = refuse(self.execution_context, wait)
            return None
        _reserved(wait, charge)
        return checked

    def _validate(self, checked: _Checked | None) -> None:
        ctx = self.execution_context
        if checked is None:
            assert self._refusal is not None
            ctx.pre_execution_errors = [self._refusal]
            return
        ctx.pre_execution_errors = errors = self._checks.errors(
            checked, core_schema(ctx.schema), ctx.validation_rules
        )
        if not errors:
            # A request that registers an automatic persisted query does so
            # once its document is known valid (api/graphql/persisted.py).
            on_valid = getattr(ctx.context, "on_valid", None)
            if on_valid is not None:
                on_valid()

    def on_validate(self) -> Iterator[None]:
        checked, base = self._before_validation()
        if base and self._limiter is not None:
            charge, need = self._charges(base)
            wait = self._limiter.check_now(QUERY, *who(self.execution_context), charge, need)
            checked = self._over_budget(wait, checked, charge)
        self._validate(checked)
        self._demotable()
        yield

    def _demotable(self) -> None:
        """A query's steps may wait their turn once it is dear
        (infra/work_meter.py); a mutation's never do (a move, bounded by the
        mutation rate, fans out to its table), nor a subscription's set-up
        (its replay may: api/graphql/subscriptions.py)."""
        kind = self._operation_kind()
        if self._meter is not None and kind is not None:
            self._meter.demotable = kind == _QUERY


class SharedBudgetParserCache(CodedParserCache):
    """:class:`CodedParserCache` charging queries to a shared limiter, before
    their validation (Redis: a round trip per query unless the instance's
    view of the budget decides, docs/decisions/0074)."""

    def __init__(self, checks: Checks, limiter: RateLimiter) -> None:
        super().__init__(checks)
        self._shared = limiter

    async def on_parse(self) -> AsyncIterator[None]:  # type: ignore[override]
        ctx = self.execution_context
        self._parse(await pay_for_parse(ctx.context, ctx.query, self._shared))
        yield

    async def on_validate(self) -> AsyncIterator[None]:  # type: ignore[override]
        checked, base = self._before_validation()
        if base:
            charge, need = self._charges(base)
            wait = await self._shared.check(QUERY, *who(self.execution_context), charge, need)
            checked = self._over_budget(wait, checked, charge)
        self._validate(checked)
        self._demotable()
        yield


def extensions(
    max_cost: int = DEFAULT_MAX_COST,
    limiter: RateLimiter | None = None,
    *,
    hide_suggestions: bool = False,
) -> list[Callable[[], SchemaExtension]]:
    """Per-request factories over prebuilt rules and one schema's caches;
    queries are charged only when ``limiter`` limits them."""
    checks = Checks(max_cost, hide_suggestions=hide_suggestions)
    if limiter is None or not limiter.limits.queries_limited:
        return [partial(CodedParserCache, checks)]
    if isinstance(limiter, LocalLimiter):
        return [partial(CodedParserCache, checks, limiter)]
    return [partial(SharedBudgetParserCache, checks, limiter)]
