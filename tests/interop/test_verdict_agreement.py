"""Verdict and checks agree on every fault agent: exit code, JSON summary and JUnit tell one story.

A failed verdict has at least one failed check that carries its reason; the JSON summary and the JUnit file
count the same failures; and the exit code of `check` fails exactly when the verdict does.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pytest

from probe.cli import failed as exit_fails
from probe.engine import run_probe
from probe.report import to_dict, to_junit
from probe.results import ProbeResult
from probe.suite import SuiteOptions, run_suite
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.catalogue import FAULTS, GATEWAY_PREFIX, run_agent
from tests.agents.versioned import rpc, versioned_agent


def assert_agree(result: ProbeResult) -> None:
    report = to_dict(result)
    junit = ET.fromstring(to_junit(result))
    junit_failures = len(junit.findall(".//testcase/failure"))
    assert int(junit.get("failures", "-1")) == report["summary"]["failed"] == junit_failures
    assert exit_fails(result, "verdict") is (not result.success)
    if result.success:
        assert result.reason is None
        return
    carriers = [r for r in report["results"] if r["status"] == "fail" and r["reason"] == report["reason"]]
    assert carriers, f"{report['reason']} with no failed check carrying it: {report['results']}"
    failing_cases = {c.get("name") for c in junit.findall(".//testcase") if c.find("failure") is not None}
    assert {r["test"] for r in carriers} <= failing_cases
    assert "None" not in " ".join(r["message"] for r in report["results"])


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_every_fault_agent(client: HttpClient, fault: str) -> None:
    async with run_agent(fault) as agent:
        base = f"{agent.origin}{GATEWAY_PREFIX}" if fault == "doubled_prefix" else agent.origin or ""
        result = await run_probe(Target(name=fault, url=base, timeout=2.0, stream_close_grace=0.2), client)
    assert_agree(result)


@pytest.mark.parametrize("fault", ["html_interface", "jsonrpc_error_200", "doubled_prefix", "healthy_03"])
async def test_the_suite_agrees_too(client: HttpClient, fault: str) -> None:
    async with run_agent(fault) as agent:
        base = f"{agent.origin}{GATEWAY_PREFIX}" if fault == "doubled_prefix" else agent.origin or ""
        result = await run_suite(Target(name=fault, url=base, timeout=3.0), client, SuiteOptions(timeout=10.0))
    assert_agree(result)


async def test_an_http_200_json_rpc_error_on_invoke_is_a_failed_check(client: HttpClient) -> None:
    error = {"code": -32603, "message": "internal error"}
    async with versioned_agent("1.0", {"SendMessage": rpc(error=error)}) as origin:
        result = await run_probe(Target(name="t", url=origin, timeout=3.0), client)
    assert not result.success
    carrier = result.check("invoke.no_error")
    assert carrier is not None and carrier.status == "fail" and carrier.reason is result.reason
    assert "-32603" in carrier.message
    assert_agree(result)


async def test_an_unreachable_agent_is_a_failed_check(client: HttpClient) -> None:
    result = await run_probe(Target(name="t", url="http://127.0.0.1:9", timeout=2.0), client)
    assert not result.success
    assert_agree(result)
    carrier = result.check("card.discovered")
    assert carrier is not None and "cannot connect" in carrier.message
