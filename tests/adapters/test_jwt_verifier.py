"""JWTs of an app's identity provider (issue #24): tokens minted by joserfc,
verified by infra/identity (PyJWT); every refusal names its reason."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from domain.errors import Unauthenticated
from infra.identity.keys import FileKeys, JwksKeys
from infra.identity.verifier import JwtVerifier
from tests.adapters.identity_tokens import (
    AUDIENCE,
    ISSUER,
    forged_header,
    hmac_with_public_key,
    jwks,
    mint,
    mint_without_kid,
    new_key,
    unsigned,
)


class Provider:
    """A JWKS endpoint as the verifier sees it: its document, its fetches,
    and whether it is reachable."""

    def __init__(self, *keys: Any) -> None:
        self.document = jwks(*keys)
        self.fetches = 0
        self.down = False

    def fetch(self, url: str) -> Any:
        self.fetches += 1
        if self.down:
            raise OSError("connection refused")
        return self.document


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _verifier(keys: Any) -> JwtVerifier:
    return JwtVerifier(ISSUER, AUDIENCE, keys)


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
async def test_a_token_of_each_algorithm_names_its_issuer_and_subject(alg: str) -> None:
    key = new_key(alg, "k1")
    provider = Provider(key)
    verifier = _verifier(JwksKeys("https://id/jwks", fetch=provider.fetch))
    found = await verifier.verify(mint(key, alg, name="Ann"))
    assert (found.issuer, found.subject, found.name) == (ISSUER, "user-1", "Ann")


async def _refusal(verifier: JwtVerifier, token: str) -> str:
    with pytest.raises(Unauthenticated) as refused:
        await verifier.verify(token)
    return str(refused.value)


async def test_each_bad_token_is_refused_with_its_reason() -> None:
    key = new_key("RS256", "k1")
    verifier = _verifier(JwksKeys("https://id/jwks", fetch=Provider(key).fetch))
    expired = mint(key, "RS256", exp=1_000_000, iat=999_000)
    assert "expired" in await _refusal(verifier, expired)
    assert "audience" in await _refusal(verifier, mint(key, "RS256", aud="another-app"))
    assert "issuer" in await _refusal(verifier, mint(key, "RS256", iss="https://evil.test/"))
    assert "not valid yet" in await _refusal(verifier, mint(key, "RS256", nbf=4_000_000_000))
    assert "'sub'" in await _refusal(verifier, mint(key, "RS256", sub=None))
    assert "'none' is not accepted" in await _refusal(verifier, unsigned())
    confused = hmac_with_public_key(key.as_pem(private=False), "k1")
    assert "'HS256' is not accepted" in await _refusal(verifier, confused)
    other = new_key("RS256", "k1")  # the same kid, another key: a forgery
    assert "signature" in await _refusal(verifier, mint(other, "RS256"))
    assert "does not parse" in await _refusal(verifier, "a.b.c")
    padded = mint(key, "RS256", pad="x" * 9000)
    assert "longer than 8192" in await _refusal(verifier, padded)


def test_an_hmac_algorithm_cannot_be_allowed() -> None:
    with pytest.raises(ValueError, match="HS256"):
        JwtVerifier(ISSUER, AUDIENCE, FileKeys.__new__(FileKeys), algorithms=["RS256", "HS256"])


async def test_unknown_kids_fetch_the_keys_again_at_most_once_a_floor() -> None:
    key = new_key("ES256", "k1")
    provider, clock = Provider(key), Clock()
    keys = JwksKeys("https://id/jwks", fetch=provider.fetch, clock=clock, refetch_floor=60)
    verifier = _verifier(keys)
    await verifier.verify(mint(key, "ES256"))
    assert provider.fetches == 1
    for n in range(200):  # a flood of made-up kids
        assert "no key with kid" in await _refusal(verifier, mint(key, "ES256", kid=f"x{n}"))
    assert provider.fetches == 1  # within the floor of the last fetch: none more
    rotated = new_key("ES256", "k2")
    provider.document = jwks(key, rotated)
    assert "no key with kid 'k2'" in await _refusal(verifier, mint(rotated, "ES256"))
    clock.now += 61  # past the floor: the rotated key is fetched and taken
    assert (await verifier.verify(mint(rotated, "ES256"))).subject == "user-1"
    for n in range(200):  # another flood: one fetch at most
        await _refusal(verifier, mint(key, "ES256", kid=f"y{n}"))
    assert provider.fetches == 2


async def test_the_keys_serve_stale_while_the_provider_is_down_then_no_more() -> None:
    key = new_key("RS256", "k1")
    provider, clock = Provider(key), Clock()
    keys = JwksKeys(
        "https://id/jwks",
        fetch=provider.fetch,
        clock=clock,
        max_age=3600,
        refetch_floor=60,
        stale_for=7200,
    )
    verifier = _verifier(keys)
    await verifier.verify(mint(key, "RS256"))
    provider.down = True
    clock.now += 3600 + 7000  # due again, the provider away: the old keys still serve
    assert (await verifier.verify(mint(key, "RS256"))).subject == "user-1"
    clock.now += 300  # past max_age + stale_for
    assert "cannot be fetched" in await _refusal(verifier, mint(key, "RS256"))
    provider.down = False
    clock.now += 61
    assert (await verifier.verify(mint(key, "RS256"))).subject == "user-1"
    provider.document = {"keys": []}  # a document with no usable key: the held keys stay
    clock.now += 3601
    assert (await verifier.verify(mint(key, "RS256"))).subject == "user-1"
    long_kid = mint(key, "RS256", kid="k" * 5000)
    assert len(await _refusal(verifier, long_kid)) < 200  # the kid is not echoed whole


async def test_keys_from_a_local_jwks_file_or_pem_file(tmp_path: Path) -> None:
    rsa, ed = new_key("RS256", "r"), new_key("EdDSA", "e")
    (tmp_path / "keys.json").write_text(json.dumps(jwks(rsa, ed)))
    from_jwks = _verifier(FileKeys(tmp_path / "keys.json"))
    assert (await from_jwks.verify(mint(ed, "EdDSA"))).subject == "user-1"
    assert (await from_jwks.verify(mint(rsa, "RS256"))).subject == "user-1"
    (tmp_path / "key.pem").write_bytes(rsa.as_pem(private=False))
    from_pem = _verifier(FileKeys(tmp_path / "key.pem"))
    assert (await from_pem.verify(mint(rsa, "RS256"))).subject == "user-1"
    assert "signature" in await _refusal(from_pem, mint(new_key("RS256", "r"), "RS256"))
    no_kid = mint_without_kid(rsa)
    assert "names no key (kid)" in await _refusal(from_jwks, no_kid)  # two keys: which?
    assert (await from_pem.verify(no_kid)).subject == "user-1"  # one key: that one


async def test_forged_headers_are_refused_never_an_internal_error(tmp_path: Path) -> None:
    """An algorithm of another key family, headers PyJWT refuses (a kid that
    is no string, an unknown critical extension), an expiry out of range:
    each is UNAUTHENTICATED."""
    rsa = new_key("RS256", "r")
    (tmp_path / "key.pem").write_bytes(rsa.as_pem(private=False))
    verifier = _verifier(FileKeys(tmp_path / "key.pem"))
    for alg in ("ES256", "EdDSA"):
        assert "does not fit" in await _refusal(verifier, forged_header({"alg": alg}))
    assert "does not parse" in await _refusal(verifier, forged_header({"alg": "RS256", "kid": 5}))
    assert "does not parse" in await _refusal(
        verifier, forged_header({"alg": "RS256", "crit": ["x"]})
    )
    assert "out of range" in await _refusal(verifier, mint(rsa, "RS256", exp=10**20))


def test_the_providers_settings_are_checked_at_start(tmp_path: Path) -> None:
    from infra.bootstrap import identity_of
    from infra.settings import Settings, SettingsError

    assert Settings.from_env({}).jwt is None
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(jwks(new_key("ES256", "e"))))
    good = {"MMK_JWT_ISSUER": ISSUER, "MMK_JWT_AUDIENCE": AUDIENCE}
    for env, why in (
        ({"MMK_JWT_ISSUER": ISSUER}, "needs MMK_JWT_JWKS_URL or MMK_JWT_KEYS_FILE"),
        ({"MMK_JWT_KEYS_FILE": str(keys)}, "need MMK_JWT_ISSUER and MMK_JWT_AUDIENCE"),
        ({**good, "MMK_JWT_KEYS_FILE": str(keys), "MMK_JWT_JWKS_URL": "https://id/"}, "not both"),
        ({**good, "MMK_JWT_JWKS_URL": "ftp://id/keys"}, "not an https URL"),
        ({**good, "MMK_JWT_JWKS_URL": "http://id.example.com/keys"}, "only on loopback"),
        ({**good, "MMK_JWT_KEYS_FILE": str(tmp_path / "none.json")}, "is not a file"),
        ({**good, "MMK_JWT_KEYS_FILE": str(keys), "MMK_JWT_ALGORITHMS": "RS256,HS256"}, "HS256"),
        ({**good, "MMK_JWT_KEYS_FILE": str(keys), "MMK_JWT_ALGORITHMS": "none"}, "none"),
    ):
        with pytest.raises(SettingsError, match=why):
            Settings.from_env(env)
    for local in ("http://127.0.0.1:8080/jwks.json", "http://localhost/k", "https://id/k"):
        assert Settings.from_env({**good, "MMK_JWT_JWKS_URL": local}).jwt is not None
    settings = Settings.from_env({**good, "MMK_JWT_KEYS_FILE": str(keys)})
    assert settings.jwt is not None and settings.jwt.algorithms == ("RS256", "ES256", "EdDSA")
    assert isinstance(identity_of(settings), JwtVerifier)
    keys.write_text("not a key")
    with pytest.raises(SettingsError, match="MMK_JWT_KEYS_FILE"):
        identity_of(settings)


async def test_keys_due_again_are_fetched_in_the_background_while_the_held_ones_serve() -> None:
    key = new_key("ES256", "k1")
    provider, clock = Provider(key), Clock()
    release = asyncio.Event()
    fetched = threading.Event()
    slow = False

    def fetch(url: str) -> Any:
        if slow:  # the provider answers only when released
            fetched.set()
            asyncio.run_coroutine_threadsafe(release.wait(), loop).result(5)
        return provider.fetch(url)

    loop = asyncio.get_running_loop()
    keys = JwksKeys("https://id/jwks", fetch=fetch, clock=clock, max_age=3600)
    verifier = _verifier(keys)
    await verifier.verify(mint(key, "ES256"))
    slow = True
    rotated = new_key("ES256", "k2")
    provider.document = jwks(key, rotated)
    clock.now += 3601  # due again
    assert (await verifier.verify(mint(key, "ES256"))).subject == "user-1"  # did not wait
    assert (await verifier.verify(mint(key, "ES256"))).subject == "user-1"
    await asyncio.to_thread(fetched.wait, 5)
    assert provider.fetches == 1  # one background fetch, still waiting on the provider
    release.set()
    for _ in range(200):
        if provider.fetches == 2:
            break
        await asyncio.sleep(0.01)
    assert (await verifier.verify(mint(rotated, "ES256"))).subject == "user-1"
