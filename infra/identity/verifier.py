"""JWTs of the app's identity provider, verified with PyJWT (issue #24):
the signature with the provider's key for the token's ``kid``, the
algorithm against those allowed (``alg: none`` and an HMAC algorithm never
are: an HMAC "signed" with a public key would pass as genuine), expiry and
not-before with a leeway, issuer and audience. Every failure is
:class:`Unauthenticated` with a reason a developer can act on."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from domain.errors import Unauthenticated
from domain.identity import VerifiedIdentity
from infra.identity.keys import KeySource
from infra.settings import DEFAULT_JWT_ALGORITHMS, JWT_ALGORITHMS

ASYMMETRIC = frozenset(JWT_ALGORITHMS)
"""The algorithms a public key verifies; only these may be allowed."""


MAX_JWT_CHARS = 8192
"""The longest JWT read: an identity provider's run to 1-2 KB; a longer one
is refused before it is parsed."""


KEY_TYPES: dict[str, tuple[type, ...]] = {
    "RS": (RSAPublicKey,),
    "PS": (RSAPublicKey,),
    "ES": (EllipticCurvePublicKey,),
    "Ed": (Ed25519PublicKey, Ed448PublicKey),
}
"""The key each family of algorithms verifies with (by the name's first
two letters): a token naming another family's algorithm is refused before
its key is used."""


def looks_like_jwt(token: str) -> bool:
    """Three base64url parts: a JWS in compact form (an MMK token has no dot)."""
    return token.count(".") == 2


class JwtVerifier:
    """One identity provider: its issuer, the audience (this game server as
    the provider names it), the algorithms allowed and where its keys are."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        keys: KeySource,
        *,
        algorithms: Sequence[str] = DEFAULT_JWT_ALGORITHMS,
        leeway: float = 30.0,
        name_claim: str = "name",
    ) -> None:
        unsafe = set(algorithms) - ASYMMETRIC
        if unsafe:
            raise ValueError(f"not a public-key algorithm: {', '.join(sorted(unsafe))}")
        self.issuer, self.audience, self.keys = issuer, audience, keys
        self.algorithms, self.leeway, self.name_claim = tuple(algorithms), leeway, name_claim

    def recognises(self, token: str) -> bool:
        return looks_like_jwt(token)

    async def verify(self, token: str) -> VerifiedIdentity:
        if len(token) > MAX_JWT_CHARS:
            raise Unauthenticated(f"the JWT is longer than {MAX_JWT_CHARS} characters")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as e:
            raise Unauthenticated(f"the JWT does not parse: {e}") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            accepted = ", ".join(self.algorithms)
            raise Unauthenticated(f"the JWT's algorithm {alg!r} is not accepted ({accepted} are)")
        key = await self.keys.key(header.get("kid"))  # PyJWT refused a kid not a string
        fits = isinstance(key, KEY_TYPES[alg[:2]])
        if not fits:
            raise Unauthenticated(f"the JWT's algorithm {alg!r} does not fit the provider's key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "sub", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated(
                "the JWT has expired (exp): get a fresh one from your identity provider"
            ) from None
        except jwt.ImmatureSignatureError:
            raise Unauthenticated("the JWT is not valid yet (nbf or iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise Unauthenticated(f"the JWT's audience (aud) is not {self.audience!r}") from None
        except jwt.InvalidIssuerError:
            raise Unauthenticated(f"the JWT's issuer (iss) is not {self.issuer!r}") from None
        except jwt.MissingRequiredClaimError as e:
            raise Unauthenticated(f"the JWT lacks the {e.claim!r} claim") from None
        except jwt.InvalidSignatureError:
            raise Unauthenticated(
                "the JWT's signature does not verify with the provider's key"
            ) from None
        except (jwt.PyJWTError, TypeError, ValueError) as e:  # PyJWT's and its keys' own
            raise Unauthenticated(f"the JWT is not valid: {e}") from None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            raise Unauthenticated("the JWT's subject (sub) is not a non-empty string")
        name = claims.get(self.name_claim)
        try:
            expires_at = datetime.fromtimestamp(int(claims["exp"]), UTC)
        except (OverflowError, ValueError, OSError):
            raise Unauthenticated("the JWT's expiry (exp) is out of range") from None
        return VerifiedIdentity(
            issuer=self.issuer,
            subject=subject,
            name=name if isinstance(name, str) else None,
            expires_at=expires_at,
        )
