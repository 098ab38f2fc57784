"""Error-handling checks: A2A errors (by name, on any binding) for bad or impossible requests.

parse_error, invalid_request and unknown_method are JSON-RPC-only (catalogue `bindings=JSONRPC`): they
send raw JSON-RPC through the client's one hatch.
"""

from __future__ import annotations

import json
import uuid

from probe.results import Status
from probe.suite.context import Skip, Suite, describe_answer, expect_error
from probe.wire import a2a_errors as E
from probe.wire import jsonrpc
from probe.wire.bindings import ProblemKind


def _missing() -> str:
    return f"a2a-probe-missing-{uuid.uuid4()}"


async def parse_error(s: Suite) -> None:
    answer = await s.client.jsonrpc_raw(b'{"jsonrpc": "2.0", "method": ', None, "(invalid JSON)")  # id due: null
    expect_error(s, "errors.parse_error", answer, {"JSONParseError"}, "an unparsable body")


async def invalid_request(s: Suite) -> None:
    rid = jsonrpc.new_id()
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "params": {}}).encode()  # no method
    answer = await s.client.jsonrpc_raw(body, rid, "(no method)")
    expect_error(s, "errors.invalid_request", answer, {"InvalidRequestError"}, "a request without a method")


async def unknown_method(s: Suite) -> None:
    rid = jsonrpc.new_id()
    answer = await s.client.jsonrpc_raw(jsonrpc.request("a2a-probe/NoSuchMethod", {}, rid), rid,
                                        "a2a-probe/NoSuchMethod")
    expect_error(s, "errors.unknown_method", answer, {E.METHOD_NOT_FOUND}, "method a2a-probe/NoSuchMethod")


async def invalid_params(s: Suite) -> None:
    message = s.message("a2a-probe invalid params")
    message.pop("messageId", None)
    message[s.dialect.message_parts] = []  # `content` in the 0.3 proto
    answer, _ = await s.client.send(message)
    expect_error(s, "errors.invalid_params", answer, {E.INVALID_PARAMS}, "a message without messageId and parts")


async def task_not_found(s: Suite) -> None:
    answer, _ = await s.client.get(_missing())
    expect_error(s, "errors.task_not_found", answer, {E.TASK_NOT_FOUND}, "GetTask with an unknown id")
    err = answer.error
    if not s.v1:
        s.record("errors.error_info", Status.SKIP, "ErrorInfo in error.data is a 1.0 rule")
    elif err is None or not err.is_(E.TASK_NOT_FOUND):
        s.record("errors.error_info", Status.SKIP, "no TaskNotFoundError to inspect")
    else:
        infos = E.error_infos(err.details)
        ok = any(i.get("reason") == "TASK_NOT_FOUND" and i.get("domain") == E.DOMAIN for i in infos)
        got = E.details_problem(err.details) or ("error details are not an array" if not isinstance(err.details, list)
                                                 else f"ErrorInfo entries: {infos}")
        s.record("errors.error_info", Status.PASS if ok else Status.FAIL,
                 "ErrorInfo TASK_NOT_FOUND / a2a-protocol.org" if ok else got[:200])


async def cancel_unknown(s: Suite) -> None:
    answer, _ = await s.client.cancel(_missing())
    expect_error(s, "errors.cancel_unknown", answer, {E.TASK_NOT_FOUND}, "CancelTask with an unknown id")


async def not_cancelable(s: Suite) -> None:
    task = await s.completed()
    assert task.task_id is not None
    answer, _ = await s.client.cancel(task.task_id)
    expect_error(s, "errors.not_cancelable", answer, {E.TASK_NOT_CANCELABLE}, "CancelTask on a COMPLETED task")


async def version_not_supported(s: Suite) -> None:
    if not s.v1:
        raise Skip("0.3 has no A2A-Version header")
    answer, _ = await s.client.get(_missing(), headers={"A2A-Version": "99.0"})
    expect_error(s, "errors.version_not_supported", answer, {E.VERSION_NOT_SUPPORTED}, "A2A-Version: 99.0")


async def patch_version_ignored(s: Suite) -> None:
    """1.0 §3.6: patch version numbers MUST not be considered in negotiation: A2A-Version 1.0.1 is 1.0. Only a
    refusal of the version fails here; what the agent answers a missing task is errors.task_not_found's."""
    if not s.v1 or s.dialect.header_version is None:
        raise Skip("0.3 has no A2A-Version header")
    sent = f"{s.dialect.header_version}.1"
    answer, _ = await s.client.get(_missing(), headers={"A2A-Version": sent})
    err, problem = answer.error, answer.problem
    refused = (err is not None and err.is_(E.VERSION_NOT_SUPPORTED)) or (
        problem is not None and problem.kind is ProblemKind.VERSION)
    s.record("errors.patch_version_ignored", Status.FAIL if refused else Status.PASS,
             f"GetTask with A2A-Version: {sent} " + (f"was refused: {describe_answer(answer)}" if refused else
                                                    f"was read as {s.dialect.header_version}: "
                                                    f"{describe_answer(answer)}"))


async def push_not_supported(s: Suite) -> None:
    caps = s.card.doc.get("capabilities")
    if isinstance(caps, dict) and caps.get("pushNotifications") is True:
        raise Skip("the card declares pushNotifications")
    hook = "http://127.0.0.1:9/a2a-probe-webhook"  # never contacted: the agent must refuse before using it
    answer = await s.client.push_set(_missing(), hook)
    expect_error(s, "errors.push_not_supported", answer, {E.PUSH_NOT_SUPPORTED},
                 "a push-notification config without the capability")


async def extended_card_not_declared(s: Suite) -> None:
    caps = s.card.doc.get("capabilities")
    declared = (isinstance(caps, dict) and caps.get("extendedAgentCard") is True) or \
        s.card.doc.get("supportsAuthenticatedExtendedCard") is True
    if declared:
        raise Skip("the card declares an extended card")
    answer = await s.client.extended_card()
    if not s.v1:
        # 0.3 §7.10: the method exists only with supportsAuthenticatedExtendedCard, and no error code is mandated
        refused = answer.error is not None and (answer.status or 0) < 500
        s.record("errors.extended_card_not_declared", Status.PASS if refused else Status.FAIL,
                 f"the 0.3 extended-card method without the capability: {describe_answer(answer)}"
                 + (" (0.3 mandates no particular code)" if refused else ", not an error"))
        return
    expect_error(s, "errors.extended_card_not_declared", answer, {E.UNSUPPORTED_OPERATION},
                 "GetExtendedAgentCard without the capability")


def details_typed(s: Suite) -> None:
    """errors.details_typed, over every error of the suite's calls (recorded once all checks ran)."""
    if not s.v1:
        s.record("errors.details_typed", Status.SKIP, "typed error details (@type) are a 1.0 rule")
    elif s.binding_name == "grpc":
        s.record("errors.details_typed", Status.SKIP, "gRPC error details are binary google.protobuf.Any: typed")
    elif s.untyped_details:
        s.record("errors.details_typed", Status.FAIL, "; ".join(s.untyped_details)[:400])
    else:
        free = (f"; not graded: {len(s.free_data)} JSON-RPC error(s) of its own with a non-array error.data "
                f"({', '.join(s.free_data[:2])}), as 1.0.0 §9.5's example answers -32601") if s.free_data else ""
        typed = s.detailed_errors - len(s.free_data)
        s.record("errors.details_typed", Status.PASS if typed else Status.SKIP,
                 (f"{typed} error(s) with details, each object with an @type" if typed
                  else "no error of the suite carried details to grade") + free)


def response_id(s: Suite) -> None:
    """errors.response_id, over every JSON-RPC error answer the suite judged (Suite.note_id): the `id` member is
    REQUIRED, null for the probe's unparsable body, the request's id otherwise (null also accepted with -32700 and
    -32600). A finding of its own, once for all of them: the official clients read such errors, so the check that
    provoked the error is judged by the error alone."""
    if s.binding_name != "jsonrpc":
        s.record("errors.response_id", Status.SKIP, f"a jsonrpc-only check; this interface is {s.binding_name}")
    elif s.id_faults:
        faulty = sum(map(len, s.id_faults.values()))
        said = "; ".join(f"{fault}: {', '.join(where[:2])}" + (f" and {len(where) - 2} more" if len(where) > 2 else "")
                         for fault, where in s.id_faults.items())
        s.record("errors.response_id", Status.FAIL, f"{said[:360]} ({faulty} of {s.rpc_errors} JSON-RPC error answers)")
    elif s.rpc_errors:
        s.record("errors.response_id", Status.PASS,
                 f"{s.rpc_errors} JSON-RPC error answer(s), each with the id due (null for the unparsable body)")
    else:
        s.record("errors.response_id", Status.SKIP, "no JSON-RPC error answer of the suite to judge")


def error_status(s: Suite) -> None:
    """errors.error_status, over every A2A-specific error the run answered on HTTP+JSON or gRPC (the statuses
    probe.engine.note_error_status kept, with the mappings each matches)."""
    if s.binding_name == "jsonrpc":
        s.record("errors.error_status", Status.SKIP, "JSON-RPC errors are named by their code; HTTP 200 carries them")
        return
    if not s.v1 and s.binding_name == "grpc":
        s.record("errors.error_status", Status.SKIP, "0.3 gives gRPC no error status table (§3.2.2 names proto "
                 "annotations its proto does not have)")
        return
    seen = [e for e in s.result.error_statuses if E.is_a2a_specific(e.error) and e.binding == s.binding_name
            and e.status not in ("401", "403")]
    where = "HTTP" if s.binding_name == "http_json" else "gRPC"
    wrong = [f"{e.error} came with {where} {e.status}; {_expected(e.error, s.v1, where)}" for e in seen
             if not e.mappings]
    if wrong:
        s.record("errors.error_status", Status.FAIL, "; ".join(wrong[:3]))
    elif seen:
        s.record("errors.error_status", Status.PASS, ", ".join(f"{e.error} {where} {e.status}" for e in seen[:4]))
    else:
        s.record("errors.error_status", Status.SKIP, f"no A2A error answered over {where} to judge")


def _expected(name: str, v1: bool, where: str) -> str:
    spec = E.BY_NAME[name]
    if not v1:
        statuses = " or ".join(map(str, E.http_statuses_03(spec)))
        return f"0.3 (§3.2.3) wants a status that corresponds to it: HTTP {statuses}"
    table = spec.http_statuses() if where == "HTTP" else spec.grpc_statuses()
    return "the spec maps it to " + " or ".join(f"{where} {st} ({'/'.join(m)})" for st, m in table.items())


FINAL = (details_typed, error_status, response_id)  # judged over the whole suite's answers, after every other check
FINAL_IDS = ("errors.details_typed", "errors.error_status", "errors.response_id")

CHECKS = (parse_error, invalid_request, unknown_method, invalid_params, task_not_found, cancel_unknown, not_cancelable,
          version_not_supported, patch_version_ignored, push_not_supported, extended_card_not_declared)
IDS = {parse_error: ("errors.parse_error",), invalid_request: ("errors.invalid_request",),
       unknown_method: ("errors.unknown_method",), invalid_params: ("errors.invalid_params",),
       task_not_found: ("errors.task_not_found", "errors.error_info"), cancel_unknown: ("errors.cancel_unknown",),
       not_cancelable: ("errors.not_cancelable",),
       version_not_supported: ("errors.version_not_supported",),
       patch_version_ignored: ("errors.patch_version_ignored",), push_not_supported: ("errors.push_not_supported",),
       extended_card_not_declared: ("errors.extended_card_not_declared",)}
