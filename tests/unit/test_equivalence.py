"""interop.bindings_agree as a pure function of the per-interface entries, and the artifact shapes it compares."""

from __future__ import annotations

import pytest

from probe.engine import OP_ANONYMOUS, OP_CANCEL_TERMINAL, OP_GET_UNKNOWN, _equivalence, _same_auth
from probe.reasons import Reason
from probe.results import InterfaceResult, ProbeResult, Status
from probe.wire.dialects import V03, V03_PROTO, V1, part_kinds

AGREED = {OP_GET_UNKNOWN: "TaskNotFoundError", OP_CANCEL_TERMINAL: "TaskNotCancelableError"}


def _entry(binding: str, version: str = "1.0", **kw: object) -> InterfaceResult:
    fields: dict[str, object] = {"success": True, "final_state": "COMPLETED", "outcomes": dict(AGREED),
                                 "artifacts": [["text"]], "artifact_texts": ["echo: hi"]} | kw
    return InterfaceResult(binding=binding, protocol_binding=binding.upper(), protocol_version=version,
                           **fields)  # type: ignore[arg-type]


def _judge(*entries: InterfaceResult, noisy: frozenset[str] = frozenset()) -> tuple[Status, str]:
    r = ProbeResult(agent="a", target_url="http://a", interfaces=list(entries))
    _equivalence(r, noisy)
    c = r.check("interop.bindings_agree")
    assert c is not None
    return c.status, c.message


def test_one_interface_is_not_compared() -> None:
    assert _judge(_entry("jsonrpc"))[0] is Status.SKIP


def test_agreeing_interfaces_pass_whatever_wire_code_each_used() -> None:
    status, message = _judge(_entry("jsonrpc"), _entry("grpc"), _entry("jsonrpc", "0.3"))
    assert status is Status.PASS and message.startswith("3 interfaces agree on verdicts")


@pytest.mark.parametrize(("other", "expected"), [
    ({"success": False, "reason": Reason.INVOKE_ROUTE_NOT_FOUND},
     "jsonrpc 1.0 pass(es) but grpc 1.0 (invoke_route_not_found) fail(s)"),
    ({"final_state": "FAILED"}, "SendMessage ended differently: jsonrpc 1.0 COMPLETED, grpc 1.0 FAILED"),
    ({"outcomes": AGREED | {OP_GET_UNKNOWN: "InternalError"}},
     "GetTask of an unknown task id: jsonrpc 1.0 gave TaskNotFoundError, grpc 1.0 gave InternalError"),
    ({"artifacts": []}, "SendMessage's artifacts differ: jsonrpc 1.0 1 artifact(s) [text], grpc 1.0 0 artifact(s) []"),
    ({"artifact_texts": ["echo: HI"]}, "SendMessage's artifact text differs: jsonrpc 1.0 'echo: hi', grpc 1.0 "
                                       "'echo: HI'"),
])
def test_each_disagreement_names_the_operation_and_what_each_gave(other: dict[str, object], expected: str) -> None:
    status, message = _judge(_entry("jsonrpc"), _entry("grpc", **other))
    assert status is Status.FAIL and expected in message, message


def test_an_operation_one_interface_did_not_run_is_not_a_disagreement() -> None:
    assert _judge(_entry("jsonrpc"), _entry("grpc", outcomes={OP_GET_UNKNOWN: "TaskNotFoundError"}))[0] is Status.PASS


def test_aspects_that_vary_on_one_binding_alone_are_not_compared() -> None:
    texts = _entry("grpc", artifact_texts=["echo: something else"])
    status, message = _judge(_entry("jsonrpc"), texts, noisy=frozenset({"text"}))
    assert status is Status.PASS and "text of the artifacts not compared" in message
    parts = _entry("grpc", artifacts=[["data"]], artifact_texts=["other"])
    status, message = _judge(_entry("jsonrpc"), parts, noisy=frozenset({"text"}))
    assert status is Status.FAIL and "[text], grpc 1.0 1 artifact(s) [data]" in message


def test_part_kinds_are_named_alike_in_both_versions() -> None:
    assert part_kinds(V1, [{"text": "a"}, {"raw": "AA=="}, {"url": "http://x"}, {"data": {}}, {}]) == (
        "text", "file", "file", "data", "?")
    assert part_kinds(V03, [{"kind": "text", "text": "a"}, {"kind": "file", "file": {}}, {"kind": "data"}, "x"]) == (
        "text", "file", "data", "?")
    proto_03 = [{"text": "a"}, {"file": {"fileWithUri": "http://x"}}, {"data": {}}, {"raw": "AA"}]
    assert part_kinds(V03_PROTO, proto_03) == ("text", "file", "data", "?")  # the 0.3 proto has no raw/url parts
    v1 = V1.result_item({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                                  "artifacts": [{"artifactId": "a", "parts": [{"text": "hi"}, {"data": {}}]}]}})
    v03 = V03.result_item({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"},
                           "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "hi"},
                                                                       {"kind": "data", "data": {}}]}]})
    assert v1.artifact_parts == v03.artifact_parts == [("text", "data")]
    assert v1.artifact_texts == v03.artifact_texts == ["hi"]


# ---- interop.bindings_same_auth, from the same entries

SECURED = {"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
           "securityRequirements": [{"schemes": {"b": {"list": []}}}]}


def _auth(*entries: InterfaceResult, doc: dict[str, object] | None = None) -> tuple[Status, str]:
    r = ProbeResult(agent="a", target_url="http://a", interfaces=list(entries))
    _same_auth(r, SECURED if doc is None else doc)
    c = r.check("interop.bindings_same_auth")
    assert c is not None
    return c.status, c.message


def _anon(binding: str, outcome: str, **kw: object) -> InterfaceResult:
    return _entry(binding, outcomes={**AGREED, OP_ANONYMOUS: outcome}, **kw)


def test_same_auth_skips_one_interface_and_a_card_without_security() -> None:
    assert _auth(_anon("jsonrpc", "refused: HTTP 401")) == (Status.SKIP, "the card advertises one interface")
    assert _auth(_anon("jsonrpc", "processed: x"), _anon("grpc", "refused: y"), doc={"securitySchemes": {}}) == (
        Status.SKIP, "the card declares no security requirements")
    assert _auth(_anon("jsonrpc", "refused: x"), _anon("grpc", "refused: y"), doc={"security": [{"b": []}]})[0] \
        is Status.PASS  # 0.3's field


def test_same_auth_fails_an_interface_that_processes_what_another_refuses() -> None:
    status, message = _auth(_anon("jsonrpc", "refused: HTTP 401"), _anon("grpc", "processed: OK, TaskNotFoundError"),
                            _anon("http_json", "other: HTTP 500"))
    assert status is Status.FAIL
    assert message == ("a call without credentials is refused on jsonrpc 1.0 but processed on grpc 1.0 "
                       "(OK, TaskNotFoundError)")


def test_same_auth_does_not_compare_answers_that_say_nothing_of_authentication() -> None:
    status, message = _auth(_anon("jsonrpc", "refused: HTTP 401"), _anon("grpc", "other: no answer (ConnectFailed)"))
    assert status is Status.PASS
    assert message == ("the interfaces enforce the card's security alike (a call without credentials: jsonrpc 1.0 "
                       "refused, grpc 1.0 other)")


def test_same_auth_fails_credentials_accepted_on_one_interface_and_refused_on_another() -> None:
    status, message = _auth(_entry("jsonrpc"), _entry("grpc", success=False, reason=Reason.INVOKE_AUTH,
                                                      final_state=None))
    assert status is Status.FAIL
    assert message == "the configured credentials are accepted on jsonrpc 1.0 but refused on grpc 1.0"


def test_same_auth_without_its_calls_is_not_judged() -> None:  # the daemon makes no call without credentials
    assert _auth(_entry("jsonrpc"), _entry("grpc")) == (Status.SKIP, "no call without credentials was made")
