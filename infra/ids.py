"""Random ids, guest tokens (256 bits) and game seeds, from the OS CSPRNG."""

from __future__ import annotations

import secrets
import uuid

TOKEN_BYTES = 32  # 256 bits


class RandomIds:
    def new_id(self) -> str:
        return str(uuid.uuid4())

    def new_token(self) -> str:
        return secrets.token_urlsafe(TOKEN_BYTES)

    def new_seed(self) -> str:
        return secrets.token_hex(16)
