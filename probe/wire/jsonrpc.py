"""JSON-RPC 2.0 envelopes: build requests, and read responses without repairing them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from probe.logs import new_probe_id
from probe.wire import strictjson

# A2A and JSON-RPC error codes by name (digest §8); 1.0 names, 0.3 differs only at -32007.
ERROR_NAMES: dict[int, str] = {
    -32700: "JSONParseError", -32600: "InvalidRequestError", -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError", -32603: "InternalError", -32001: "TaskNotFoundError",
    -32002: "TaskNotCancelableError", -32003: "PushNotificationNotSupportedError",
    -32004: "UnsupportedOperationError", -32005: "ContentTypeNotSupportedError",
    -32006: "InvalidAgentResponseError", -32007: "ExtendedAgentCardNotConfiguredError",
    -32008: "ExtensionSupportRequiredError", -32009: "VersionNotSupportedError",
}
METHOD_NOT_FOUND = -32601
VERSION_NOT_SUPPORTED = -32009
TASK_NOT_FOUND = -32001


def new_id() -> str:
    """A request id: `str(uuid.uuid4())`, its random bytes read from a pooled os.urandom (probe.logs)."""
    return new_probe_id()


def request(method: str, params: dict[str, Any], request_id: str) -> bytes:
    return strictjson.compact({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()


@dataclass(slots=True)
class RpcError:
    code: int
    message: str
    data: Any = None

    def describe(self) -> str:
        name = ERROR_NAMES.get(self.code, "error")
        return f"JSON-RPC {name} {self.code}: {self.message[:200]}"


@dataclass(frozen=True, slots=True)
class IdFault:
    """How a response's `id` member is not the one due. JSON-RPC 2.0 §5: "id: This member is REQUIRED. It MUST be
    the same as the value of the id member in the Request Object. If there was an error in detecting the id in the
    Request object (e.g. Parse error/Invalid Request), it MUST be Null." Made only off the hot path: an answer
    that echoes the id never builds one."""

    present: bool  # False: the response has no `id` member at all (read by `doc.get` it would look like null)
    value: Any = None  # the member's value when present (None: null)
    null_due: bool = False  # the request had no id to read (the probe's unparsable body): null is the one due

    def describe(self) -> str:
        if not self.present:
            return "no \"id\" member (REQUIRED: " + ("null for a body whose id could not be read)" if self.null_due
                                                     else "the request's id)")
        shown = str(self.value)[:60]
        if self.null_due:
            return f"\"id\" {shown!r} where null is due (the request's id could not be read)"
        if self.value is None:
            return "\"id\" null, not the request's id"
        return f"\"id\" {shown!r} is not the request's id"


@dataclass(slots=True)
class Envelope:
    """A parsed JSON-RPC response: exactly one of result/error when `problems` is empty."""

    result: Any = None
    error: RpcError | None = None
    has_result: bool = False
    problems: list[str] = field(default_factory=list)
    # the `id` member where it is not the request's (absent, null or another value). A result's is also one of
    # `problems` (a framing fault: the clients that compare ids refuse such a result); an error's is not, since every
    # official client reads the error whatever its id (a2a-sdk's models default it to None and never compare it):
    # the errors suite judges it (errors.response_id)
    id_fault: IdFault | None = None


class NotJsonRpc(ValueError):
    pass


_JSON_TYPES: dict[type, str] = {str: "string", list: "array", int: "number", float: "number", bool: "boolean",
                                type(None): "null"}


def is_json_content_type(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def parse_envelope(payload: bytes | str | Any, request_id: str | None) -> Envelope:
    """Parse a response; raise NotJsonRpc when it isn't JSON-RPC at all, else list envelope problems. `request_id`
    None: the request had no id to read (an unparsable body), so null is the id due."""
    if isinstance(payload, bytes | str):
        try:
            doc = strictjson.loads(payload)
        except strictjson.StrictJSONError as exc:
            raise NotJsonRpc(str(exc)) from None
    else:
        doc = payload
    if not isinstance(doc, dict):
        raise NotJsonRpc(f"body is a JSON {type(doc).__name__}, not a JSON-RPC response object")
    if "result" not in doc and "error" not in doc:
        raise NotJsonRpc(f"JSON object without result or error (keys: {sorted(doc)[:6]})")
    if "result" not in doc and "jsonrpc" not in doc and "id" not in doc and not isinstance(doc["error"], dict):
        # a web framework's own error page, e.g. Mastra's route validation: HTTP 400 {"error": "Invalid request
        # body", "issues": [...]}. Nothing of JSON-RPC 2.0 §5 in it (no jsonrpc, no id, error not an object):
        # no JSON-RPC error to name (code 0 is none), as a2a-sdk's clients read it (an HTTP error, or a response
        # that validates as no JSON-RPC message)
        raise NotJsonRpc(f"a JSON object whose error is a {_JSON_TYPES.get(type(doc['error']), 'value')}, with "
                         f"no jsonrpc and no id (keys: {sorted(doc)[:6]})")
    env = Envelope()
    if doc.get("jsonrpc") != "2.0":
        env.problems.append(f"jsonrpc is {doc.get('jsonrpc')!r}, expected \"2.0\"")
    rid = doc.get("id")
    if rid != request_id or (rid is None and "id" not in doc):  # the second test only when null is due or sent
        env.id_fault = IdFault("id" in doc, rid, request_id is None)
        if "error" not in doc:
            env.problems.append(f"id {str(rid)[:60]!r} does not echo the request id")
    if "result" in doc and "error" in doc:
        env.problems.append("both result and error are present")
    if "error" in doc:
        err = doc["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) or isinstance(err.get("code"), bool):
            env.problems.append("error is not an object with an integer code")
            env.error = RpcError(code=0, message=str(err)[:200])
        else:
            env.error = RpcError(code=err["code"], message=str(err.get("message", "")), data=err.get("data"))
    else:
        env.result = doc["result"]
        env.has_result = True
    return env
