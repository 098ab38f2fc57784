"""Error-handling checks: JSON-RPC and A2A error codes for bad or impossible requests."""

from __future__ import annotations

import json
import uuid

from probe.results import Status
from probe.suite.context import Skip, Suite, error_of, expect_error
from probe.wire import jsonrpc
from probe.wire.bindings import Op

_DOMAIN = "a2a-protocol.org"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def _missing() -> str:
    return f"a2a-probe-missing-{uuid.uuid4()}"


async def parse_error(s: Suite) -> None:
    call = await s.raw(b'{"jsonrpc": "2.0", "method": ', "", "(invalid JSON)")
    expect_error(s, "errors.parse_error", call, {-32700}, "an unparsable body")


async def invalid_request(s: Suite) -> None:
    rid = jsonrpc.new_id()
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "params": {}}).encode()  # no method
    call = await s.raw(body, rid, "(no method)")
    expect_error(s, "errors.invalid_request", call, {-32600}, "a request without a method")


async def unknown_method(s: Suite) -> None:
    call = await s.rpc("a2a-probe/NoSuchMethod", {})
    expect_error(s, "errors.unknown_method", call, {-32601}, "method a2a-probe/NoSuchMethod")


async def invalid_params(s: Suite) -> None:
    message = s.message("a2a-probe invalid params")
    message.pop("messageId", None)
    message["parts"] = []
    call = await s.op(Op.SEND, {"message": message})
    expect_error(s, "errors.invalid_params", call, {-32602}, "a message without messageId and parts")


async def task_not_found(s: Suite) -> None:
    call = await s.op(Op.GET, {"id": _missing()})
    expect_error(s, "errors.task_not_found", call, {-32001}, "GetTask with an unknown id")
    err = error_of(call)
    if not s.v1:
        s.record("errors.error_info", Status.SKIP, "ErrorInfo in error.data is a 1.0 rule")
    elif err is None or err.code != -32001:
        s.record("errors.error_info", Status.SKIP, "no TaskNotFoundError to inspect")
    else:
        infos = [d for d in err.data if isinstance(d, dict) and d.get("@type") == _ERROR_INFO] \
            if isinstance(err.data, list) else []
        ok = any(i.get("reason") == "TASK_NOT_FOUND" and i.get("domain") == _DOMAIN for i in infos)
        got = "error.data is not an array" if not isinstance(err.data, list) else f"ErrorInfo entries: {infos}"
        s.record("errors.error_info", Status.PASS if ok else Status.FAIL,
                 "ErrorInfo TASK_NOT_FOUND / a2a-protocol.org" if ok else got[:200])


async def not_cancelable(s: Suite) -> None:
    task = await s.completed()
    call = await s.op(Op.CANCEL, {"id": task.task_id})
    expect_error(s, "errors.not_cancelable", call, {-32002}, "CancelTask on a COMPLETED task")


async def version_not_supported(s: Suite) -> None:
    if not s.v1:
        raise Skip("0.3 has no A2A-Version header")
    call = await s.rpc(s.binding.method(Op.GET), {"id": _missing()}, headers={"A2A-Version": "99.0"})
    expect_error(s, "errors.version_not_supported", call, {-32009}, "A2A-Version: 99.0")


async def push_not_supported(s: Suite) -> None:
    caps = s.card.doc.get("capabilities")
    if isinstance(caps, dict) and caps.get("pushNotifications") is True:
        raise Skip("the card declares pushNotifications")
    hook = "http://127.0.0.1:9/a2a-probe-webhook"  # never contacted: the agent must refuse before using it
    params = ({"taskId": _missing(), "url": hook} if s.v1
              else {"taskId": _missing(), "pushNotificationConfig": {"url": hook}})
    call = await s.op(Op.PUSH_SET, params)
    expect_error(s, "errors.push_not_supported", call, {-32003}, "a push-notification config without the capability")


async def extended_card_not_declared(s: Suite) -> None:
    caps = s.card.doc.get("capabilities")
    declared = (isinstance(caps, dict) and caps.get("extendedAgentCard") is True) or \
        s.card.doc.get("supportsAuthenticatedExtendedCard") is True
    if declared:
        raise Skip("the card declares an extended card")
    call = await s.op(Op.EXTENDED_CARD, {})
    codes = {-32004} if s.v1 else {-32004, -32007}
    expect_error(s, "errors.extended_card_not_declared", call, codes, "GetExtendedAgentCard without the capability")


CHECKS = (parse_error, invalid_request, unknown_method, invalid_params, task_not_found, not_cancelable,
          version_not_supported, push_not_supported, extended_card_not_declared)
IDS = {parse_error: ("errors.parse_error",), invalid_request: ("errors.invalid_request",),
       unknown_method: ("errors.unknown_method",), invalid_params: ("errors.invalid_params",),
       task_not_found: ("errors.task_not_found", "errors.error_info"), not_cancelable: ("errors.not_cancelable",),
       version_not_supported: ("errors.version_not_supported",), push_not_supported: ("errors.push_not_supported",),
       extended_card_not_declared: ("errors.extended_card_not_declared",)}
