"""The probe's verdict on the official Go and Java SDK servers, replayed byte for byte in shape
(tests/agents/replays.py; every shape's source line in docs/replays.md).

VERDICTS (filled from the runs below; each finding is justified in its test).
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2
from google.protobuf import json_format

from probe.engine import run_interfaces
from probe.results import ProbeResult, Severity, Status
from probe.suite import SuiteOptions, run_suite_interfaces
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.replays import LINES, replay_agent

M, S = Severity.MUST, Severity.SHOULD
V1_LINES = [line for line in LINES if "-1.0-" in line]
V03_LINES = [line for line in LINES if "-0.3-" in line]


def _failed(result: ProbeResult) -> set[tuple[str, Severity]]:
    return {(c.id, c.severity) for c in result.failed_checks()}


async def _check(client: HttpClient, line: str, **kw: Any) -> ProbeResult:
    """`a2a-probe check URL --binding all`: discovery, validation, ping, invoke and stream on every interface."""
    async with replay_agent(line, **kw) as origin:
        return await run_interfaces(Target(name=line, url=origin, timeout=5.0), client)


async def _suite(client: HttpClient, line: str, **kw: Any) -> ProbeResult:
    async with replay_agent(line, **kw) as origin:
        return await run_suite_interfaces(Target(name=line, url=origin, timeout=5.0), client,
                                          SuiteOptions(timeout=20.0))


# ---- the premise: official clients read every replayed answer ----------------------------------------------


async def _exchange(line: str, **kw: Any) -> dict[str, Any]:
    """The replay's card, SendMessage answer, stream events and GetTask answer, as sent."""
    version = "1.0" if "-1.0-" in line else "0.3"
    rest = line.endswith("rest")
    message = {"messageId": "m1", "role": "ROLE_USER" if version == "1.0" else "user",
               "parts": [{"text": "hi"} if version == "1.0" else {"kind": "text", "text": "hi"}]}
    out: dict[str, Any] = {}
    async with replay_agent(line, **kw) as origin, aiohttp.ClientSession() as http:
        async with http.get(f"{origin}/.well-known/agent-card.json") as resp:
            out["card"] = json.loads(await resp.read())
        iface = out["card"]["supportedInterfaces"][0]["url"] if version == "1.0" else out["card"]["url"]
        headers = {"A2A-Version": "1.0"} if version == "1.0" else {}

        async def call(method: str, path: str, params: dict[str, Any]) -> tuple[bytes, str]:
            if rest:
                async with http.post(iface + path, json=params, headers=headers) as r:
                    return await r.read(), r.content_type
            body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
            async with http.post(iface, json=body, headers=headers) as r:
                return await r.read(), r.content_type

        names = ("SendMessage", "SendStreamingMessage", "GetTask") if version == "1.0" else (
            "message/send", "message/stream", "tasks/get")
        sent, _ = await call(names[0], "/message:send", {"message": message})
        out["send"] = json.loads(sent)
        raw, ctype = await call(names[1], "/message:stream", {"message": message})
        assert ctype == "text/event-stream"
        out["events"] = [json.loads(line[len("data: "):]) for line in raw.decode().split("\n")
                         if line.startswith("data: ")]
        result = out["send"] if rest else out["send"]["result"]
        tid = (result.get("task") or {}).get("id") if version == "1.0" else result.get("id")
        if rest:
            async with http.get(f"{iface}/tasks/{tid}", headers=headers) as r:
                out["get"] = json.loads(await r.read())
        else:
            out["get"] = json.loads((await call(names[2], "", {"id": tid}))[0])
    return out


@pytest.mark.parametrize("line", V1_LINES)
@pytest.mark.parametrize("message_reply", [False, True])
async def test_the_official_1_0_definitions_read_every_answer(line: str, message_reply: bool) -> None:
    """a2a-sdk's proto definitions (what its clients parse with) take every 1.0 answer, strictly (no unknown
    field): Go's 7-digit timestamps, Java's defaults ("", [], false), Java REST's pretty printing."""
    got = await _exchange(line, message_reply=message_reply)
    json_format.ParseDict(got["card"], a2a_pb2.AgentCard())
    rest = line.endswith("rest")
    sent = got["send"] if rest else got["send"]["result"]
    parsed = json_format.ParseDict(sent, a2a_pb2.SendMessageResponse())
    assert parsed.WhichOneof("payload") == ("message" if message_reply else "task")
    events = got["events"] if rest else [e["result"] for e in got["events"]]
    kinds = [json_format.ParseDict(e, a2a_pb2.StreamResponse()).WhichOneof("payload") for e in events]
    if message_reply:
        assert kinds == ["message"]
    else:
        assert kinds == ["task", "status_update", "artifact_update", "status_update"]
        task = json_format.ParseDict(got["get"] if rest else got["get"]["result"], a2a_pb2.Task())
        assert task.status.state == a2a_pb2.TASK_STATE_COMPLETED and task.artifacts[0].parts[0].text


@pytest.mark.parametrize("line", V03_LINES)
async def test_the_official_0_3_models_read_every_answer(line: str) -> None:
    """a2a-sdk's 0.3 models (a2a.compat.v0_3.types, the 0.3 client's) take the card, even Go's
    "protocolVersion": "", and every answer."""
    got = await _exchange(line)
    card = v03.AgentCard.model_validate(got["card"])
    assert card.protocol_version == ("" if line.startswith("go") else "0.3.0")
    sent = v03.SendMessageResponse.model_validate(got["send"]).root
    assert isinstance(sent, v03.SendMessageSuccessResponse) and isinstance(sent.result, v03.Task)
    states = [v03.SendStreamingMessageResponse.model_validate(e).root.result for e in got["events"]]
    assert [type(s).__name__ for s in states] == ["Task", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent",
                                                   "TaskStatusUpdateEvent"]
    assert v03.GetTaskResponse.model_validate(got["get"]).root.result.status.state == v03.TaskState.completed


# ---- `check` (invoke and stream on every interface): the verdict and every finding ---------------------------


CHECK_FINDINGS: dict[str, set[tuple[str, Severity]]] = {
    # a2a-go serves its card with Content-Type and CORS headers only (a2asrv/agentcard.go:166-172): 1.0 §8.6.1
    # "Agent Card HTTP endpoints SHOULD include HTTP caching headers" (Cache-Control max-age, ETag)
    "go-1.0-jsonrpc": {("card.cache_headers", S)},
    "go-1.0-rest": {("card.cache_headers", S)},
    # "protocolVersion": "" (a2a/agent.go:93, never set by the examples or the TCK server): the card is read as 0.3
    # by its preferredTransport, and the empty version is the finding (0.3 §5.5: the version the agent supports)
    "go-0.3-jsonrpc": {("card.protocol_version", S)},
    # Java's defaults ("", [], false), its 7-line pretty REST bodies, `: SSE stream started` and `data:` before
    # `id:` are all ProtoJSON / SSE the official parsers read: nothing to report
    "java-1.0-jsonrpc": set(),
    "java-1.0-rest": set(),
    "java-0.3-jsonrpc": set(),
}


@pytest.mark.parametrize("line", LINES)
async def test_check_verdict_on_each_sdk_server(client: HttpClient, line: str) -> None:
    result = await _check(client, line)
    assert result.success and result.reason is None, (result.reason, result.failed_checks())
    version = "1.0" if "-1.0-" in line else "0.3"
    binding = "http_json" if line.endswith("rest") else "jsonrpc"
    assert [(i.binding, i.protocol_version, i.success) for i in result.interfaces] == [(binding, version, True)]
    assert _failed(result) == CHECK_FINDINGS[line]
    for cid in ("invoke.framing", "invoke.schema", "invoke.dialect", "invoke.result_shape", "invoke.task_completed",
                "stream.content_type", "stream.events_parse", "stream.schema", "stream.first_event",
                "stream.terminal", "stream.closes_after_terminal", "stream.task_completed"):
        check = result.check(cid)
        assert check is not None and check.status is Status.PASS, (cid, check)
    if version == "1.0":  # Go's 7-digit 'Z' stamps and Java's ProtoJSON ones are UTC
        stamps = result.check("invoke.timestamps_utc")
        assert stamps is not None and stamps.status is Status.PASS, stamps


async def test_the_empty_protocol_version_of_a2a_go_0_3_is_a_finding_not_an_invalid_card(
        client: HttpClient) -> None:
    """Before: `"protocolVersion": ""` made a card of no recognisable version (card_invalid, interface.selected and
    card.required_fields failed: "supportedInterfaces is missing"), though a2a-sdk 0.3's client reads it (the
    premise test above) and calls its url with message/send."""
    result = await _check(client, "go-0.3-jsonrpc")
    assert result.success and result.protocol_version == "0.3"
    finding = result.check("card.protocol_version")
    assert finding is not None and finding.status is Status.FAIL and finding.severity is S
    assert 'protocolVersion is empty ("")' in finding.message
    assert result.check("card.required_fields").status is Status.PASS  # type: ignore[union-attr]


async def test_go_on_a_host_outside_utc_writes_offsets(client: HttpClient) -> None:
    """a2a.NewStatusUpdateEvent stamps time.Now(), local time (core.go:535-546): on a host at +02:00 every status
    timestamp carries +02:00. 1.0 §5.6.1: "Timestamps MUST NOT include timezone offsets other than 'Z'"; the
    official parsers read the offset, so the call passes and the MUST is a finding."""
    result = await _check(client, "go-1.0-jsonrpc", tz_offset="+02:00")
    assert result.success and result.reason is None
    assert _failed(result) == {("card.cache_headers", S), ("invoke.timestamps_utc", M)}
    assert "+02:00" in result.check("invoke.timestamps_utc").message  # type: ignore[union-attr]


@pytest.mark.parametrize("line", ["go-1.0-jsonrpc", "go-1.0-rest", "java-1.0-jsonrpc", "java-1.0-rest"])
async def test_the_hello_world_agents_answer_with_a_message(client: HttpClient, line: str) -> None:
    """The SDKs' hello-world agents answer a Message (Go's without contextId: a2a.NewMessage sets none, and 1.0's
    Message.context_id is optional)."""
    result = await _check(client, line, message_reply=True)
    assert result.success and result.reason is None, result.failed_checks()
    assert _failed(result) == CHECK_FINDINGS[line]
