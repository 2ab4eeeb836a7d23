"""What signing in with the app's JWT costs against an MMK token (issue #24),
in the same run (``make bench``): CPU per ``sign_in`` through the use case
on the in-memory fakes, an MMK token's hash look-up as the reference, and a
JWT of each algorithm (signature, claims, the identity's look-up), keys
held. Reported, not asserted: the server caches a token's player for a few
seconds, so this is the cost of a cache miss."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import replace

from domain.services.deps import Deps
from domain.services.players import create_player, sign_in
from infra.identity.keys import JwksKeys
from infra.identity.verifier import JwtVerifier
from tests.adapters.identity_tokens import AUDIENCE, ISSUER, jwks, mint, new_key
from tests.fakes import harness

ROUNDS = 7
CALLS = 300


async def _cpu_per_call(deps: Deps, token: str) -> float:
    start = time.process_time()
    for _ in range(CALLS):
        await sign_in(deps, token)
    return (time.process_time() - start) / CALLS


def test_sign_in_with_a_jwt_against_an_mmk_token() -> None:
    async def main() -> dict[str, float]:
        keys = {alg: new_key(alg, alg) for alg in ("RS256", "ES256", "EdDSA")}
        document = jwks(*keys.values())
        verifier = JwtVerifier(
            ISSUER, AUDIENCE, JwksKeys("https://id/jwks", fetch=lambda url: document)
        )
        h = harness()
        deps = replace(h.deps, identity=verifier)
        tokens = {"MMK token": (await create_player(deps, "ann")).token}
        tokens |= {
            f"JWT {alg}": mint(key, alg, exp=int(time.time()) + 3600) for alg, key in keys.items()
        }
        for token in tokens.values():
            await sign_in(deps, token)  # keys fetched, players made
        runs: dict[str, list[float]] = {name: [] for name in tokens}
        for _ in range(ROUNDS):
            for name, token in tokens.items():
                runs[name].append(await _cpu_per_call(deps, token))
        return {name: statistics.median(v) for name, v in runs.items()}

    found = asyncio.run(main())
    base = found["MMK token"]
    print(f"\nsign_in, CPU per call, median of {ROUNDS} rounds of {CALLS} in turns:")
    for name, seconds in found.items():
        print(f"  {name:10} {seconds * 1e6:7.1f} us  ({seconds / base:4.1f}x the MMK token)")
    assert found["JWT RS256"] > base  # a signature is checked: never the cost of a hash look-up
