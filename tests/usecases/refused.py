"""The code a use case refuses with (a helper of the use-case tests)."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest

from domain.errors import DomainError, ErrorCode


async def code_of(call: Awaitable[object]) -> ErrorCode:
    """The refusal's code; fails the test when ``call`` is not refused."""
    with pytest.raises(DomainError) as e:
        await call
    return e.value.code
