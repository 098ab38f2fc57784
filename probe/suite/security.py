"""Security checks: a card that declares security must reject a call without credentials."""

from __future__ import annotations

import uuid

from probe import redact
from probe.results import Status
from probe.suite.context import Skip, Suite
from probe.wire import a2a_errors as E
from probe.wire.http import without_credentials

# answers that show the request was processed as if authenticated
_PROCESSED = {E.TASK_NOT_FOUND, E.METHOD_NOT_FOUND, E.INVALID_PARAMS}


def declares_security(doc: dict[str, object]) -> bool:
    return bool(doc.get("securityRequirements") or doc.get("security"))


async def unauthenticated_rejected(s: Suite) -> None:
    if not declares_security(s.card.doc):
        raise Skip("the card declares no security requirements")
    strip: dict[str, str | None] = {k: None for k in s.run.t.invoke_headers() if redact.is_secret_header(k)}
    strip["Authorization"] = None
    with without_credentials():  # none of the auth flow's credentials either (headers, query, cookie)
        call, _ = await s.client.get(f"a2a-probe-auth-{uuid.uuid4()}", headers=strip)
    err = call.error
    if call.status == 401:
        s.record("security.challenge", Status.PASS if call.challenge else Status.FAIL,
                 f"WWW-Authenticate: {call.challenge[:80]}" if call.challenge else "401 without WWW-Authenticate")
    else:
        s.record("security.challenge", Status.SKIP, f"no 401 to inspect (HTTP {call.status})")
    if call.status in (401, 403):
        s.record("security.unauthenticated_rejected", Status.PASS, f"HTTP {call.status} without credentials")
    elif err is not None and err.name not in _PROCESSED:
        s.record("security.unauthenticated_rejected", Status.PASS, f"rejected: {err.describe()}")
    else:
        got = err.describe() if err else f"HTTP {call.status} with a result"
        s.record("security.unauthenticated_rejected", Status.FAIL,
                 f"a call without credentials was processed ({got}) although the card declares security")


CHECKS = (unauthenticated_rejected,)
IDS = {unauthenticated_rejected: ("security.unauthenticated_rejected", "security.challenge")}
