"""Security checks: a card that declares security must reject a call without credentials."""

from __future__ import annotations

import uuid
from urllib.parse import urljoin

from probe.checks.auth import Anonymous, anonymous_headers, anonymous_outcome, declares_security
from probe.results import Status
from probe.suite.context import Skip, Suite, describe_answer
from probe.wire.bindings import Op, ProblemKind
from probe.wire.http import without_credentials


async def unauthenticated_rejected(s: Suite) -> None:
    if not declares_security(s.card.doc):
        raise Skip("the card declares no security requirements")
    strip = _anonymous(s)
    with without_credentials():  # none of the auth flow's credentials either (headers, query, cookie)
        call, _ = await s.client.get(f"a2a-probe-auth-{uuid.uuid4()}", headers=strip)
    err, seen = call.error, anonymous_outcome(call)
    if call.status == 401:
        s.record("security.challenge", Status.PASS if call.challenge else Status.FAIL,
                 f"WWW-Authenticate: {call.challenge[:80]}" if call.challenge else "401 without WWW-Authenticate")
    else:
        s.record("security.challenge", Status.SKIP, f"no 401 to inspect (HTTP {call.status})")
    if seen is Anonymous.REFUSED:
        s.record("security.unauthenticated_rejected", Status.PASS, f"HTTP {call.status} without credentials"
                 if call.status in (401, 403) else f"refused without credentials: {call.describe()}")
    elif err is not None and seen is Anonymous.OTHER:
        s.record("security.unauthenticated_rejected", Status.PASS, f"rejected: {err.describe()}")
    else:
        got = err.describe() if err else call.describe()
        s.record("security.unauthenticated_rejected", Status.FAIL,
                 f"a call without credentials was processed ({got}) although the card declares security")


def _anonymous(s: Suite) -> dict[str, str | None]:
    return anonymous_headers(s.run.t.headers)


def declares_extended_card(doc: dict[str, object]) -> bool:
    caps = doc.get("capabilities")
    return (isinstance(caps, dict) and caps.get("extendedAgentCard") is True) or \
        doc.get("supportsAuthenticatedExtendedCard") is True


async def extended_card_auth(s: Suite) -> None:
    """1.0 §13.3 / 0.3 §7.10 / 0.2 §7.10: the extended card is for authenticated callers only."""
    if not declares_extended_card(s.card.doc):
        raise Skip("the card declares no extended card")
    status: int | None
    if s.card.family == "0.2":  # a plain HTTP GET next to the interface, not a JSON-RPC method (0.2.5 §7.10)
        url = urljoin((s.result.interface_url or s.card.url).rstrip("/") + "/", "../agent/authenticatedExtendedCard")
        with without_credentials():
            resp = await s.run.client.request("GET", url, deadline=s.deadline, headers={"Accept": "application/json"},
                                              max_bytes=1 << 20, config=s.run.transport)
        status, what, served = resp.status, f"GET {resp.exchange.url} without credentials", resp.status == 200
        refused_other = "" if served else f"HTTP {status}"
    else:
        with without_credentials():
            answer = await s.client.call(Op.EXTENDED_CARD, {}, headers=_anonymous(s))
        status, what = answer.status, f"{answer.method} without credentials"
        served = answer.error is None and answer.problem is None and isinstance(answer.result, dict)
        if answer.problem is not None and answer.problem.kind is ProblemKind.AUTH:
            status = status or 401  # gRPC UNAUTHENTICATED / PERMISSION_DENIED
        refused_other = describe_answer(answer)
    if served:
        s.record("security.extended_card_auth", Status.FAIL, f"{what}: the extended card was served (HTTP {status})")
    elif status in (401, 403):
        s.record("security.extended_card_auth", Status.PASS, f"{what}: refused, HTTP {status}")
    else:
        s.record("security.extended_card_auth", Status.FAIL,
                 f"{what}: refused, but not as an authentication failure (expected HTTP 401 or 403, gRPC "
                 f"UNAUTHENTICATED): {refused_other}")


CHECKS = (unauthenticated_rejected, extended_card_auth)
IDS = {unauthenticated_rejected: ("security.unauthenticated_rejected", "security.challenge"),
       extended_card_auth: ("security.extended_card_auth",)}
