"""Random ids, guest tokens (256 bits), game seeds and their salts, invite
codes, from the OS CSPRNG."""

from __future__ import annotations

import secrets
import uuid

from domain.invitations import CODE_ALPHABET, CODE_LENGTH

TOKEN_BYTES = 32  # 256 bits
SEED_BYTES = 16  # 128 bits
SALT_BYTES = 32  # 256 bits


class RandomIds:
    def new_id(self) -> str:
        return str(uuid.uuid4())

    def new_token(self) -> str:
        return secrets.token_urlsafe(TOKEN_BYTES)

    def new_seed(self) -> str:
        """128 bits, in hex: the game's secret seed (docs/decisions/0040)."""
        return secrets.token_hex(SEED_BYTES)

    def new_salt(self) -> str:
        """256 bits, in hex: the salt of the seed's commitment."""
        return secrets.token_hex(SALT_BYTES)

    def new_invite_code(self) -> str:
        """50 bits in Crockford's base 32 (domain/invitations.py)."""
        return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
