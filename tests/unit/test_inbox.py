"""The push receiver over real loopback HTTP: tokens, authentication, bounds, strict parsing, waiting."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

from probe.inbox import (
    MAX_BODY_BYTES,
    MAX_DELIVERIES,
    Delivery,
    InboxFull,
    Listener,
    PushInbox,
    Refused,
    Registration,
)

STATUS = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}


@pytest.fixture
async def inbox() -> AsyncIterator[PushInbox]:
    async with Listener() as box:
        yield box


def bearer(reg: Registration) -> dict[str, str]:
    return {"Authorization": f"Bearer {reg.credentials.get_secret_value()}"}


async def post(url: str, body: bytes | str, headers: dict[str, str] | None = None,
               ctype: str = "application/a2a+json") -> int:
    async with aiohttp.ClientSession() as s, s.post(url, data=body, headers={"Content-Type": ctype,
                                                                             **(headers or {})}) as r:
        return r.status


async def test_listener_is_loopback_and_ephemeral(inbox: PushInbox) -> None:
    assert inbox.public_url.startswith("http://127.0.0.1:")
    assert not inbox.public_url.endswith(":0")
    reg = inbox.register(10)
    assert reg.url.startswith(inbox.public_url + "/-/push/")


async def test_each_registration_has_fresh_unguessable_secrets(inbox: PushInbox) -> None:
    regs = [inbox.register(10) for _ in range(20)]
    values = [v for r in regs for v in r.secrets()]
    assert len(set(values)) == len(values)  # no value reused, across or within registrations
    assert all(len(v) >= 43 for v in values)  # 32 random bytes each


async def test_authenticated_delivery_is_stored(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    assert await post(reg.url, json.dumps(STATUS), bearer(reg)) == 204
    [d] = reg.deliveries
    assert d.authorized and d.token is None and d.accepted
    assert d.body == STATUS


async def test_token_alone_is_accepted_but_recorded_as_unauthorized(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    status = await post(reg.url, json.dumps(STATUS), {"X-A2A-Notification-Token": reg.token.get_secret_value()})
    assert status == 204
    [d] = reg.deliveries
    assert d.token is True and not d.authorized


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"X-A2A-Notification-Token": "wrong"},
                                     {"Authorization": "Basic xyz"}])
async def test_unauthenticated_delivery_is_refused_but_remembered(inbox: PushInbox, headers: dict[str, str]) -> None:
    reg = inbox.register(10)
    assert await post(reg.url, json.dumps(STATUS), headers) == 401
    [d] = reg.deliveries
    assert not d.accepted
    assert inbox.refused[Refused.UNAUTHENTICATED] == 1


async def test_unknown_and_released_tokens_are_refused_and_counted(inbox: PushInbox) -> None:
    seen: list[Refused] = []
    inbox._on_refused = seen.append
    reg = inbox.register(10)
    assert await post(inbox.public_url + "/-/push/" + "A" * 43, json.dumps(STATUS)) == 404
    assert await post(inbox.public_url + "/-/push/not-a-token", json.dumps(STATUS)) == 404
    inbox.release(reg)
    assert await post(reg.url, json.dumps(STATUS), bearer(reg)) == 404
    assert inbox.refused[Refused.UNKNOWN_TOKEN] == 3
    assert seen == [Refused.UNKNOWN_TOKEN] * 3
    assert reg.deliveries == []


async def test_expired_registration_is_unknown(inbox: PushInbox) -> None:
    reg = inbox.register(0.01)
    await asyncio.sleep(0.05)
    assert await post(reg.url, json.dumps(STATUS), bearer(reg)) == 404


async def test_only_post_is_served(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    async with aiohttp.ClientSession() as s, s.get(reg.url) as r:
        assert r.status == 405


@pytest.mark.parametrize(("body", "ctype", "why"), [
    (b'{"a": 1, "a": 2}', "application/json", "duplicate key"),
    (b'{"a": NaN}', "application/json", "NaN"),
    (b'{"a": ' + b"9" * 10_000 + b"}", "application/json", "a number of 10000 digits"),  # was a 500
    (b"[1, 2]", "application/json", "not an object"),
    (b"\xff\xfe", "application/json", "UTF-8"),
    (json.dumps(STATUS).encode(), "text/plain", "not JSON"),
])
async def test_bodies_are_parsed_strictly(inbox: PushInbox, body: bytes, ctype: str, why: str) -> None:
    reg = inbox.register(10)
    assert await post(reg.url, body, bearer(reg), ctype=ctype) == 400
    [d] = reg.deliveries
    assert d.body is None and d.problem is not None and why in d.problem
    assert inbox.refused[Refused.MALFORMED] == 1


async def test_bodies_are_bounded(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    huge = b'{"pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    assert await post(reg.url, huge, bearer(reg)) == 413
    assert inbox.refused[Refused.TOO_LARGE] == 1
    assert reg.deliveries[0].problem is not None


async def test_deliveries_per_registration_are_bounded(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    for _ in range(MAX_DELIVERIES):
        assert reg.add(Delivery(0.0, True, None, "application/json", body={}))
    assert await post(reg.url, json.dumps(STATUS), bearer(reg)) == 429
    assert reg.dropped == 1 and len(reg.deliveries) == MAX_DELIVERIES


async def test_registrations_are_bounded() -> None:
    box = PushInbox("http://127.0.0.1:1", max_registrations=2)
    box.register(10)
    box.register(10)
    with pytest.raises(InboxFull):
        box.register(10)


async def test_expired_registrations_free_their_slot() -> None:
    box = PushInbox("http://127.0.0.1:1", max_registrations=1)
    box.register(0.01)
    await asyncio.sleep(0.03)
    box.register(10)
    assert len(box) == 1


async def test_wait_returns_when_the_condition_holds(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    waiter = asyncio.create_task(reg.wait(lambda ds: len(ds) >= 2, time.monotonic() + 5))
    await post(reg.url, json.dumps(STATUS), bearer(reg))
    assert not waiter.done()
    await post(reg.url, json.dumps(STATUS), bearer(reg))
    assert await waiter is True


async def test_wait_honours_its_deadline(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    t0 = time.monotonic()
    assert await reg.wait(lambda ds: bool(ds), t0 + 0.1) is False
    assert 0.09 <= time.monotonic() - t0 < 1.0


async def test_redact_masks_every_secret(inbox: PushInbox) -> None:
    reg = inbox.register(10)
    echoed = f"config {reg.url} token={reg.token.get_secret_value()} cred={reg.credentials.get_secret_value()}"
    clean = inbox.redact(echoed)
    assert all(v not in clean for v in reg.secrets())


async def test_explicit_public_url_is_used() -> None:
    async with Listener(public_url="https://probe.example.com/hooks/") as box:
        assert box.register(5).url.startswith("https://probe.example.com/hooks/-/push/")


def test_inbox_makes_no_outbound_requests() -> None:
    from pathlib import Path

    import probe.inbox as mod

    source = Path(mod.__file__).read_text(encoding="utf-8")
    assert "ClientSession" not in source and "HttpClient" not in source and "probe.wire.http" not in source

