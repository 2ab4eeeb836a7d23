"""Posts a webhook (docs/decisions/0064) with httpx: the target's name
resolved here and every address checked (no private, loopback or
link-local one unless the settings allow its network), then the request
sent to the checked address itself (the name kept for ``Host`` and TLS), so
a name cannot resolve to a public address for the check and to a private
one for the connection. No redirect is followed (a 3xx is a failure), the
answer's body is read up to 64 KB and dropped (so its connection serves the
next attempt), and the whole attempt has one deadline."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit, urlunsplit

import httpx

from domain.webhooks import Networks, reachable

USER_AGENT = "mmk-webhooks/1"
MAX_POOLS = 64
"""https host names whose connections are kept, the least recently used dropped."""
MAX_ANSWER = 64 * 1024
"""Bytes of an answer read (and dropped) to keep its connection open."""


class DeliveryError(Exception):
    """No answer: the target was refused, unreachable, or too slow."""


class HttpSender:
    def __init__(self, allowed: Networks, max_connections: int = 100) -> None:
        self._allowed = allowed
        self._limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=20)
        # One client (pool) per https host name: httpcore pools by address
        # and port, and a connection whose certificate was checked for one
        # name must not carry another's requests. Plain http: one pool.
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def _client(self, scheme: str, host: str) -> httpx.AsyncClient:
        key = host if scheme == "https" else ""
        client = self._clients.pop(key, None)
        if client is None:
            client = httpx.AsyncClient(
                follow_redirects=False, limits=self._limits, trust_env=False, timeout=None
            )
            if len(self._clients) >= MAX_POOLS:  # the least recently used goes
                oldest = next(iter(self._clients))
                closing = asyncio.create_task(self._clients.pop(oldest).aclose())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        self._clients[key] = client  # the most recently used last
        return client

    async def _address(self, host: str, port: int) -> str:
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            found = [literal]
        else:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
            except OSError as e:
                raise DeliveryError(f"cannot resolve {host}: {e}") from None
            found = [ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos]
        if not found:
            raise DeliveryError(f"{host} has no address")
        refused = [a for a in found if not reachable(a, self._allowed)]
        if refused:
            raise DeliveryError(f"{host} resolves to a refused address ({refused[0]})")
        return str(found[0])

    async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> int:
        """The answer's status code; :class:`DeliveryError` without one."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            async with asyncio.timeout(timeout):
                address = await self._address(host, port)
                shown = f"[{address}]" if ":" in address else address
                target = urlunsplit(parts._replace(netloc=f"{shown}:{port}"))
                sent = {
                    **headers,
                    "host": parts.netloc.rsplit("@", 1)[-1],
                    "content-type": "application/json",
                    "user-agent": USER_AGENT,
                }
                extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
                client = self._client(parts.scheme, host)
                request = client.build_request(
                    "POST", target, headers=sent, content=body, extensions=extensions
                )
                response = await client.send(request, stream=True)
                try:  # read (a bounded answer) so that its connection is kept for the next
                    taken = 0
                    async for chunk in response.aiter_raw():
                        taken += len(chunk)
                        if taken > MAX_ANSWER:
                            break  # not worth keeping: the connection closes
                finally:
                    await response.aclose()
                return response.status_code
        except TimeoutError:
            raise DeliveryError(f"no answer within {timeout:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError, ValueError) as e:
            raise DeliveryError(f"{type(e).__name__}: {e}"[:300]) from None

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(c.aclose() for c in clients), *self._closing)
