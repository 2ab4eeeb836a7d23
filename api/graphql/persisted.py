"""Automatic persisted queries (Apollo APQ), the request side; the store is
infra/persisted_queries.py.

A request carries ``extensions.persistedQuery = {"version": 1,
"sha256Hash": "<hex>"}``:

- with no ``query``: the text registered under that hash is run, exactly
  as if it had been sent (the same parse, validation and limit caches,
  api/graphql/limits.py); an unknown hash gets HTTP 200
  ``{"errors": [{"message": "PersistedQueryNotFound", "extensions":
  {"code": "PERSISTED_QUERY_NOT_FOUND"}}]}``, on which Apollo's
  ``PersistedQueryLink`` sends the text with the hash;
- with its ``query``: the hash must be the text's sha256 (else
  ``BAD_INPUT``, ``reason: PERSISTED_QUERY_HASH_MISMATCH``); the text is
  registered once it has parsed and validated, so only operations this
  schema accepts are kept, and run.

GET works the same (``extensions`` and ``variables`` as JSON query
parameters), for queries only. A client (its IP) registers a bounded share
of the store (infra/persisted_queries.py, docs/decisions/0052).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from api.fast.http_transports import Refused
from infra.persisted_queries import UNKNOWN_CLIENT, PersistedQueries

NOT_FOUND_CODE = "PERSISTED_QUERY_NOT_FOUND"
NOT_FOUND_MESSAGE = "PersistedQueryNotFound"
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def persisted_hash(extensions: dict[str, object] | None) -> str | None:
    """The (lowercase) hash of an APQ request, None for any other request."""
    if not extensions or "persistedQuery" not in extensions:
        return None
    pq = extensions["persistedQuery"]
    if not isinstance(pq, dict):
        raise Refused(400, "extensions.persistedQuery must be an object")
    version = pq.get("version")
    if version != 1 or isinstance(version, bool):
        raise Refused(400, "extensions.persistedQuery: only version 1 is supported")
    sha = pq.get("sha256Hash")
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        raise Refused(400, "extensions.persistedQuery.sha256Hash must be 64 hex digits")
    return sha.lower()


def not_found() -> Refused:
    """What Apollo's clients expect for an unknown hash: HTTP 200, and the
    answer kept by no cache (the client registers the text next)."""
    return Refused(200, NOT_FOUND_MESSAGE, NOT_FOUND_CODE, headers={"Cache-Control": "no-store"})


def registration(
    store: PersistedQueries,
    sha: str,
    query: str,
    writes: list[asyncio.Task[None]],
    client: str = UNKNOWN_CLIENT,
) -> Callable[[], None]:
    """The context's ``on_valid`` for a request that registers ``query``:
    registers it once for ``client`` (its IP key: the store keeps a share
    of texts per client), keeping the Redis write (if any) in ``writes``."""
    done = False

    def on_valid() -> None:
        nonlocal done
        if not done:
            done = True
            task = store.register(sha, query, client)
            if task is not None:
                writes.append(task)

    return on_valid
