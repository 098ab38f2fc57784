"""What a call made without credentials shows: refused as unauthenticated, processed, or neither.

Read by the checks that send one: security.unauthenticated_rejected (the suite, on its interface) and
interop.bindings_same_auth (every interface of a card that declares security). One reading for both, so a gRPC
UNAUTHENTICATED counts as the refusal an HTTP 401 is on every path.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

from probe import redact
from probe.wire import a2a_errors as E
from probe.wire.bindings import Answer, ProblemKind

# errors only a request the agent went on to process can give: it parsed the method and params, looked the task up
PROCESSED_ERRORS = frozenset({E.TASK_NOT_FOUND, E.METHOD_NOT_FOUND, E.INVALID_PARAMS})


class Anonymous(enum.Enum):
    REFUSED = "refused"  # HTTP 401 / 403, gRPC UNAUTHENTICATED / PERMISSION_DENIED
    PROCESSED = "processed"  # a result, or an error only a processed request gets
    OTHER = "other"  # another A2A error, or no A2A answer: it says nothing of authentication


def declares_security(doc: Mapping[str, object]) -> bool:
    """The card asks for credentials: 1.0 `securityRequirements`, 0.3 / 0.2 `security`."""
    return bool(doc.get("securityRequirements") or doc.get("security"))


def anonymous_headers(configured: Iterable[str]) -> dict[str, str | None]:
    """Header overrides that drop every configured credential header and Authorization (the auth flow's own
    credentials go with `probe.wire.http.without_credentials`)."""
    strip: dict[str, str | None] = {k: None for k in configured if redact.is_secret_header(k)}
    strip["Authorization"] = None
    return strip


def anonymous_outcome(answer: Answer) -> Anonymous:
    """How the agent took a call that carried no credentials."""
    if answer.status in (401, 403) or (answer.problem is not None and answer.problem.kind is ProblemKind.AUTH):
        return Anonymous.REFUSED
    if answer.error is not None:
        return Anonymous.PROCESSED if answer.error.name in PROCESSED_ERRORS else Anonymous.OTHER
    return Anonymous.OTHER if answer.problem is not None else Anonymous.PROCESSED
