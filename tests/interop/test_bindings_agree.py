"""interop.bindings_agree on an agent whose gRPC side disagrees with its JSON-RPC side (tests/agents/grpc_faults.py).

Each case asserts the exact reason (or that there is none), the binding the report names, and what each binding gave.
"""

from __future__ import annotations

import json

import pytest

from probe.cli import main
from probe.engine import run_interfaces
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import ProbeResult, Status, StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.grpc_faults import grpc_fault_agent
from tests.daemon.helpers import binding_metrics
from tests.interop.test_verdict_agreement import assert_agree


async def _all(client: HttpClient, *faults: str, random_text: bool = False) -> ProbeResult:
    async with grpc_fault_agent(*faults, random_text=random_text) as origin:
        return await run_interfaces(Target(name="g", url=origin, timeout=5), client, steps=(StepName.INVOKE,))


def _agree(r: ProbeResult) -> tuple[Status, str]:
    c = r.check("interop.bindings_agree")
    assert c is not None
    return c.status, c.message


async def test_a_faithful_agent_agrees_on_every_aspect(client: HttpClient) -> None:
    r = await _all(client)
    status, message = _agree(r)
    assert status is Status.PASS, message
    assert message == "2 interfaces agree on verdicts, terminal states, error names and artifacts"
    entries = {i.key: i for i in r.interfaces}
    assert set(entries) == {"jsonrpc 1.0", "grpc 1.0"}
    for e in entries.values():
        assert e.outcomes == {"GetTask of an unknown task id": "TaskNotFoundError",
                              "CancelTask of a finished task": "TaskNotCancelableError"}
        assert e.artifacts == [["text"]]
    assert r.success and r.reason is None


@pytest.mark.parametrize(("fault", "expected"), [
    ("get_unknown_internal", "GetTask of an unknown task id: jsonrpc 1.0 gave TaskNotFoundError, grpc 1.0 gave an "
                             "error the spec does not name (gRPC INTERNAL)"),
    ("get_unknown_other_name", "GetTask of an unknown task id: jsonrpc 1.0 gave TaskNotFoundError, grpc 1.0 gave "
                               "UnsupportedOperationError"),
    ("cancel_terminal_ok", "CancelTask of a finished task: jsonrpc 1.0 gave TaskNotCancelableError, grpc 1.0 gave a "
                           "Task CANCELED"),
    ("data_artifact", "SendMessage's artifacts differ: jsonrpc 1.0 1 artifact(s) [text], grpc 1.0 1 artifact(s) "
                      "[data]"),
])
async def test_a_grpc_answer_that_disagrees_is_named(client: HttpClient, fault: str, expected: str) -> None:
    r = await _all(client, fault)
    status, message = _agree(r)
    assert status is Status.FAIL
    assert message.startswith(expected), message
    # both bindings are callable: the agent's verdict stands, the disagreement is the check's, a MUST: 1.0 §5.1 "all
    # supported protocols MUST … return semantically equivalent results for the same requests" (TCK BIND-EQUIV-002)
    assert r.success and r.reason is None
    agree = r.check("interop.bindings_agree")
    assert agree is not None and agree.severity == "MUST", agree
    assert_agree(r)


async def test_a_text_that_differs_only_on_grpc_is_a_disagreement(client: HttpClient) -> None:
    r = await _all(client, "shout")
    status, message = _agree(r)
    assert status is Status.FAIL
    assert "SendMessage's artifact text differs: jsonrpc 1.0 'echo: a2a-probe health check', grpc 1.0 " \
           "'ECHO: A2A-PROBE HEALTH CHECK'" in message


async def test_a_nondeterministic_agent_is_not_blamed_for_its_own_variance(client: HttpClient) -> None:
    # every answer carries a fresh nonce (as an LLM's would): the text differs between bindings AND between two
    # answers on JSON-RPC alone, so it proves nothing; the structure still agrees and is still compared
    r = await _all(client, random_text=True)
    status, message = _agree(r)
    assert status is Status.PASS, message
    assert "text of the artifacts not compared: they vary between two answers on jsonrpc 1.0 alone" in message
    r = await _all(client, "data_artifact", random_text=True)
    status, message = _agree(r)
    assert status is Status.FAIL and "[text], grpc 1.0 1 artifact(s) [data]" in message


async def test_a_grpc_side_that_loses_the_task_fails_the_agent_on_grpc(client: HttpClient) -> None:
    r = await _all(client, "task_lost")
    entries = {i.key: i for i in r.interfaces}
    assert entries["jsonrpc 1.0"].success
    assert entries["grpc 1.0"].reason is Reason.INVOKE_A2A_ERROR
    assert not r.success and r.reason is Reason.INVOKE_A2A_ERROR
    status, message = _agree(r)
    assert status is Status.FAIL
    assert message.startswith("jsonrpc 1.0 pass(es) but grpc 1.0 (invoke_a2a_error) fail(s)"), message
    # the failed check that carries the reason is the gRPC interface's, and says so
    carrier = next(c for c in r.checks if c.reason is Reason.INVOKE_A2A_ERROR)
    assert carrier.interface == "grpc 1.0" and "gRPC NOT_FOUND TaskNotFoundError" in carrier.message
    assert_agree(r)
    report = to_dict(r)
    [grpc_entry] = [i for i in report["interfaces"] if i["binding"] == "grpc"]
    assert grpc_entry["reason"] == "invoke_a2a_error" and grpc_entry["summary"]["failed"] >= 1
    assert {x["test"] for x in grpc_entry["results"] if x["status"] == "fail"} >= {"invoke.no_error"}


def test_the_cli_report_names_the_disagreeing_binding(capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    async def run() -> int:
        async with grpc_fault_agent("get_unknown_internal") as origin:
            return await asyncio.to_thread(main, ["check", origin, "--binding", "all", "--no-stream", "--format",
                                                  "json", "--fail-on", "any"])

    code = asyncio.run(run())
    rep = json.loads(capsys.readouterr().out)
    assert code == 1  # the MUST disagreement (§5.1) counts
    agree = next(x for x in rep["results"] if x["test"] == "interop.bindings_agree")
    assert agree["status"] == "fail" and agree["interface"] is None
    assert "grpc 1.0 gave an error the spec does not name (gRPC INTERNAL)" in agree["message"]
    outcomes = {i["binding"]: i["outcomes"]["GetTask of an unknown task id"] for i in rep["interfaces"]}
    assert outcomes == {"jsonrpc": "TaskNotFoundError", "grpc": "an error the spec does not name (gRPC INTERNAL)"}


@pytest.mark.parametrize("fault", ["task_lost", "get_unknown_internal"])
async def test_the_suite_on_every_binding_agrees_with_itself(client: HttpClient, fault: str) -> None:
    from probe.suite import SuiteOptions, run_suite_interfaces

    async with grpc_fault_agent(fault) as origin:
        r = await run_suite_interfaces(Target(name="g", url=origin, timeout=5), client, SuiteOptions(timeout=20))
    assert_agree(r)  # exit code, JSON summary and JUnit failures: one story across both interfaces
    checks = {(c.interface, c.id): c for c in r.checks}
    if fault == "get_unknown_internal":  # the suite's own check on gRPC finds it too, named on that interface
        assert checks[("grpc 1.0", "errors.task_not_found")].status is Status.FAIL
        assert checks[("jsonrpc 1.0", "errors.task_not_found")].status is Status.PASS
        assert "gRPC INTERNAL" in checks[("grpc 1.0", "errors.no_server_errors")].message
    else:
        assert r.reason is Reason.INVOKE_A2A_ERROR
    assert checks[(None, "interop.bindings_agree")].status is Status.FAIL
    assert checks[("grpc 1.0", "errors.parse_error")].status is Status.SKIP  # a JSON-RPC-only check


async def test_the_evidence_is_the_broken_interfaces_call(client: HttpClient) -> None:
    r = await _all(client, "task_lost")
    [card, call] = to_dict(r)["evidence"]
    grpc = next(i for i in r.interfaces if i.binding == "grpc")
    assert card["what"] == "card" and call["what"] == "advertised URL"
    assert call["url"] == grpc.interface_url and call["cause"].startswith("grpc 1.0: GetTask ")


@pytest.mark.parametrize(("fault", "success", "grpc_reason"), [
    ("task_lost", {"jsonrpc": 1.0, "grpc": 0.0}, "invoke_a2a_error"),
    ("get_unknown_internal", {"jsonrpc": 1.0, "grpc": 1.0}, None),  # callable on both: the daemon stays green
])
async def test_the_daemon_metrics_name_the_binding(client: HttpClient, fault: str, success: dict[str, float],
                                                   grpc_reason: str | None) -> None:
    async with grpc_fault_agent(fault) as origin:  # as the daemon's runner calls it: no equivalence calls
        r = await run_interfaces(Target(name="g", url=origin, timeout=5), client, steps=(StepName.INVOKE,),
                                 agree=False)
    assert binding_metrics(r, "invoke") == (success, {"jsonrpc": "none", "grpc": grpc_reason or "none"})



async def test_without_extra_calls_differing_artifacts_are_not_blamed(client: HttpClient) -> None:
    # the daemon's way (agree=False): no second answer, so an LLM's varying text cannot fail the check
    async with grpc_fault_agent(random_text=True) as origin:
        r = await run_interfaces(Target(name="g", url=origin, timeout=5), client, steps=(StepName.INVOKE,),
                                 agree=False)
    status, message = _agree(r)
    assert status is Status.PASS, message
    assert message.endswith("text of the artifacts not compared: they differ, and no second answer was asked for "
                            "to tell the agent's own variance apart")
