"""One process's open connections: the process-wide ceiling and the per-IP
caps (issue #14, docs/decisions/0044), counted by the HTTP and WebSocket
protocols of ``mmk serve`` (api/fast/http_protocol.py, api/fast/ws_protocol.py).

A connection is counted from ``connection_made`` to ``connection_lost``,
keyed by its transport: an upgrade to a WebSocket hands the same transport
to the WebSocket protocol, which releases it. Per IP means the TCP peer: a
peer in ``MMK_FORWARDED_ALLOW_IPS`` is a proxy carrying many clients, and
its connections count only towards the ceiling (the proxy caps each client:
docker/nginx.conf's ``limit_conn``).
"""

from __future__ import annotations

import functools
import ipaddress
import resource
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from api.coded_response import whole_response
from infra.rate_limit import ip_key
from infra.settings import Settings

DESCRIPTOR_RESERVE = 128
"""Descriptors kept for the database pool, Redis, log and data files."""
MIN_CEILING = 16
UNLIMITED_DESCRIPTORS = 1_000_000
"""The ceiling's base when RLIMIT_NOFILE is unlimited."""


def default_ceiling(soft_limit: int | None = None) -> int:
    """``MMK_MAX_CONNECTIONS`` unset (0): the soft descriptor limit minus
    :data:`DESCRIPTOR_RESERVE`, so that accept() never runs out first."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if soft_limit is None else soft_limit
    if soft == resource.RLIM_INFINITY or soft < 0:
        soft = UNLIMITED_DESCRIPTORS
    return max(MIN_CEILING, soft - DESCRIPTOR_RESERVE)


class Proxies:
    """The peers whose connections carry other clients (uvicorn's
    ``forwarded_allow_ips``: comma-separated addresses or networks, ``*``)."""

    def __init__(self, allowed: str | list[str] | None) -> None:
        items = allowed.split(",") if isinstance(allowed, str) else list(allowed or [])
        names = [i.strip() for i in items if i.strip()]
        self.any = "*" in names
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for name in names:
            try:
                self.networks.append(ipaddress.ip_network(name, strict=False))
            except ValueError:
                continue  # a host name or a socket path: never a TCP peer's address

    def __contains__(self, ip: str) -> bool:
        if self.any:
            return True
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        return any(address in network for network in self.networks)


@dataclass
class Limits:
    """The caps, from the settings (0: no per-IP cap)."""

    ceiling: int
    per_ip: int
    ws_per_ip: int

    @classmethod
    def from_settings(cls, s: Settings) -> Limits:
        ceiling = s.max_connections or default_ceiling()
        return cls(ceiling, s.max_connections_per_ip, s.max_ws_per_ip)


@dataclass
class Refusal:
    """Why a connection is refused: its HTTP status and coded JSON body."""

    status: int
    message: str

    def response(self) -> bytes:
        """A whole HTTP/1.1 response that closes the connection."""
        return whole_response(
            self.status, self.message, "RATE_LIMITED", headers=[("retry-after", "1")]
        )


@dataclass
class Registry:
    """Counts open connections; refuses one over a cap and changes nothing."""

    limits: Limits
    proxies: Proxies
    _open: dict[int, tuple[str | None, bool]] = field(default_factory=dict)
    _per_ip: Counter[str] = field(default_factory=Counter)
    _ws_per_ip: Counter[str] = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self._open)

    def _counted_ip(self, ip: str | None) -> str | None:
        """The key an address is counted under: an IPv6 one's /64 (one
        subscriber line holds a whole /64), as the rate limits key it."""
        return None if ip is None or ip in self.proxies else ip_key(ip)

    def open(self, key: int, ip: str | None) -> Refusal | None:
        """A new connection (``key``: its transport's id); None when it may stay."""
        if len(self._open) >= self.limits.ceiling:
            return Refusal(503, "the server is at its connection limit: retry shortly")
        counted = self._counted_ip(ip)
        if counted is not None and 0 < self.limits.per_ip <= self._per_ip[counted]:
            return Refusal(429, f"more than {self.limits.per_ip} connections from one address")
        self._open[key] = (counted, False)
        if counted is not None:
            self._per_ip[counted] += 1
        return None

    def upgrade(self, key: int) -> Refusal | None:
        """The connection becomes a WebSocket; None when it may."""
        if key not in self._open:
            return None
        ip, ws = self._open[key]
        if ws or ip is None:
            return None
        if 0 < self.limits.ws_per_ip <= self._ws_per_ip[ip]:
            return Refusal(429, f"more than {self.limits.ws_per_ip} WebSockets from one address")
        self._open[key] = (ip, True)
        self._ws_per_ip[ip] += 1
        return None

    def close(self, key: int) -> None:
        """The connection is gone (twice is harmless)."""
        found = self._open.pop(key, None)
        if found is None:
            return
        ip, ws = found
        if ip is not None:
            _drop(self._per_ip, ip)
            if ws:
                _drop(self._ws_per_ip, ip)


def _drop(counts: Counter[str], ip: str) -> None:
    counts[ip] -= 1
    if counts[ip] <= 0:
        del counts[ip]


@functools.cache
def settings() -> Settings:
    """The settings, read once by each worker (the protocols have no container)."""
    return Settings.from_env()


@functools.cache
def registry(forwarded_allow_ips: str | None) -> Registry:
    """This process's registry."""
    return Registry(Limits.from_settings(settings()), Proxies(forwarded_allow_ips))


def registry_of(config: Any) -> Registry:
    """The registry of a uvicorn ``config``'s process; the proxies are the
    peers uvicorn trusts for ``X-Forwarded-For``."""
    allowed = config.forwarded_allow_ips if config.proxy_headers else None
    return registry(allowed if isinstance(allowed, str) or allowed is None else ",".join(allowed))
