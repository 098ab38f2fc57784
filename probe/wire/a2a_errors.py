"""The one table of A2A errors: each error's name with its JSON-RPC code, HTTP status and gRPC status.

Spec §5.4 / §11 (1.0.1) and the digest's §8 table. 1.0.1 changed some mappings from 1.0.0 (TaskNotCancelable
409 -> 400, ContentTypeNotSupported 415 -> 400, InvalidAgentResponse 502 -> 500, and UNIMPLEMENTED ->
FAILED_PRECONDITION for PushNotificationNotSupported, UnsupportedOperation and VersionNotSupported). An agent
may follow either: the lookups accept both and say which one matched, so a report can name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
MAPPINGS = ("1.0.0", "1.0.1")


@dataclass(frozen=True, slots=True)
class A2AErrorSpec:
    name: str  # the 1.0 name, e.g. TaskNotFoundError
    jsonrpc: int
    reason: str | None  # the ErrorInfo reason; None for the plain JSON-RPC errors
    http: int  # 1.0.1
    grpc: str  # 1.0.1, a grpc.StatusCode name
    http_100: int | None = None  # 1.0.0, where it differs
    grpc_100: str | None = None
    name_03: str | None = None  # the 0.3 name, where it differs

    def http_statuses(self) -> dict[int, tuple[str, ...]]:
        return _by_mapping(self.http, self.http_100)

    def grpc_statuses(self) -> dict[str, tuple[str, ...]]:
        return _by_mapping(self.grpc, self.grpc_100)


def _by_mapping(v101: Any, v100: Any) -> dict[Any, tuple[str, ...]]:
    if v100 is None or v100 == v101:
        return {v101: MAPPINGS}
    return {v100: ("1.0.0",), v101: ("1.0.1",)}


_E = A2AErrorSpec
ERRORS: tuple[A2AErrorSpec, ...] = (
    # JSON-RPC's own errors: the spec lists no ErrorInfo reason for them; the reasons here follow its naming rule
    # (UPPER_SNAKE_CASE without "Error"), as the official SDKs send them on HTTP+JSON and gRPC. The HTTP/gRPC
    # columns are the categories of §3.3.2.
    _E("JSONParseError", -32700, "JSON_PARSE", 400, "INVALID_ARGUMENT"),
    _E("InvalidRequestError", -32600, "INVALID_REQUEST", 400, "INVALID_ARGUMENT"),
    _E("MethodNotFoundError", -32601, "METHOD_NOT_FOUND", 404, "UNIMPLEMENTED"),
    _E("InvalidParamsError", -32602, "INVALID_PARAMS", 400, "INVALID_ARGUMENT"),
    _E("InternalError", -32603, "INTERNAL", 500, "INTERNAL"),
    # A2A errors
    _E("TaskNotFoundError", -32001, "TASK_NOT_FOUND", 404, "NOT_FOUND"),
    _E("TaskNotCancelableError", -32002, "TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION", http_100=409),
    _E("PushNotificationNotSupportedError", -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION",
       grpc_100="UNIMPLEMENTED"),
    _E("UnsupportedOperationError", -32004, "UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION",
       grpc_100="UNIMPLEMENTED"),
    _E("ContentTypeNotSupportedError", -32005, "CONTENT_TYPE_NOT_SUPPORTED", 400, "INVALID_ARGUMENT", http_100=415),
    _E("InvalidAgentResponseError", -32006, "INVALID_AGENT_RESPONSE", 500, "INTERNAL", http_100=502),
    _E("ExtendedAgentCardNotConfiguredError", -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", 400,
       "FAILED_PRECONDITION", name_03="AuthenticatedExtendedCardNotConfiguredError"),
    _E("ExtensionSupportRequiredError", -32008, "EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION"),
    _E("VersionNotSupportedError", -32009, "VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION",
       grpc_100="UNIMPLEMENTED"),
)
BY_NAME: dict[str, A2AErrorSpec] = {e.name: e for e in ERRORS}
BY_CODE: dict[int, A2AErrorSpec] = {e.jsonrpc: e for e in ERRORS}
BY_REASON: dict[str, A2AErrorSpec] = {e.reason: e for e in ERRORS if e.reason}
assert len(BY_NAME) == len(BY_CODE) == len(ERRORS)

TASK_NOT_FOUND = "TaskNotFoundError"
TASK_NOT_CANCELABLE = "TaskNotCancelableError"
UNSUPPORTED_OPERATION = "UnsupportedOperationError"
VERSION_NOT_SUPPORTED = "VersionNotSupportedError"
METHOD_NOT_FOUND = "MethodNotFoundError"
INVALID_PARAMS = "InvalidParamsError"
PUSH_NOT_SUPPORTED = "PushNotificationNotSupportedError"
EXTENDED_CARD_NOT_CONFIGURED = "ExtendedAgentCardNotConfiguredError"
INTERNAL = "InternalError"


# ---- A2A 0.3 over HTTP+JSON and gRPC: no fixed error format and no mapping table

# 0.3 §3.2.3 only says REST errors MUST use "appropriate HTTP status codes (200, 400, 401, 403, 404, 500, etc.) that
# correspond to A2A error types" in "a consistent JSON format that maps to A2A error types". The statuses that
# correspond: either 1.0 mapping, plus the ones the official SDKs' 0.3 REST servers chose (a2a-sdk 0.3: 422
# InvalidParams, 501 for the not-supported errors, 404 for the extended card; @a2a-js/sdk's 0.3 layer: 501
# MethodNotFound).
_HTTP_03_MORE: dict[str, tuple[int, ...]] = {
    "InvalidParamsError": (422,), "MethodNotFoundError": (405, 501), "PushNotificationNotSupportedError": (501,),
    "UnsupportedOperationError": (501,), "ExtendedAgentCardNotConfiguredError": (404,)}
# 0.3 §8's "typical message" per error (and the JSON-RPC ones), the only name a bare {"message": …} body carries
_TYPICAL_03: dict[str, tuple[str, ...]] = {
    "JSONParseError": ("invalid json payload",), "InvalidRequestError": ("invalid json-rpc request",
                                                                         "request payload validation error"),
    "MethodNotFoundError": ("method not found",), "InvalidParamsError": ("invalid method parameters",
                                                                         "invalid parameters"),
    "InternalError": ("internal error", "internal server error"), "TaskNotFoundError": ("task not found",),
    "TaskNotCancelableError": ("task cannot be canceled", "task not cancelable"),
    "PushNotificationNotSupportedError": ("push notification is not supported",
                                          "push notifications are not supported"),
    # @a2a-js/sdk 0.3's A2AError.unsupportedOperation says "Unsupported operation: <what>"
    "UnsupportedOperationError": ("this operation is not supported", "unsupported operation"),
    "ContentTypeNotSupportedError": ("incompatible content types",),
    "InvalidAgentResponseError": ("invalid agent response",),
    "ExtendedAgentCardNotConfiguredError": ("authenticated extended card not configured",)}
MAPPING_03 = "0.3"


def http_statuses_03(spec: A2AErrorSpec) -> tuple[int, ...]:
    return tuple(sorted({spec.http, spec.http_100 or spec.http, *_HTTP_03_MORE.get(spec.name, ())}))


def by_name_03(name: str) -> A2AErrorSpec | None:
    """An error by its 1.0 or its 0.3 name (AuthenticatedExtendedCardNotConfiguredError)."""
    return BY_NAME.get(name) or next((e for e in ERRORS if e.name_03 == name), None)


def from_message_03(message: Any, *, unimplemented: bool = False) -> A2AErrorSpec | None:
    """The error a 0.3 message names: an `XxxError:` prefix (a2a-sdk 0.3's gRPC details), or §8's typical text
    (@a2a-js/sdk 0.3's gRPC details: the error's message alone). With `unimplemented` (a gRPC UNIMPLEMENTED),
    MethodNotFoundError's text names nothing: "Method not found!" is gRPC's own answer for a missing service or
    method, no A2A answer."""
    if not isinstance(message, str):
        return None
    head = message.split(":", 1)[0].strip()
    if head.endswith("Error") and (spec := by_name_03(head)) is not None:
        return spec
    low = message.strip().lower()
    return next((BY_NAME[n] for n, texts in _TYPICAL_03.items()
                 if not (unimplemented and n == METHOD_NOT_FOUND) and any(low.startswith(t) for t in texts)), None)


def _from_status_03(status: int, message: Any) -> A2AErrorSpec | None:
    """A bare 0.3 `{message}` body at a status only one error corresponds to (422, 409, 415, 502), or a 404 whose
    message speaks of a task (a2a-sdk 0.3: "Task <id> was specified but does not exist")."""
    if not isinstance(message, str):
        return None
    if status == 404:
        return BY_NAME[TASK_NOT_FOUND] if "task" in message.lower() else None
    only = [e for e in ERRORS if status in http_statuses_03(e)]
    return only[0] if len(only) == 1 else None


def from_http_03(status: int, doc: dict[str, Any]) -> tuple[A2AErrorSpec | None, tuple[str, ...], str | None]:
    """(error, mappings, ErrorInfo reason) a 0.3 REST error body names: a google.rpc.Status with an ErrorInfo,
    a JSON-RPC error object (`{code, message}`, as @a2a-js/sdk's 0.3 layer sends), the error's class name
    (`{"error": "io.a2a.spec.XxxError", message}`, a2a-java 0.3's RestHandler), or a bare `{message}` (a2a-sdk
    0.3) read by §8's typical messages. `mappings` is ("0.3",) when the status corresponds to the error."""
    err = doc.get("error")
    reason: str | None = None
    spec: A2AErrorSpec | None = None
    if isinstance(err, dict):
        reason = a2a_reason(err.get("details"))
        spec = BY_REASON.get(reason or "") or from_message_03(err.get("message"))
    elif isinstance(doc.get("code"), int) and not isinstance(doc.get("code"), bool):
        spec = BY_CODE.get(doc["code"])
    elif isinstance(err, str):  # a2a-java 0.3: {"error": "io.a2a.spec.TaskNotFoundError", "message": …}
        spec = by_name_03(err.rsplit(".", 1)[-1].strip())
    if spec is None and not isinstance(err, dict):
        spec = from_message_03(doc.get("message")) or _from_status_03(status, doc.get("message"))
    if spec is None:
        return None, (), reason
    return spec, (MAPPING_03,) if status in http_statuses_03(spec) else (), reason


def code_of(name: str) -> int:
    return BY_NAME[name].jsonrpc


# the key of a details entry the probe adds where the agent's error details could not be read (a gRPC
# grpc-status-details-bin that is no google.rpc.Status, or one that contradicts the call's status)
DETAILS_PROBLEM = "a2aProbeProblem"


def details_problem(details: Any) -> str | None:
    """What made the error's details unreadable, as the binding said it; None when they were read."""
    if not isinstance(details, list):
        return None
    return next((str(d[DETAILS_PROBLEM]) for d in details if isinstance(d, dict) and DETAILS_PROBLEM in d), None)


def is_a2a_specific(name: str | None) -> bool:
    """An error of §5.4's table (-32001 to -32099), not one of JSON-RPC's own."""
    spec = BY_NAME.get(name or "")
    return spec is not None and -32099 <= spec.jsonrpc <= -32001


def jsonrpc_own(code: int | str | None) -> bool:
    """A JSON-RPC 2.0 error of its own, not A2A's (-32700, -32600 to -32603, and -32000, the one server-error
    code A2A's -32001 to -32099 leave)."""
    return isinstance(code, int) and (code == -32700 or -32603 <= code <= -32600 or code == -32000)


# the JSON-RPC errors that say the request could not be read (Parse error, Invalid Request): JSON-RPC 2.0 §5 lets
# their answer's id be null ("If there was an error in detecting the id in the Request object (e.g. Parse
# error/Invalid Request), it MUST be Null")
NO_REQUEST_ID = frozenset({-32700, -32600})


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else "null")


def untyped_details(details: Any) -> str | None:
    """Why a 1.0 error's details (JSON-RPC error.data, HTTP+JSON error.details) are not ProtoJSON Any objects, each
    with an @type (1.0.1 §3.3.2, §9.5, §11.6); None when they are, or when there are none."""
    if details is None:
        return None
    if not isinstance(details, list):
        return f"the details are {_json_kind(details)}, not an array of objects with @type"
    for i, d in enumerate(details):
        if not isinstance(d, dict):
            return f"details[{i}] is {_json_kind(d)}, not an object with @type"
        kind = d.get("@type")
        if not isinstance(kind, str) or not kind.strip():
            keys = ", ".join(str(k)[:40] for k in list(d)[:5]) or "none"
            return f"details[{i}] has no @type (its keys: {keys})"
    return None


def error_infos(details: Any) -> list[dict[str, Any]]:
    """The ErrorInfo objects of a ProtoJSON `details`/`data` array (anything else is ignored)."""
    if not isinstance(details, list):
        return []
    return [d for d in details if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE]


def a2a_reason(details: Any, *, any_domain: bool = True) -> str | None:
    """The first ErrorInfo reason in the a2a-protocol.org domain (or, with `any_domain`, any domain failing that:
    a2a-sdk's HTTP clients read the reason alone, its gRPC client only an ErrorInfo of that domain)."""
    infos = error_infos(details)
    ours = [i for i in infos if i.get("domain") == DOMAIN and isinstance(i.get("reason"), str)]
    pick = ours or ([i for i in infos if isinstance(i.get("reason"), str)] if any_domain else [])
    return str(pick[0]["reason"]) if pick else None


def from_jsonrpc(code: int) -> A2AErrorSpec | None:
    return BY_CODE.get(code)


def from_http(status: int, reason: str | None) -> tuple[A2AErrorSpec | None, tuple[str, ...]]:
    """The error an HTTP+JSON answer names, and the mappings (1.0.0, 1.0.1) whose status agrees; () if none."""
    spec = BY_REASON.get(reason) if reason else None
    if spec is None:
        return None, ()
    return spec, spec.http_statuses().get(status, ())


def from_grpc(status: str, reason: str | None) -> tuple[A2AErrorSpec | None, tuple[str, ...]]:
    """The error a gRPC status names (by its ErrorInfo, or the status alone where only one error uses it)."""
    spec = BY_REASON.get(reason) if reason else None
    if spec is None:
        if status == "NOT_FOUND":
            spec = BY_NAME[TASK_NOT_FOUND]
        else:
            return None, ()
    return spec, spec.grpc_statuses().get(status, ())


# which mapping an agent follows (the report's errorMapping), from the statuses its HTTP+JSON / gRPC errors came with
FOLLOWS_100, FOLLOWS_101 = "1.0.0", "1.0.1"
BOTH_COMPATIBLE = "both-compatible"  # every status seen is the same in both mappings (e.g. TaskNotFound 404)
MIXED = "mixed"  # some statuses follow 1.0.0, others 1.0.1
NEITHER = "neither"  # A2A errors came with statuses neither mapping gives them
NOT_OBSERVED = "not observed"  # no A2A error with an HTTP or gRPC status was seen (JSON-RPC codes are the same in both)
NOT_APPLICABLE = "not applicable"  # not a 1.0 interface: the mappings are 1.0's
MAPPING_VERDICTS = (FOLLOWS_100, FOLLOWS_101, BOTH_COMPATIBLE, MIXED, NEITHER, NOT_OBSERVED, NOT_APPLICABLE)


def mapping_followed(version: str | None, seen: list[tuple[str, str, str, tuple[str, ...]]]) -> tuple[str, list[str]]:
    """Which of the 1.0.0 and 1.0.1 mappings the agent follows, from (error, binding, status, mappings) seen;
    with the evidence, one line per status (the ones that decide first)."""
    if not (version or "").startswith("1."):
        return NOT_APPLICABLE, []
    if not seen:
        return NOT_OBSERVED, []
    only = {m[0] for *_, m in seen if len(m) == 1}
    lines = [f"{error} {'HTTP' if binding == 'http_json' else 'gRPC'} {status}: "
             + (f"{m[0]} only" if len(m) == 1 else "both mappings" if m else "neither mapping")
             for error, binding, status, m in sorted(seen, key=lambda x: (len(x[3]) != 1, bool(x[3])))]
    if only == {FOLLOWS_100, FOLLOWS_101}:
        return MIXED, lines
    if only:
        return only.pop(), lines
    if all(m for *_, m in seen):
        return BOTH_COMPATIBLE, lines
    return NEITHER, lines  # a status in neither mapping: not "compatible with both" (errors.error_status fails it)
