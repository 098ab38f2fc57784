"""JSON-RPC envelopes real third-party servers send (a2a-server 0.6.1), read into a reason a person can act on."""

from __future__ import annotations

import json

from probe.results import Exchange
from probe.wire.bindings import Answer, ProblemKind
from probe.wire.bindings.jsonrpc import read_answer


def _read(body: dict[str, object]) -> Answer:
    raw = json.dumps(body).encode()
    return read_answer("GetTask", "r1", Exchange(method="POST", url="http://a/rpc", status=200), 200,
                       "application/json", raw)


def test_a_null_result_beside_an_error_is_a_framing_fault_that_names_the_error() -> None:
    # a2a-server answers every error with "result": null beside it: 0.2 §6.11.2 says result MUST NOT exist on an
    # error; the official clients read the error, so the reason says which error that was
    a = _read({"jsonrpc": "2.0", "id": "r1", "result": None,
               "error": {"code": -32601, "message": "message/send not found"}})
    assert a.problem is not None and a.problem.kind is ProblemKind.FRAMING
    assert a.problem.detail == ("both result and error are present "
                                "(the error: JSON-RPC MethodNotFoundError -32601: message/send not found)")
    assert a.error is not None and a.error.name == "MethodNotFoundError"
    assert a.describe() == f"HTTP 200, {a.problem.detail}"


def test_a_null_error_is_not_described_as_an_error_with_code_0() -> None:
    # a2a-server answers tasks/resubscribe with {"result": null, "error": null}: no result and no error to read
    a = _read({"jsonrpc": "2.0", "id": "r1", "result": None, "error": None})
    assert a.problem is not None and a.problem.kind is ProblemKind.FRAMING
    assert a.describe() == ("HTTP 200, both result and error are present; "
                            "error is not an object with an integer code")
    assert "error 0" not in a.describe() and "None" not in a.describe()
