"""``createPlayer``'s replay record, unusable without the server's secret
(docs/decisions/0041): the look-up digest and the seal are keyed by
HMAC-SHA256 of the secret, so nothing stored or public lets anyone test a
guessed idempotency key offline. Stdlib only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

MAC_BYTES = 16
_DIGEST = b"mmk-player-key\x00"
_SEAL = b"mmk-token-seal\x00"


def key_digest(secret: bytes, key: str) -> str:
    """HMAC(secret, key): how the record of ``createPlayer``'s key is found."""
    return hmac.new(secret, _DIGEST + key.encode(), hashlib.sha256).hexdigest()


def _seal_key(secret: bytes, key: str, player_id: str) -> bytes:
    msg = _SEAL + key.encode() + b"\x00" + player_id.encode()
    return hmac.new(secret, msg, hashlib.sha256).digest()


def _xor(data: bytes, k: bytes) -> bytes:
    pad = hashlib.shake_256(b"pad\x00" + k).digest(len(data))
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _mac(k: bytes, ciphertext: bytes) -> bytes:
    return hmac.new(k, b"mac\x00" + ciphertext, hashlib.sha256).digest()[:MAC_BYTES]


def seal(secret: bytes, key: str, player_id: str, token: str) -> str:
    """The token XORed with a pad keyed by (secret, key, player), then a MAC."""
    k = _seal_key(secret, key, player_id)
    ciphertext = _xor(token.encode(), k)
    return base64.urlsafe_b64encode(ciphertext + _mac(k, ciphertext)).decode()


def unseal(secret: bytes, key: str, player_id: str, sealed: str) -> str | None:
    """The sealed token; None when the MAC fails (another secret or key)."""
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
    except (binascii.Error, ValueError):
        return None
    if len(raw) <= MAC_BYTES:
        return None
    ciphertext, mac = raw[:-MAC_BYTES], raw[-MAC_BYTES:]
    k = _seal_key(secret, key, player_id)
    if not hmac.compare_digest(mac, _mac(k, ciphertext)):
        return None
    try:
        return _xor(ciphertext, k).decode()
    except UnicodeDecodeError:
        return None
