"""Where the identity provider's public keys come from (issue #24): a local
JWKS or PEM file (offline deployments), or a JWKS URL fetched and cached.

The URL's keys are fetched on first use, again after ``max_age`` (in the
background: the held keys serve meanwhile), and again when a token names a
``kid`` the cache lacks, but never twice within ``refetch_floor``: a flood
of tokens with made-up ``kid``s costs the provider one fetch per floor.
When the provider is away, the keys last fetched serve for ``stale_for``
after they were due again."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from domain.errors import Unauthenticated

log = logging.getLogger("mmk.identity")

FETCH_TIMEOUT = 5.0
"""Seconds a JWKS fetch may take."""
MAX_JWKS_BYTES = 1 << 20


class KeySource(Protocol):
    async def key(self, kid: str | None) -> Any:
        """The public key for ``kid`` (a key object PyJWT takes), or
        :class:`Unauthenticated` saying why not."""
        ...


def _jwks(data: Any, where: str) -> dict[str, Any]:
    """The keys of a JWKS document by ``kid`` (a key without one: ``""``)."""
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError(f"{where} is not a JWKS document (an object with a 'keys' list)")
    found: dict[str, Any] = {}
    for entry in data["keys"]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            found[str(entry.get("kid", ""))] = jwt.PyJWK.from_dict(entry).key
        except (jwt.PyJWKError, jwt.InvalidKeyError) as e:
            log.warning("identity: a key of %s was skipped: %s", where, e)
    return found


def _named(kid: str) -> str:
    """A token's kid as an error message quotes it: short."""
    return repr(kid if len(kid) <= 40 else kid[:40] + "...")


def _pick(keys: dict[str, Any], kid: str | None) -> Any | None:
    if kid is not None:
        return keys.get(kid)
    return next(iter(keys.values())) if len(keys) == 1 else None


class FileKeys:
    """Keys read once from a JWKS (JSON) or PEM public-key file."""

    def __init__(self, path: Path) -> None:
        text = path.read_text()
        if text.lstrip().startswith("-----BEGIN"):
            self._keys = {"": load_pem_public_key(text.encode())}
        else:
            self._keys = _jwks(json.loads(text), str(path))
        if not self._keys:
            raise ValueError(f"{path} holds no usable signing key")

    async def key(self, kid: str | None) -> Any:
        found = _pick(self._keys, kid) or (self._keys.get("") if len(self._keys) == 1 else None)
        if found is None:
            if kid is None:
                raise Unauthenticated("the JWT names no key (kid) and several are configured")
            raise Unauthenticated(f"no key with kid {_named(kid)} among the configured keys")
        return found


def fetch_json(url: str) -> Any:
    """GET ``url`` as JSON (blocking: run off the event loop)."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:
        return json.loads(response.read(MAX_JWKS_BYTES + 1)[:MAX_JWKS_BYTES])


class JwksKeys:
    """The keys of a JWKS URL, cached (module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        max_age: float = 3600.0,
        refetch_floor: float = 60.0,
        stale_for: float = 86_400.0,
        fetch: Callable[[str], Any] = fetch_json,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.max_age, self.refetch_floor, self.stale_for = max_age, refetch_floor, stale_for
        self._fetch, self._clock = fetch, clock
        self._keys: dict[str, Any] = {}
        self._fetched_at: float | None = None  # the last fetch that worked
        self._tried_at: float | None = None  # the last fetch, whatever came of it
        self._lock = asyncio.Lock()
        self._background: asyncio.Task[None] | None = None
        self.fetches = 0

    async def key(self, kid: str | None) -> Any:
        found = _pick(self._keys, kid)
        now = self._clock()
        due = self._fetched_at is None or now - self._fetched_at > self.max_age
        if found is not None and due and self._usable(now):
            self._refresh_soon(now)  # the held key serves meanwhile: no sign-in waits
        elif found is None or due:
            await self._refresh(now)
            found = _pick(self._keys, kid)
        if found is None:
            if not self._usable(self._clock()):
                raise Unauthenticated("the identity provider's keys cannot be fetched now")
            if kid is None:
                raise Unauthenticated("the JWT names no key (kid) and the provider has several")
            raise Unauthenticated(f"no key with kid {_named(kid)} at the identity provider")
        if not self._usable(self._clock()):
            raise Unauthenticated("the identity provider's keys are too old and cannot be fetched")
        return found

    def _refresh_soon(self, now: float) -> None:
        """A refresh in the background, one at a time."""
        if self._background is None or self._background.done():
            self._background = asyncio.get_running_loop().create_task(self._refresh(now))

    def _usable(self, now: float) -> bool:
        """The cached keys may serve: fresh, or stale within ``stale_for``."""
        return self._fetched_at is not None and now - self._fetched_at <= (
            self.max_age + self.stale_for
        )

    async def _refresh(self, now: float) -> None:
        async with self._lock:
            if self._tried_at is not None and now - self._tried_at < self.refetch_floor:
                return  # fetched (or tried) a moment ago: the provider is not hammered
            self._tried_at = self._clock()
            self.fetches += 1
            try:  # fetched and parsed off the event loop
                keys = await asyncio.to_thread(lambda: _jwks(self._fetch(self.url), self.url))
            except Exception as e:  # the provider away, or a bad document: keep the old keys
                log.warning("identity: fetching %s failed (%s); keeping the keys held", self.url, e)
                return
            if not keys:  # a document with no usable key never replaces good ones
                log.warning("identity: %s holds no usable key; keeping the keys held", self.url)
                return
            self._keys, self._fetched_at = keys, self._clock()
