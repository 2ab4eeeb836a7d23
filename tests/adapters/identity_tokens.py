"""Tokens an identity provider would issue, minted with joserfc: another
JOSE library than PyJWT, which verifies them (issue #24)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import warnings
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, KeyParameters, OKPKey, RSAKey

ISSUER = "https://id.example.test/"
AUDIENCE = "mmk-test"

Key = RSAKey | ECKey | OKPKey


def new_key(alg: str, kid: str) -> Key:
    """A fresh private key for ``alg`` (RS256, ES256 or EdDSA)."""
    parameters: KeyParameters = {"kid": kid}
    if alg == "RS256":
        return RSAKey.generate_key(2048, parameters=parameters, private=True)
    if alg == "ES256":
        return ECKey.generate_key("P-256", parameters=parameters, private=True)
    return OKPKey.generate_key("Ed25519", parameters=parameters, private=True)


def jwks(*keys: Key) -> dict[str, Any]:
    """The public JWKS document of ``keys``."""
    return {"keys": [{**k.as_dict(private=False), "use": "sig"} for k in keys]}


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def mint(key: Key, alg: str, kid: str | None = None, **overrides: Any) -> str:
    """A token signed by ``key``; claims as :func:`claims` makes them."""
    header = {"alg": alg, "kid": kid if kid is not None else key.kid}
    with warnings.catch_warnings():  # joserfc prefers "Ed25519" to "EdDSA" (RFC 9864)
        warnings.simplefilter("ignore")
        return jwt.encode(header, claims(**overrides), key, algorithms=[alg])


def mint_without_kid(key: Key) -> str:
    """An RS256 token (``key``: an RSA key) whose header names no key."""
    return jwt.encode({"alg": "RS256"}, claims(), key)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signing_input(header: dict[str, Any], **overrides: Any) -> str:
    """``<header>.<claims>``, each base64url JSON: what a signature covers."""
    body = claims(**overrides)
    return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(body).encode())}"


def unsigned(**overrides: Any) -> str:
    """``alg: none``: a token anyone can write."""
    return _signing_input({"alg": "none", "typ": "JWT"}, **overrides) + "."


def hmac_with_public_key(public_pem: bytes, kid: str, **overrides: Any) -> str:
    """HS256 "signed" with the provider's public key as the secret: what a
    verifier that lets the token choose its algorithm would accept."""
    signed = _signing_input({"alg": "HS256", "kid": kid, "typ": "JWT"}, **overrides)
    mac = hmac.new(public_pem, signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{_b64(mac)}"


def forged_header(header: dict[str, Any], **overrides: Any) -> str:
    """A token with ``header`` and a signature that is no signature: what an
    attacker sends to reach the verifier's corners."""
    return _signing_input(header, **overrides) + ".AAAA"
