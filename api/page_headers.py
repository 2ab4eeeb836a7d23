"""The security headers of the pages the server serves itself (the
GraphiQL playground, the web client at /play): nothing but the server's own
files and connections, no framing, no referrer, no sniffing."""

from __future__ import annotations

STRICT = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
)
"""The Content-Security-Policy every page starts from."""


def page_headers(*more: str) -> dict[str, str]:
    """The headers of a page whose policy is :data:`STRICT` and ``more``
    directives (what its own files need, e.g. ``img-src data:``)."""
    return {
        "content-security-policy": "; ".join((*STRICT, *more)),
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
        "cross-origin-opener-policy": "same-origin",
        "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
    }
