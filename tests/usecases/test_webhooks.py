"""Webhooks (issue #25, docs/decisions/0064) on the fakes: an endpoint's
messages are written with their notifications, each signed as Standard
Webhooks says (checked here by its reference library, never by ours),
retried with backoff until taken or a day has passed, then the endpoint
disabled; a secret rotated signs with both secrets for its overlap; a
lease lost to another deliverer cannot finish; players choose what is
pushed, and a player online on the game is not pushed their turn."""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from domain.errors import DomainError, ErrorCode
from domain.services import webhooks as hooks
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.service_keys import issue_player_token
from domain.webhooks import (
    KINDS,
    Attempt,
    Disabled,
    Endpoint,
    Message,
    Policy,
    RetryPolicy,
    Status,
    check_url,
    kind_of,
    notice_fields,
    parse_networks,
    reachable,
)
from infra.presence.memory import InProcessPresence
from infra.webhooks.deliverer import ONLINE, Signal, Tuning, WebhookDeliverer
from tests.fakes import FakeSender, Harness, _Webhooks, harness
from tests.usecases.conftest import req

URL = "https://hooks.example.com/mmk"


@pytest.fixture
def h() -> Harness:
    made = harness()
    made.clock.set(datetime.now(UTC))  # signatures are checked against real time
    return made


def _deliverer(h: Harness, sender: FakeSender) -> WebhookDeliverer:
    return WebhookDeliverer(h.deps, sender, Signal(), jitter=lambda: 0.5)


async def _deliver(d: WebhookDeliverer) -> int:
    started = await d.round()
    await d.idle()
    return started


async def _people(h: Harness, *names: str) -> list[str]:
    return [(await issue_player_token(h.deps, f"app-{n}", n, None)).player.id for n in names]


async def _game(h: Harness) -> tuple[str, list[str]]:
    """Three people of the app started a game; ann, who started it, is told
    nothing of that (she knows); the first seat to act is told its turn."""
    ann, bob, cy = await _people(h, "ann", "bob", "cy")
    game_id = (await create_game(h.deps, req(ann), NewGame(3))).game_id
    for p in (bob, cy):
        await join_game(h.deps, req(p), game_id, None)
    await start_game(h.deps, req(ann), game_id)
    return game_id, [ann, bob, cy]


async def test_an_endpoint_gets_each_notification_of_its_kinds_signed_once(h: Harness) -> None:
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_TURN", "YOUR_GAME_STARTED"], "phones")
    other = await hooks.create_endpoint(h.deps, URL + "/ends", ["YOUR_GAME_ENDED"], "")
    assert made.secret.startswith("whsec_") and made.secret != other.secret
    game_id, people = await _game(h)
    told = [n for p in people for n in h.store.notifications.get(p, [])]
    wanted = [n for n in told if kind_of(type(n.notice)) in made.endpoint.kinds]
    assert wanted and {type(n.notice).__name__ for n in wanted} >= {"YourGameStarted"}
    sender = FakeSender()
    assert await _deliver(_deliverer(h, sender)) == len(wanted)
    assert await _deliver(_deliverer(h, sender)) == 0  # each once
    verifier = Webhook(made.secret)
    bodies = []
    for url, headers, body in sender.got:
        assert url == URL
        bodies.append(verifier.verify(body, headers))
        with pytest.raises(WebhookVerificationError):
            Webhook(other.secret).verify(body, headers)
    by_seq = {(b["data"]["playerId"], b["data"]["seq"]): b for b in bodies}
    assert set(by_seq) == {(n.player_id, n.seq) for n in wanted}
    external = {p: f"app-{n}" for p, n in zip(people, ("ann", "bob", "cy"), strict=True)}
    for n in wanted:
        b = by_seq[(n.player_id, n.seq)]
        kind = kind_of(type(n.notice))
        assert b["type"] == f"notification.{kind.lower()}"
        assert b["data"]["externalId"] == external[n.player_id]
        assert b["data"]["kind"] == kind
        assert b["data"]["notice"] == json.loads(json.dumps(notice_fields(n.notice)))
        assert b["data"]["notice"]["gameId"] == game_id
    ids = [headers["webhook-id"] for _, headers, _ in sender.got]
    assert len(set(ids)) == len(ids)
    assert {m.status for m in h.store.messages.values()} == {Status.DELIVERED}


async def test_refused_endpoints_change_nothing(h: Harness) -> None:
    for url, kinds in [
        ("https://10.0.0.7/hook", ["YOUR_TURN"]),
        ("http://127.0.0.1:8080/hook", ["YOUR_TURN"]),
        ("https://[::1]/hook", ["YOUR_TURN"]),
        ("https://169.254.169.254/latest", ["YOUR_TURN"]),
        ("http://localhost/hook", ["YOUR_TURN"]),
        ("ftp://hooks.example.com/", ["YOUR_TURN"]),
        ("https://user:pw@hooks.example.com/", ["YOUR_TURN"]),
        (URL, ["YOUR_TUNR"]),
        (URL, []),
    ]:
        with pytest.raises(DomainError) as e:
            await hooks.create_endpoint(h.deps, url, kinds, "")
        assert e.value.code is ErrorCode.BAD_INPUT, url
    assert h.store.endpoints == {}
    allowed = replace(h.deps.webhooks, allowed=parse_networks("127.0.0.0/8"))
    h.deps = replace(h.deps, webhooks=allowed)
    made = await hooks.create_endpoint(h.deps, "http://127.0.0.1:8080/hook", ["YOUR_TURN"], "")
    assert made.endpoint.url == "http://127.0.0.1:8080/hook"


async def test_a_failing_receiver_is_retried_with_growing_waits_then_disabled(h: Harness) -> None:
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    sender = FakeSender(codes=[500] * 100)
    d = _deliverer(h, sender)
    waits: list[float] = []
    rounds = 0
    while made.endpoint.id not in {
        e.id for e, _ in h.store.endpoints.values() if e.disabled_at is not None
    }:
        assert await _deliver(d) == 2  # bob's and cy's YourGameStarted
        pending = [m for m in h.store.messages.values() if m.status is Status.PENDING]
        if not pending:
            break
        # both messages' waits: each runs from its own attempt's end (its
        # latency is real time), so the two are due a few milliseconds apart
        due = max(m.next_at for m in pending if m.next_at is not None)
        waits.append((due - h.clock.now()).total_seconds())
        h.clock.advance(due - h.clock.now())
        rounds += 1
        assert rounds < 30
    # growing (the last one cut to end the day), from seconds up to the 6 h cap
    # (each wait to within a millisecond of the fake clock's: at the cap they are equal)
    assert all(b > a - 0.01 for a, b in itertools.pairwise(waits[:-1]))
    assert waits[0] < 10 and max(waits) <= 6 * 3600 * 1.2 + 1
    assert sum(waits) == pytest.approx(24 * 3600, abs=60)  # the last try a day after the first
    endpoint = h.store.endpoints[made.endpoint.id][0]
    assert endpoint.disabled_reason is Disabled.FAILING
    failed = list(h.store.messages.values())
    assert {m.status for m in failed} == {Status.FAILED}
    assert all(len(m.attempts) == m.tries == rounds + 1 for m in failed)
    assert {a.status_code for m in failed for a in m.attempts} == {500}
    assert await _deliver(d) == 0  # disabled: nothing more goes
    assert d.outcomes == {"PENDING": 2 * rounds, "FAILED": 2, "ENDPOINT_DISABLED": 1}
    # the app mends its receiver, enables the endpoint and replays what failed
    await hooks.set_enabled(h.deps, made.endpoint.id, True)
    since = min(m.created_at for m in failed)
    assert await hooks.replay_failed(h.deps, made.endpoint.id, since) == 2
    sender.codes.clear()
    assert await _deliver(d) == 2
    assert {m.status for m in h.store.messages.values()} == {Status.DELIVERED}
    ids = {headers["webhook-id"] for _, headers, _ in sender.got}
    assert ids == {m.id for m in failed}  # the same ids again: receivers drop repeats


async def test_timeouts_and_redirects_count_as_failures(h: Harness) -> None:
    await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    sender = FakeSender(codes=[None, 302])
    d = _deliverer(h, sender)
    assert await _deliver(d) == 2
    errors = sorted(m.attempts[0].error or "" for m in h.store.messages.values())
    assert errors == ["HTTP 302", "no answer within 10 s"]
    assert {m.status for m in h.store.messages.values()} == {Status.PENDING}


def test_the_backoff_grows_jittered_and_capped() -> None:
    p = RetryPolicy()
    assert p.delay(1, 0.0) == timedelta(seconds=4)
    assert p.delay(1, 0.999).total_seconds() == pytest.approx(6, abs=0.01)
    assert p.delay(3, 0.5) == timedelta(seconds=80)
    assert p.delay(20, 0.5) == timedelta(hours=6)


async def test_a_rotated_secret_signs_with_both_for_its_overlap(h: Harness) -> None:
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    rotated = await hooks.rotate_secret(h.deps, made.endpoint.id, timedelta(minutes=2))
    assert rotated.secret != made.secret and rotated.endpoint.previous_until is not None
    await _game(h)
    sender = FakeSender()
    await _deliver(_deliverer(h, sender))
    for _, headers, body in sender.got:
        assert len(headers["webhook-signature"].split(" ")) == 2
        Webhook(made.secret).verify(body, headers)
        Webhook(rotated.secret).verify(body, headers)
    h.clock.advance(timedelta(minutes=2))  # within the verifier's 5 min of real time
    await _game(h)
    sender.got.clear()
    await _deliver(_deliverer(h, sender))
    assert sender.got
    for _, headers, body in sender.got:
        Webhook(rotated.secret).verify(body, headers)
        with pytest.raises(WebhookVerificationError):
            Webhook(made.secret).verify(body, headers)
    with pytest.raises(DomainError) as e:
        await hooks.rotate_secret(h.deps, made.endpoint.id, timedelta(days=8))
    assert e.value.code is ErrorCode.BAD_INPUT


async def test_a_lease_lost_to_another_deliverer_cannot_finish(h: Harness) -> None:
    """A deliverer that stalls past its lease: the message is due again,
    another takes and delivers it; the first one's late result is dropped."""
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    now = h.clock.now()
    with h.deps.uow() as uow:
        first = uow.webhooks.lease(made.endpoint.id, now, now + timedelta(seconds=30), 10)
    assert len(first) == 2
    with h.deps.uow() as uow:  # leased: nobody else takes them meanwhile
        assert uow.webhooks.lease(made.endpoint.id, now, now + timedelta(seconds=30), 10) == []
    h.clock.advance(timedelta(seconds=31))
    sender = FakeSender()
    assert await _deliver(_deliverer(h, sender)) == 2
    taken = Attempt(now, 200, 1.0)
    late = h.deps.webhooks.retry.after(first[0], taken, 0.5)
    with h.deps.uow() as uow:
        assert not uow.webhooks.finish(first[0], taken, late)
    m = h.store.messages[first[0].id]
    assert m.status is Status.DELIVERED and m.tries == 2 and len(m.attempts) == 1


async def test_players_choose_what_is_pushed_and_online_players_are_not_pushed_their_turn(
    h: Harness,
) -> None:
    presence = InProcessPresence()
    h.deps = replace(h.deps, presence=presence)
    await hooks.create_endpoint(h.deps, URL, sorted(KINDS), "")
    ann, bob, cy = await _people(h, "ann", "bob", "cy")
    assert await hooks.push_kinds(h.deps, bob) == frozenset(KINDS)
    assert await hooks.set_push_kinds(h.deps, bob, ["YOUR_TURN"]) == {"YOUR_TURN"}
    await hooks.set_push_kinds(h.deps, cy, [])
    with pytest.raises(DomainError) as e:
        await hooks.set_push_kinds(h.deps, cy, ["NOPE"])
    assert e.value.code is ErrorCode.BAD_INPUT
    assert await hooks.push_kinds(h.deps, cy) == frozenset()
    game_id = (await create_game(h.deps, req(ann), NewGame(3))).game_id
    for p in (bob, cy):
        await join_game(h.deps, req(p), game_id, None)
    await presence.join(game_id, bob)  # bob holds the game's stream
    await start_game(h.deps, req(ann), game_id)
    kinds = {(m.player_id, m.kind) for m in h.store.messages.values()}
    assert (bob, "YOUR_GAME_STARTED") not in kinds  # bob wants only his turns pushed
    assert not {k for k in kinds if k[0] == cy}  # cy wants nothing pushed
    sender = FakeSender()
    await _deliver(_deliverer(h, sender))
    turns = [m for m in h.store.messages.values() if m.kind == "YOUR_TURN"]
    for m in turns:
        if m.player_id == bob:
            assert m.status is Status.SKIPPED and m.attempts[0].error == ONLINE
        else:
            assert m.status is Status.DELIVERED
    assert all(json.loads(b)["data"]["playerId"] != bob for _, _, b in sender.got)


async def test_done_messages_expire_after_the_retention(h: Harness) -> None:
    h.deps = replace(h.deps, webhooks=Policy(retention=timedelta(days=1)))
    await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    await _deliver(_deliverer(h, FakeSender()))
    assert await hooks.expire_done(h.deps) == 0
    h.clock.advance(timedelta(days=1, seconds=1))
    assert await hooks.expire_done(h.deps) == 2
    assert h.store.messages == {}


async def test_an_endpoint_is_listed_disabled_enabled_and_deleted(h: Harness) -> None:
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_TURN"], "  phones ")
    assert [e.description for e in await hooks.list_endpoints(h.deps)] == ["phones"]
    off = await hooks.set_enabled(h.deps, made.endpoint.id, False)
    assert off.disabled_reason is Disabled.BY_APP
    await _game(h)
    assert h.store.messages == {}  # a disabled endpoint is sent nothing new
    on = await hooks.set_enabled(h.deps, made.endpoint.id, True)
    assert on.disabled_at is None
    changed = await hooks.update_endpoint(h.deps, made.endpoint.id, None, ["YOUR_GAME_ENDED"], None)
    assert changed.kinds == {"YOUR_GAME_ENDED"} and changed.url == URL
    await hooks.delete_endpoint(h.deps, made.endpoint.id)
    assert await hooks.list_endpoints(h.deps) == []
    for call in (
        hooks.delete_endpoint(h.deps, made.endpoint.id),
        hooks.set_enabled(h.deps, "whk_nope", True),
        hooks.deliveries(h.deps, "whk_nope", None, None, 10),
        hooks.replay(h.deps, "msg_nope"),
    ):
        with pytest.raises(DomainError) as e:
            await call
        assert e.value.code is ErrorCode.NOT_FOUND


async def test_a_secret_sealed_under_another_server_key_is_never_sent_unsigned(
    h: Harness,
) -> None:
    """The operator changed ``MMK_SECRET_KEY``: attempts fail with why (in
    the log, retried), nothing is posted; a rotation mends it."""
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    moved = replace(h.deps, keys=replace(h.deps.keys, secret=b"another-secret-0123456789abcdef"))
    sender = FakeSender()
    d = WebhookDeliverer(moved, sender, Signal(), jitter=lambda: 0.5)
    assert await _deliver(d) == 2
    assert sender.got == []
    errors = {m.attempts[-1].error for m in h.store.messages.values()}
    assert len(errors) == 1 and "rotateWebhookSecret" in str(errors.pop())
    rotated = await hooks.rotate_secret(moved, made.endpoint.id, timedelta(0))
    h.clock.advance(timedelta(minutes=1))
    assert await _deliver(d) == 2
    for _, headers, body in sender.got:
        Webhook(rotated.secret).verify(body, headers)


async def test_a_failing_setup_never_stops_the_deliveries(h: Harness) -> None:
    """The settings' endpoint cannot be set up (the database refuses, say):
    the deliverer says so and delivers the others' messages meanwhile."""

    async def broken() -> None:
        raise RuntimeError("no settings endpoint today")

    await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    sender = FakeSender()
    d = WebhookDeliverer(h.deps, sender, Signal(), Tuning(poll=0.01), setup=broken)
    d.start()
    try:
        async with asyncio.timeout(10):
            while len(sender.got) < 2:
                await asyncio.sleep(0.01)
    finally:
        await d.aclose()
    assert {m.status for m in h.store.messages.values()} == {Status.DELIVERED}


async def test_with_no_endpoint_a_wake_is_no_read_and_a_new_one_is_seen_within_a_poll(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No endpoint: each commit with notifications wakes the deliverer, but
    the endpoints are read once a poll, not once a wake (issue #28); one
    created meanwhile gets its messages within a poll."""
    reads = 0
    endpoints = _Webhooks.endpoints

    def counted(self: _Webhooks) -> list[Endpoint]:
        nonlocal reads
        reads += 1
        return endpoints(self)

    monkeypatch.setattr(_Webhooks, "endpoints", counted)
    poll, signal, sender = 0.5, Signal(), FakeSender()
    d = WebhookDeliverer(h.deps, sender, signal, Tuning(poll=poll))
    d.start()
    try:
        async with asyncio.timeout(10):
            while reads < 1:  # the first round
                await asyncio.sleep(0.001)
            began, before = time.monotonic(), reads
            for _ in range(50):
                signal()
                await asyncio.sleep(0.002)
            took = time.monotonic() - began
            assert reads - before <= took / poll + 1  # once a poll, not 50 times
            await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
            await _game(h)
            while len(sender.got) < 2:
                await asyncio.sleep(0.01)
    finally:
        await d.aclose()


def test_a_retry_waits_from_the_end_of_the_attempt() -> None:
    """A try that timed out after 10 s is not retried the moment it ends."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    m = Message("m", "e", "p", 1, "YOUR_TURN", "g", at, "{}", tries=1)
    slow = Attempt(at, None, 10_000.0, "no answer within 10 s")
    outcome = RetryPolicy().after(m, slow, 0.5)
    assert outcome.next_at == at + timedelta(seconds=10 + 5)


async def test_a_replayed_message_gets_a_fresh_day_from_its_first_retry(h: Harness) -> None:
    """After a day of failures and a replay, the first failure waits
    seconds again, not the 6 h cap; enabling an endpoint again gives its
    waiting messages a fresh day too."""
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    sender = FakeSender(codes=[500] * 1000)
    d = _deliverer(h, sender)
    while not any(m.status is Status.FAILED for m in h.store.messages.values()):
        await _deliver(d)
        due = [m.next_at for m in h.store.messages.values() if m.next_at is not None]
        if due:
            h.clock.advance(min(due) - h.clock.now())
    await hooks.set_enabled(h.deps, made.endpoint.id, True)
    assert await hooks.replay_failed(h.deps, made.endpoint.id, datetime(2000, 1, 1, tzinfo=UTC))
    start = h.clock.now()
    await _deliver(d)
    waits = [(m.next_at - start).total_seconds() for m in h.store.messages.values() if m.next_at]
    assert waits and max(waits) < 10, waits  # 5 s (±20%), a fresh backoff

    # an endpoint disabled for days: enabled again, its waiting messages have a day from now
    await hooks.set_enabled(h.deps, made.endpoint.id, False)
    h.clock.advance(timedelta(days=3))
    await hooks.set_enabled(h.deps, made.endpoint.id, True)
    sender.codes[:] = [500, 500]
    await _deliver(d)
    assert {m.status for m in h.store.messages.values()} == {Status.PENDING}


def _delivered(h: Harness) -> int:
    return sum(m.status is Status.DELIVERED for m in h.store.messages.values())


async def test_queued_messages_follow_their_endpoint_as_it_is_now(h: Harness) -> None:
    """Leased ahead and waiting for a slot: a new URL or secret is used, and
    nothing more goes to an endpoint deleted meanwhile."""
    made = await hooks.create_endpoint(h.deps, URL, ["YOUR_TURN", "YOUR_GAME_STARTED"], "")
    for _ in range(3):
        await _game(h)
    gate = asyncio.Semaphore(0)  # each post waits for a pass

    class Slow(FakeSender):
        async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> int:
            await gate.acquire()
            return await super().post(url, headers, body, timeout)

    async def posted(n: int) -> None:
        async with asyncio.timeout(5):
            while len(sender.got) < n:
                await asyncio.sleep(0.001)

    sender = Slow()
    # poll=0: every round reads the endpoints (else at most once a poll while work is queued)
    d = WebhookDeliverer(
        h.deps, sender, Signal(), Tuning(concurrency=1, poll=0), jitter=lambda: 0.5
    )
    assert await d.round() == 1  # one slot; two more leased ahead, queued
    assert sum(len(q) for q in d._queue.values()) == 2
    await hooks.update_endpoint(h.deps, made.endpoint.id, URL + "/v2", None, None)
    rotated = await hooks.rotate_secret(h.deps, made.endpoint.id, timedelta(0))
    await d.round()  # reads the endpoint as it is now
    gate.release()
    gate.release()
    await posted(2)  # the one in flight (old URL), then a queued one (new URL)
    assert [u for u, _, _ in sender.got] == [URL, URL + "/v2"]
    async with asyncio.timeout(5):  # the second's result written, the third in flight
        while d.in_flight != 1 or _delivered(h) != 2:
            await asyncio.sleep(0.001)
    Webhook(rotated.secret).verify(sender.got[1][2], sender.got[1][1])
    await d.round()  # more leased ahead behind the third, in flight
    assert sum(len(q) for q in d._queue.values()) == 2
    await hooks.delete_endpoint(h.deps, made.endpoint.id)
    await d.round()  # gone: its queue is dropped
    assert not d._queue
    for _ in range(10):
        gate.release()
    await d.idle()
    assert len(sender.got) == 3  # only the one already in flight


async def test_an_unexpected_failure_is_an_attempt_not_a_stuck_message(h: Harness) -> None:
    class Broken(FakeSender):
        async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> int:
            raise UnicodeError("label empty or too long")

    await hooks.create_endpoint(h.deps, URL, ["YOUR_GAME_STARTED"], "")
    await _game(h)
    await _deliver(_deliverer(h, Broken()))
    for m in h.store.messages.values():
        assert m.status is Status.PENDING and m.next_at is not None  # tried again later
        assert "UnicodeError" in str(m.attempts[-1].error)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b:1::7f00:1",
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo, client 192.0.2.45
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:10.1.2.3",  # IPv4-mapped
        "fec0::1",  # site-local
        "fe80::1",
        "::1",
        "0.0.0.0",
        "169.254.169.254",
        "100.64.0.1",  # shared address space
        "224.0.0.1",
    ],
)
def test_no_address_that_reaches_inside_is_a_target(address: str) -> None:
    assert not reachable(ipaddress.ip_address(address), ())
    with pytest.raises(DomainError):
        check_url(f"https://[{address}]/" if ":" in address else f"https://{address}/", ())


def test_public_targets_and_names() -> None:
    for address in ("8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"):
        assert reachable(ipaddress.ip_address(address), ()), address
    assert check_url("https://bücher.example/x", ()) == "https://xn--bcher-kva.example/x"
    for bad in ("https://a..example/", "https://" + "a" * 64 + ".example/"):
        with pytest.raises(DomainError):
            check_url(bad, ())
    assert reachable(ipaddress.ip_address("::ffff:127.0.0.1"), parse_networks("127.0.0.0/8"))
