"""The report's errorMapping: which of the 1.0.0 and 1.0.1 HTTP/gRPC error mappings (spec §5.4) the agent follows,
from the statuses its A2A errors really came with, in JSON (against the schema), markdown and the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from probe.report import to_dict, to_html, to_markdown, to_text
from probe.results import ProbeResult, Status
from probe.suite import SuiteOptions, run_suite
from probe.target import Target
from probe.wire import a2a_errors as E
from probe.wire.http import HttpClient
from tests.agents.catalogue import run_agent
from tests.agents.rest_mapping import rest_mapping_agent

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "probe" / "schemas" / "report.schema.json").read_text())


async def _rest_suite(client: HttpClient, origin: str, **opts: bool) -> ProbeResult:
    target = Target(name="rest", url=origin, binding="HTTP+JSON", timeout=3.0)
    return await run_suite(target, client, SuiteOptions(timeout=15.0, **opts))


@pytest.mark.parametrize(("mapping", "evidence"), [
    ("1.0.0", "TaskNotCancelableError HTTP 409: 1.0.0 only"),
    ("1.0.1", "TaskNotCancelableError HTTP 400: 1.0.1 only"),
    ("mixed", "ContentTypeNotSupportedError HTTP 400: 1.0.1 only"),
])
async def test_a_rest_agent_following_each_mapping_is_named(client: HttpClient, mapping: str, evidence: str) -> None:
    async with rest_mapping_agent(mapping) as origin:
        result = await _rest_suite(client, origin)
    not_cancelable = result.check("errors.not_cancelable")
    assert not_cancelable is not None and not_cancelable.status is Status.PASS, not_cancelable  # either is right
    graded = result.check("errors.error_status")  # each status is in one of the two mappings: mixed too
    assert graded is not None and (graded.status, graded.severity) == (Status.PASS, "MUST"), graded
    assert "TaskNotCancelableError HTTP" in graded.message
    rep = to_dict(result)
    jsonschema.validate(rep, SCHEMA)
    assert rep["errorMapping"] == mapping, rep["errorMappingEvidence"]
    assert evidence in rep["errorMappingEvidence"]
    assert "TaskNotFoundError HTTP 404: both mappings" in rep["errorMappingEvidence"]
    md = to_markdown(result)
    assert f"- **Error mapping:** `{mapping}`" in md
    assert f"<strong>Error mapping:</strong> <code>{mapping}</code>" in to_html(result)  # the status page's report
    assert "errors " in to_text(result)


@pytest.mark.parametrize(("fault", "mapping", "status"), [("push_unsupported_100", "1.0.0", "UNIMPLEMENTED"),
                                                          ("push_unsupported_101", "1.0.1", "FAILED_PRECONDITION")])
async def test_a_grpc_agent_following_each_mapping_is_named(client: HttpClient, fault: str, mapping: str,
                                                            status: str) -> None:
    from tests.agents.grpc_faults import grpc_fault_agent

    async with grpc_fault_agent(fault) as origin:
        result = await run_suite(Target(name="g", url=origin, binding="GRPC", timeout=3.0), client,
                                 SuiteOptions(timeout=15.0, safe_only=True))
    push = result.check("errors.push_not_supported")
    assert push is not None and push.status is Status.PASS, push  # either mapping is right
    graded = result.check("errors.error_status")
    assert graded is not None and graded.status is Status.PASS, graded
    assert f"gRPC {status} PushNotificationNotSupportedError" in push.message
    rep = to_dict(result)
    jsonschema.validate(rep, SCHEMA)
    assert rep["binding"] == "GRPC" and rep["errorMapping"] == mapping, rep["errorMappingEvidence"]
    assert f"PushNotificationNotSupportedError gRPC {status}: {mapping} only" in rep["errorMappingEvidence"]
    assert "TaskNotFoundError gRPC NOT_FOUND: both mappings" in rep["errorMappingEvidence"]


async def test_only_statuses_both_mappings_share_say_both_compatible(client: HttpClient) -> None:
    async with rest_mapping_agent("1.0.0") as origin:
        result = await _rest_suite(client, origin, safe_only=True)  # GetTask of unknown ids only: 404 in both
    rep = to_dict(result)
    assert rep["errorMapping"] == E.BOTH_COMPATIBLE
    assert rep["errorMappingEvidence"] == ["TaskNotFoundError HTTP 404: both mappings"]


async def test_jsonrpc_codes_do_not_tell_and_0_3_has_no_such_mappings(client: HttpClient) -> None:
    async with run_agent("healthy") as v1, run_agent("healthy_03") as v03:
        r1 = await run_suite(Target(name="j", url=v1.origin or "", timeout=3.0), client, SuiteOptions(timeout=15.0))
        r03 = await run_suite(Target(name="k", url=v03.origin or "", timeout=3.0, a2a_version="0.3"), client,
                              SuiteOptions(timeout=15.0))
    assert (to_dict(r1)["errorMapping"], to_dict(r1)["errorMappingEvidence"]) == (E.NOT_OBSERVED, [])
    assert to_dict(r03)["errorMapping"] == E.NOT_APPLICABLE
    assert "Error mapping" not in to_markdown(r03)


@pytest.mark.parametrize(("seen", "verdict"), [
    ([("UnsupportedOperationError", "grpc", "UNIMPLEMENTED", ("1.0.0",))], E.FOLLOWS_100),
    ([("VersionNotSupportedError", "grpc", "FAILED_PRECONDITION", ("1.0.1",)),
      ("TaskNotFoundError", "grpc", "NOT_FOUND", ("1.0.0", "1.0.1"))], E.FOLLOWS_101),
    ([("TaskNotFoundError", "http_json", "500", ())], E.NEITHER),
    ([("TaskNotFoundError", "http_json", "404", ("1.0.0", "1.0.1")),
      ("TaskNotCancelableError", "http_json", "422", ())], E.NEITHER),
    ([("PushNotificationNotSupportedError", "grpc", "UNIMPLEMENTED", ("1.0.0",)),
      ("ContentTypeNotSupportedError", "http_json", "400", ("1.0.1",))], E.MIXED),
])
def test_the_verdict_from_statuses_seen(seen: list[tuple[str, str, str, tuple[str, ...]]], verdict: str) -> None:
    got, lines = E.mapping_followed("1.0", seen)
    assert got == verdict and len(lines) == len(seen)
    assert lines[0].endswith(("only", "neither mapping")) or len(seen) == 1  # what decides comes first


async def test_error_info_is_a_must_on_grpc_and_a_should_on_json_rpc(client: HttpClient) -> None:
    """1.0.0 and 1.0.1 §10.6: "For A2A-specific errors, implementations MUST include a google.rpc.ErrorInfo message
    in the status.details array"; 1.0.1 §9.5: "Implementations SHOULD use well-known types such as
    google.rpc.ErrorInfo" (1.0.0's MUST there is not asked: a card names no patch). One agent, both bindings, the same
    TaskNotFoundError without an ErrorInfo: each interface's check is graded by its own binding's text."""
    from probe.cli import failed
    from probe.suite import run_suite_interfaces
    from tests.agents.grpc_faults import grpc_fault_agent

    async with grpc_fault_agent("no_error_info") as origin:
        r = await run_suite_interfaces(Target(name="g", url=origin, timeout=5), client,
                                       SuiteOptions(timeout=20, safe_only=True))
    checks = {(c.interface, c.id): c for c in r.checks}
    grpc, rpc = checks[("grpc 1.0", "errors.error_info")], checks[("jsonrpc 1.0", "errors.error_info")]
    assert (grpc.status, grpc.severity) == (Status.FAIL, "MUST"), grpc
    assert (rpc.status, rpc.severity) == (Status.FAIL, "SHOULD"), rpc
    assert checks[("grpc 1.0", "errors.task_not_found")].status is Status.PASS  # NOT_FOUND alone names it
    rep = to_dict(r)
    jsonschema.validate(rep, SCHEMA)
    rows = {(row["interface"], row["test"]): row for row in rep["results"]}
    assert rows[("grpc 1.0", "errors.error_info")]["requirement"]["section"].startswith("§10.6")
    assert rows[("jsonrpc 1.0", "errors.error_info")]["requirement"]["section"].startswith("§9.5")
    by_binding = {i["binding"]: i for i in rep["interfaces"]}
    assert [x["severity"] for x in by_binding["grpc"]["results"] if x["test"] == "errors.error_info"] == ["MUST"]
    # the gRPC one counts for --fail-on must, the JSON-RPC one does not (the agent's other faults aside)
    assert failed(r.model_copy(update={"checks": [grpc]}), "must")
    assert not failed(r.model_copy(update={"checks": [rpc]}), "must")


async def test_a_status_neither_mapping_gives_fails_error_status_and_only_it(client: HttpClient) -> None:
    """1.0.1 §5.4: "All A2A-specific errors defined in Section 3.3.2 MUST be mapped to binding-specific error
    representations" (the table's HTTP statuses; 1.0.0's differ, and either passes). The error is still named by
    its ErrorInfo, so the check of the behaviour passes and the status is the one root cause."""
    async with rest_mapping_agent("unmapped") as origin:
        result = await _rest_suite(client, origin)
    graded = result.check("errors.error_status")
    assert graded is not None and (graded.status, graded.severity) == (Status.FAIL, "MUST"), graded
    assert "TaskNotCancelableError came with HTTP 422" in graded.message
    assert "HTTP 409 (1.0.0) or HTTP 400 (1.0.1)" in graded.message
    not_cancelable = result.check("errors.not_cancelable")
    assert not_cancelable is not None and not_cancelable.status is Status.PASS, not_cancelable
    rows = {r["test"]: r for r in to_dict(result)["results"]}
    assert rows["errors.error_status"]["requirement"]["section"].startswith("§5.4")
    assert to_dict(result)["errorMapping"] == E.NEITHER


async def test_a_grpc_status_neither_mapping_gives_fails_error_status(client: HttpClient) -> None:
    from tests.agents.grpc_faults import grpc_fault_agent

    async with grpc_fault_agent("push_unsupported_unmapped") as origin:
        result = await run_suite(Target(name="g", url=origin, binding="GRPC", timeout=3.0), client,
                                 SuiteOptions(timeout=15.0, safe_only=True))
    graded = result.check("errors.error_status")
    assert graded is not None and graded.status is Status.FAIL, graded
    assert "PushNotificationNotSupportedError came with gRPC INVALID_ARGUMENT" in graded.message
    assert "gRPC UNIMPLEMENTED (1.0.0) or gRPC FAILED_PRECONDITION (1.0.1)" in graded.message


async def test_error_status_is_not_asked_of_json_rpc_nor_of_0_3_grpc(client: HttpClient) -> None:
    async with run_agent("healthy") as v1:
        r1 = await run_suite(Target(name="j", url=v1.origin or "", timeout=3.0), client, SuiteOptions(timeout=15.0))
    graded = r1.check("errors.error_status")
    assert graded is not None and graded.status is Status.SKIP and "JSON-RPC" in graded.message


@pytest.mark.parametrize(("binding", "agent"), [("jsonrpc", "sloppy"), ("http_json", "rest")])
async def test_error_details_without_type_fail_details_typed(client: HttpClient, binding: str, agent: str) -> None:
    """1.0.1 §9.5 / §11.6: "Each object in the data [details] array MUST include a @type key" (1.0.0:
    "google.protobuf.Any messages, using ProtoJSON representation"). The ErrorInfo beside it is still read."""
    from tests.agents.sloppy import Sloppy, sloppy_agent

    if agent == "sloppy":
        async with sloppy_agent(Sloppy({"untyped_details"})) as url:
            result = await run_suite(Target(name="s", url=url, timeout=3.0), client, SuiteOptions(timeout=15.0))
        where = "taskId"
    else:
        async with rest_mapping_agent("1.0.1", untyped=True) as origin:
            result = await _rest_suite(client, origin)
        where = "hint"
    typed = result.check("errors.details_typed")
    assert typed is not None and (typed.status, typed.severity) == (Status.FAIL, "MUST"), typed
    assert f"details[1] has no @type (its keys: {where})" in typed.message
    if binding == "jsonrpc":
        info = result.check("errors.error_info")
        assert info is not None and info.status is Status.PASS, info


async def test_free_form_data_of_json_rpc_own_errors_is_1_0_0s_example_not_a_fault(client: HttpClient) -> None:
    """1.0.0 §9.5's own example answers -32601 with `"data": {"method": "invalid/method"}` (JSON-RPC 2.0 §5.1: data
    may be any value); 1.0.1 dropped it. The card cannot tell 1.0.0 from 1.0.1, so a non-array data on JSON-RPC's
    own errors is not graded (a2a-sdk 1.0.0 sends -32600/-32602 a string or an object). Before: details_typed
    failed the MUST. An A2A error's data stays graded: 1.0.0 too wants an array holding ErrorInfo."""
    from tests.agents.sloppy import Sloppy, sloppy_agent

    async with sloppy_agent(Sloppy({"free_data"})) as url:
        result = await run_suite(Target(name="s", url=url, timeout=3.0), client, SuiteOptions(timeout=15.0))
    typed = result.check("errors.details_typed")
    assert typed is not None and typed.status is Status.PASS, typed
    assert "not graded: 3 JSON-RPC error(s) of its own with a non-array error.data" in typed.message
    assert "error(s) with details, each object with an @type; not graded" in typed.message  # ErrorInfo arrays
    async with sloppy_agent(Sloppy({"free_data", "free_data_a2a"})) as url:
        result = await run_suite(Target(name="s", url=url, timeout=3.0), client, SuiteOptions(timeout=15.0))
    typed = result.check("errors.details_typed")
    assert typed is not None and (typed.status, typed.severity) == (Status.FAIL, "MUST"), typed
    assert "(TaskNotFoundError): the details are an object" in typed.message


async def test_typed_details_pass_and_grpc_is_not_asked(client: HttpClient) -> None:
    async with rest_mapping_agent("1.0.1") as origin:
        result = await _rest_suite(client, origin)
    typed = result.check("errors.details_typed")
    assert typed is not None and typed.status is Status.PASS and "each object with an @type" in typed.message, typed


async def test_a_0_3_rest_error_at_a_wrong_status_fails_error_status_not_the_error(client: HttpClient) -> None:
    """0.3 §3.2.3 splits the two: "HTTP Status Codes: MUST use appropriate HTTP status codes ... that correspond to
    A2A error types" (errors.error_status, MUST) and "Error Format: MUST return error responses in a consistent JSON
    format that maps to A2A error types" (the check that provoked the error; TaskNotCancelable is §8.2's SHOULD).
    A TaskNotCancelableError (-32002) at HTTP 422, which corresponds to none of 400 / 409: the error passes, the
    status fails; the unknown task's 404 passes both."""
    async with rest_mapping_agent("unmapped", version="0.3") as origin:
        result = await run_suite(Target(name="r03", url=origin, binding="HTTP+JSON", timeout=3.0), client,
                                 SuiteOptions(timeout=15.0))
    assert (result.protocol_version, result.binding) == ("0.3", "HTTP+JSON")
    checks = {c.id: c for c in result.checks}
    cancelable = checks["errors.not_cancelable"]
    assert (cancelable.status, cancelable.severity) == (Status.PASS, "SHOULD"), cancelable
    found = checks["errors.task_not_found"]
    assert (found.status, found.severity) == (Status.PASS, "MUST"), found  # §3.2.3 Error Format
    status = checks["errors.error_status"]
    assert (status.status, status.severity) == (Status.FAIL, "MUST"), status
    assert "TaskNotCancelableError came with HTTP 422" in status.message and "400 or 409" in status.message
    assert "TaskNotFoundError" not in status.message
    typed = checks["errors.details_typed"]
    assert typed.status is Status.SKIP, typed  # 0.3 error data is free-form
