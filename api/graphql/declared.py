"""Game mutations declared once (issue #23): a function whose parameters are
the mutation's arguments (names, types, descriptions) and whose result is
what the mutation does; :func:`action` and :func:`change` make it a
Strawberry mutation that also takes ``idempotencyKey`` (and
``expectedVersion``), refuses with a typed ``Refusal``, and fingerprints the
request from the very arguments it was given (the operation's name and each
argument by its GraphQL name), so a repeat under the same key with other
arguments is refused (docs/decisions/0042).

Strawberry reads a resolver's arguments from its signature
(``inspect.signature``, which honours ``__signature__``): the resolver built
here has the declared parameters between ``info`` and the key.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Annotated, Any, get_type_hints

import strawberry
from strawberry.types.field import StrawberryField

from api.graphql.context import Info
from api.graphql.inputs import check_key, check_version
from api.graphql.types.game_change import GameChange, GameChangeResult
from api.graphql.types.refusal import Refusal
from domain.errors import DomainError
from domain.game.commands import Command
from domain.records import MutationResult
from domain.services import play
from domain.services.deps import Deps
from domain.services.transaction import Request
from infra.codec import camel

Run = Callable[[Deps, Request], Awaitable[MutationResult]]
"""What a declared change does, given the dependencies and the request."""

Key = Annotated[str | None, strawberry.argument(description="Repeat to replay the first result")]
Version = Annotated[
    int | None, strawberry.argument(description="Refused with STALE_STATE unless the game is at it")
]


def fingerprinted(value: Any) -> Any:
    """An argument as its fingerprint holds it: an enum by its value, an
    input by its own ``fingerprint()`` or its fields, the rest as given."""
    if isinstance(value, Enum):
        return value.value
    own = getattr(value, "fingerprint", None)
    if callable(own):
        return own()
    if hasattr(value, "__strawberry_definition__"):
        return strawberry.asdict(value)
    return value


def _parameter(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _mutation(
    declared: Callable[..., Any],
    description: str,
    name: str | None,
    versioned: bool,
    run_of: Callable[[dict[str, Any], Any], Run],
) -> StrawberryField:
    """The Strawberry mutation of ``declared``: ``run_of(arguments, made)``
    turns what ``declared`` made of its arguments into what to run."""
    op = name or camel(declared.__name__)
    hints = get_type_hints(declared, include_extras=True)
    declared_params = [
        _parameter(p.name, hints[p.name], p.default)
        for p in inspect.signature(declared).parameters.values()
    ]
    tail = [_parameter("idempotency_key", Key)]
    if versioned:
        tail.append(_parameter("expected_version", Version))

    async def resolver(self: Any, info: Info, **given: Any) -> GameChange | Refusal:
        key = given.pop("idempotency_key", None)
        version = given.pop("expected_version", None)
        player = await info.context.require_player()
        args = {camel(k): fingerprinted(v) for k, v in given.items()}
        try:
            check_key(key)
            check_version(version)
            run = run_of(given, declared(**given))
            result = await run(info.context.deps, Request(player.id, op, args, key, version))
        except DomainError as e:
            return Refusal.of(e)
        return GameChange.from_domain(result)

    resolver.__name__ = declared.__name__
    resolver.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            inspect.Parameter("info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Info),
            *declared_params,
            *tail,
        ],
        return_annotation=GameChangeResult,
    )
    return strawberry.mutation(resolver, name=name, description=description)


def action(
    description: str, *, name: str | None = None
) -> Callable[[Callable[..., Command]], StrawberryField]:
    """A seat's move: ``declared(game_id, ...)`` makes the command from the
    arguments; the mutation plays it (``play.act``) as the caller's seat."""

    def decorate(declared: Callable[..., Command]) -> StrawberryField:
        def run_of(given: dict[str, Any], command: Command) -> Run:
            game_id = str(given["game_id"])
            return lambda deps, req: play.act(deps, req, game_id, command)

        return _mutation(declared, description, name, True, run_of)

    return decorate


def change(
    description: str, *, name: str | None = None, versioned: bool = True
) -> Callable[[Callable[..., Run]], StrawberryField]:
    """Any other change of a game: ``declared(...)`` returns the use case
    to run; ``versioned``: it takes ``expectedVersion`` (a game it changes
    exists already)."""

    def decorate(declared: Callable[..., Run]) -> StrawberryField:
        return _mutation(declared, description, name, versioned, lambda _, run: run)

    return decorate
