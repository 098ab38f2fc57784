"""The demo / fault agent itself, exercised with raw aiohttp client calls."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.agents.fault_agent import DemoAgent, Faults, RecordedRequest

from .catalogue import FAULTS, GATEWAY_PREFIX, run_agent

V1 = {"A2A-Version": "1.0"}
SSE_ACCEPT = {"Accept": "text/event-stream"}


# --------------------------------------------------------------------------------------------------
# helpers


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
        yield s


def v1_message(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "ROLE_USER", "messageId": f"m-{time.monotonic_ns()}", "parts": [{"text": text}], **extra}


def v03_message(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "user",
        "messageId": f"m-{time.monotonic_ns()}",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


def envelope(method: str, params: Any, rpc_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


async def rpc(
    session: aiohttp.ClientSession,
    url: str,
    method: str,
    params: Any,
    headers: dict[str, str] | None = V1,
    rpc_id: Any = 1,
) -> dict[str, Any]:
    async with session.post(url, json=envelope(method, params, rpc_id), headers=headers) as resp:
        assert resp.status == 200
        assert resp.content_type == "application/json"
        body: dict[str, Any] = await resp.json()
    assert body["jsonrpc"] == "2.0"
    assert ("result" in body) != ("error" in body)
    return body


async def raw_post(
    session: aiohttp.ClientSession, url: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, str, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    async with session.post(url, data=data, headers=hdrs) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read()


def parse_sse(raw: bytes) -> list[dict[str, Any]]:
    """Minimal SSE parser: returns [{"event": str|None, "data": parsed JSON}], comments dropped."""
    text = raw.decode().replace("\r\n", "\n")
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name = None
        data_lines = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].lstrip(" "))
        if data_lines:
            events.append({"event": name, "data": json.loads("\n".join(data_lines))})
    return events


def reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


async def send_task(session: aiohttp.ClientSession, url: str, text: str) -> dict[str, Any]:
    """SendMessage (1.0, blocking) and return the Task from the ``{"task": ...}`` wrapper."""
    body = await rpc(session, url, "SendMessage", {"message": v1_message(text)})
    task: dict[str, Any] = body["result"]["task"]
    return task


def v1_kind(result: dict[str, Any]) -> str:
    (key,) = result.keys()
    return key


def v1_states(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for ev in events:
        result = ev["data"]["result"]
        if "task" in result:
            out.append("task:" + result["task"]["status"]["state"])
        elif "statusUpdate" in result:
            out.append(result["statusUpdate"]["status"]["state"])
        elif "artifactUpdate" in result:
            out.append("artifact")
        else:
            out.append(v1_kind(result))
    return out


async def stream(
    session: aiohttp.ClientSession,
    url: str,
    params: dict[str, Any],
    method: str = "SendStreamingMessage",
    headers: dict[str, str] | None = V1,
    rpc_id: Any = "s1",
) -> tuple[int, str, bytes]:
    return await raw_post(session, url, envelope(method, params, rpc_id), {**SSE_ACCEPT, **(headers or {})})


# --------------------------------------------------------------------------------------------------
# healthy 1.0


async def test_healthy_card(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        async with session.get(agent.card_url) as resp:
            assert resp.status == 200
            assert resp.content_type == "application/json"
            assert resp.headers["Cache-Control"] == "max-age=300"
            etag = resp.headers["ETag"]
            card = await resp.json()
        assert card["name"] == "healthy"
        assert card["supportedInterfaces"] == [
            {"url": agent.rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]
        assert card["capabilities"]["streaming"] is True
        assert card["defaultInputModes"]
        assert card["defaultOutputModes"]
        assert {"id", "name", "description", "tags"} <= set(card["skills"][0])
        for legacy in ("url", "protocolVersion", "preferredTransport"):
            assert legacy not in card
        async with session.get(agent.card_url, headers={"If-None-Match": etag}) as resp:
            assert resp.status == 304
        assert agent.origin is not None
        async with session.get(agent.origin + "/.well-known/agent.json") as resp:
            assert resp.status == 404


async def test_healthy_send_message_returns_wrapped_task(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        body = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("hello")}, rpc_id=7)
        assert body["id"] == 7
        task = body["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["status"]["timestamp"].endswith("Z")
        assert task["artifacts"][0]["name"] == "result"
        assert task["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
        (hist,) = task["history"]
        assert hist["role"] == "ROLE_USER"
        assert hist["taskId"] == task["id"]
        assert hist["contextId"] == task["contextId"]


async def test_message_reply_and_input_required_follow_up(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        body = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("a message please")})
        msg = body["result"]["message"]
        assert msg["role"] == "ROLE_AGENT"
        assert msg["parts"] == [{"text": "echo: a message please"}]
        assert msg["contextId"]

        body = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("need input")})
        task = body["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert task["status"]["message"]["role"] == "ROLE_AGENT"
        follow = v1_message("more", taskId=task["id"])
        body = await rpc(session, agent.rpc_url, "SendMessage", {"message": follow})
        done = body["result"]["task"]
        assert done["id"] == task["id"]
        assert done["contextId"] == task["contextId"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert [m["role"] for m in done["history"]] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]

        # message to a terminal task, unknown task, contextId mismatch
        again = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("x", taskId=task["id"])})
        assert again["error"]["code"] == -32004
        unknown = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("x", taskId="nope")})
        assert unknown["error"]["code"] == -32001


async def test_get_task_history_and_not_found(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        task = await send_task(session, agent.rpc_url, "hi")
        got = (await rpc(session, agent.rpc_url, "GetTask", {"id": task["id"]}))["result"]
        assert got["id"] == task["id"]
        assert got["status"]["state"] == "TASK_STATE_COMPLETED"
        assert "task" not in got  # bare Task
        no_hist = (await rpc(session, agent.rpc_url, "GetTask", {"id": task["id"], "historyLength": 0}))["result"]
        assert "history" not in no_hist
        missing = await rpc(session, agent.rpc_url, "GetTask", {"id": "does-not-exist"})
        assert missing["error"]["code"] == -32001
        assert missing["error"]["data"] == [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
            }
        ]
        bad = await rpc(session, agent.rpc_url, "GetTask", {})
        assert bad["error"]["code"] == -32602


async def test_return_immediately_then_cancel(session: aiohttp.ClientSession) -> None:
    async with run_agent(Faults(task_delay=1.0)) as agent:
        params = {"message": v1_message("slow"), "configuration": {"returnImmediately": True}}
        started = time.monotonic()
        task = (await rpc(session, agent.rpc_url, "SendMessage", params))["result"]["task"]
        assert time.monotonic() - started < 0.5
        assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        await asyncio.sleep(0.05)
        got = (await rpc(session, agent.rpc_url, "GetTask", {"id": task["id"]}))["result"]
        assert got["status"]["state"] == "TASK_STATE_WORKING"
        canceled = (await rpc(session, agent.rpc_url, "CancelTask", {"id": task["id"]}))["result"]
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        again = await rpc(session, agent.rpc_url, "CancelTask", {"id": task["id"]})
        assert again["error"]["code"] == -32002
        assert again["error"]["data"][0]["reason"] == "TASK_NOT_CANCELABLE"


async def test_blocking_waits_and_non_blocking_completes_later(session: aiohttp.ClientSession) -> None:
    async with run_agent(Faults(task_delay=0.2)) as agent:
        started = time.monotonic()
        task = await send_task(session, agent.rpc_url, "a")
        assert time.monotonic() - started >= 0.2
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"

        params = {"message": v1_message("b"), "configuration": {"returnImmediately": True}}
        task = (await rpc(session, agent.rpc_url, "SendMessage", params))["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
        await asyncio.sleep(0.35)
        got = (await rpc(session, agent.rpc_url, "GetTask", {"id": task["id"]}))["result"]
        assert got["status"]["state"] == "TASK_STATE_COMPLETED"
        assert got["artifacts"][0]["parts"] == [{"text": "echo: b"}]


async def test_cancel_completed_task_is_not_cancelable(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        task = await send_task(session, agent.rpc_url, "x")
        body = await rpc(session, agent.rpc_url, "CancelTask", {"id": task["id"]})
        assert body["error"]["code"] == -32002


async def test_envelope_and_version_errors(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        url = agent.rpc_url
        status, _, raw = await raw_post(session, url, b"{not json", V1)
        assert status == 200
        assert json.loads(raw)["error"]["code"] == -32700
        assert json.loads(raw)["id"] is None
        _, _, raw = await raw_post(session, url, [envelope("GetTask", {"id": "x"})], V1)
        assert json.loads(raw)["error"]["code"] == -32600
        _, _, raw = await raw_post(session, url, {"id": 1, "method": "GetTask", "params": {"id": "x"}}, V1)
        assert json.loads(raw)["error"]["code"] == -32600
        _, _, raw = await raw_post(session, url, {"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}, V1)
        assert json.loads(raw) == {"jsonrpc": "2.0", "id": None, "error": json.loads(raw)["error"]}
        assert (await rpc(session, url, "NoSuchMethod", {}))["error"]["code"] == -32601
        assert (await rpc(session, url, "message/send", {"message": v03_message("x")}))["error"]["code"] == -32601

        no_parts = {"message": {"role": "ROLE_USER", "messageId": "m", "parts": []}}
        assert (await rpc(session, url, "SendMessage", no_parts))["error"]["code"] == -32602
        no_id = {"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}
        assert (await rpc(session, url, "SendMessage", no_id))["error"]["code"] == -32602
        assert (await rpc(session, url, "SendMessage", {}))["error"]["code"] == -32602

        params = {"message": v1_message("x")}
        missing = await rpc(session, url, "SendMessage", params, headers=None)
        assert missing["error"]["code"] == -32009
        assert missing["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
        assert (await rpc(session, url, "SendMessage", params, headers={"A2A-Version": "2.0"}))["error"][
            "code"
        ] == -32009
        assert "result" in await rpc(session, url, "SendMessage", params, headers={"a2a-version": "1.1"})


async def test_healthy_stream(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        status, ctype, raw = await stream(session, agent.rpc_url, {"message": v1_message("hello stream")})
        assert status == 200
        assert ctype.startswith("text/event-stream")
        assert b"\r\n" not in raw
        events = parse_sse(raw)
        assert all(ev["event"] is None for ev in events)
        assert all(ev["data"]["id"] == "s1" and ev["data"]["jsonrpc"] == "2.0" for ev in events)
        assert v1_states(events) == [
            "task:TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "artifact",
            "TASK_STATE_COMPLETED",
        ]
        task_id = events[0]["data"]["result"]["task"]["id"]
        art = events[2]["data"]["result"]["artifactUpdate"]
        assert art["taskId"] == task_id
        assert art["append"] is False
        assert art["lastChunk"] is True
        assert art["artifact"]["parts"] == [{"text": "echo: hello stream"}]
        for ev in events[1:]:
            update = next(iter(ev["data"]["result"].values()))
            assert "final" not in update
            assert "kind" not in update

        # message-only stream: one message event
        _, _, raw = await stream(session, agent.rpc_url, {"message": v1_message("message me")})
        (only,) = parse_sse(raw)
        assert v1_kind(only["data"]["result"]) == "message"

        # errors before the stream starts are plain JSON
        status, ctype, raw = await stream(session, agent.rpc_url, {"message": {"role": "ROLE_USER"}})
        assert ctype.startswith("application/json")
        assert json.loads(raw)["error"]["code"] == -32602


async def test_stream_sees_cancel_and_subscribe_works(session: aiohttp.ClientSession) -> None:
    async with run_agent(Faults(task_delay=0.4)) as agent:
        body = envelope("SendStreamingMessage", {"message": v1_message("long")}, "s1")
        async with session.post(agent.rpc_url, json=body, headers={**V1, **SSE_ACCEPT}) as resp:
            raw = b""
            while b"\n\n" not in raw:  # the first event (the Task) arrives before the work is done
                raw += await asyncio.wait_for(resp.content.readany(), 1.0)
            task_id = parse_sse(raw)[0]["data"]["result"]["task"]["id"]
            sub = asyncio.create_task(
                stream(session, agent.rpc_url, {"id": task_id}, method="SubscribeToTask", rpc_id="sub")
            )
            await asyncio.sleep(0.1)
            canceled = await rpc(session, agent.rpc_url, "CancelTask", {"id": task_id})
            assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
            raw += await asyncio.wait_for(resp.content.read(), 1.0)
        assert v1_states(parse_sse(raw)) == [
            "task:TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_CANCELED",
        ]
        _, _, sub_raw = await sub
        sub_events = parse_sse(sub_raw)
        assert v1_states(sub_events) == ["task:TASK_STATE_WORKING", "TASK_STATE_CANCELED"]
        assert all(ev["data"]["id"] == "sub" for ev in sub_events)
        terminal = await rpc(session, agent.rpc_url, "SubscribeToTask", {"id": task_id})
        assert terminal["error"]["code"] == -32004


async def test_streaming_disabled() -> None:
    async with run_agent(Faults(streaming=False)) as agent, aiohttp.ClientSession() as session:
        async with session.get(agent.card_url) as resp:
            assert (await resp.json())["capabilities"]["streaming"] is False
        body = await rpc(session, agent.rpc_url, "SendStreamingMessage", {"message": v1_message("x")})
        assert body["error"]["code"] == -32004


async def test_push_and_extended_card_unsupported(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        body = await rpc(session, agent.rpc_url, "GetTaskPushNotificationConfig", {"taskId": "t", "id": "c"})
        assert body["error"]["code"] == -32003
        body = await rpc(session, agent.rpc_url, "GetExtendedAgentCard", {})
        assert body["error"]["code"] == -32004
        await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("one")})
        listed = (await rpc(session, agent.rpc_url, "ListTasks", {"pageSize": 10}))["result"]
        assert len(listed["tasks"]) == 1
        assert listed["nextPageToken"] == ""
        assert "artifacts" not in listed["tasks"][0]


# --------------------------------------------------------------------------------------------------
# 0.3, hybrid, 0.1


async def test_v03_card_and_send(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy_03") as agent:
        async with session.get(agent.card_url) as resp:
            card = await resp.json()
        assert card["protocolVersion"] == "0.3.0"
        assert card["url"] == agent.rpc_url
        assert card["preferredTransport"] == "JSONRPC"
        assert "supportedInterfaces" not in card

        body = await rpc(session, agent.rpc_url, "message/send", {"message": v03_message("hi")}, headers=None)
        task = body["result"]
        assert task["kind"] == "task"
        assert task["status"]["state"] == "completed"
        assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: hi"}]
        assert task["history"][0]["role"] == "user"
        assert task["history"][0]["kind"] == "message"

        got = await rpc(session, agent.rpc_url, "tasks/get", {"id": task["id"]}, headers=None)
        assert got["result"]["status"]["state"] == "completed"
        cancel = await rpc(session, agent.rpc_url, "tasks/cancel", {"id": task["id"]}, headers=None)
        assert cancel["error"]["code"] == -32002
        assert "data" not in cancel["error"]
        v1 = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("x")})
        assert v1["error"]["code"] == -32601

        msg = await rpc(session, agent.rpc_url, "message/send", {"message": v03_message("message")}, headers=None)
        assert msg["result"]["kind"] == "message"
        assert msg["result"]["role"] == "agent"

        asked = await rpc(session, agent.rpc_url, "message/send", {"message": v03_message("input?")}, headers=None)
        assert asked["result"]["status"]["state"] == "input-required"


async def test_v03_stream(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy_03") as agent:
        status, ctype, raw = await stream(
            session, agent.rpc_url, {"message": v03_message("s")}, method="message/stream", headers=None
        )
        assert status == 200
        assert ctype.startswith("text/event-stream")
        results = [ev["data"]["result"] for ev in parse_sse(raw)]
        assert [r["kind"] for r in results] == ["task", "status-update", "artifact-update", "status-update"]
        assert results[0]["status"]["state"] == "submitted"
        assert results[1]["status"]["state"] == "working"
        assert results[1]["final"] is False
        assert results[2]["append"] is False
        assert results[2]["lastChunk"] is True
        assert results[2]["artifact"]["parts"] == [{"kind": "text", "text": "echo: s"}]
        assert results[3]["status"]["state"] == "completed"
        assert results[3]["final"] is True


async def test_hybrid_answers_both(session: aiohttp.ClientSession) -> None:
    async with run_agent("hybrid") as agent:
        async with session.get(agent.card_url) as resp:
            card = await resp.json()
        versions = [(i["protocolVersion"], i["url"]) for i in card["supportedInterfaces"]]
        assert versions == [("1.0", agent.rpc_url), ("0.3", agent.rpc_url)]
        assert card["url"] == agent.rpc_url
        assert card["protocolVersion"] == "0.3"
        assert card["preferredTransport"] == "JSONRPC"
        v1 = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("a")})
        assert v1["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        v03 = await rpc(session, agent.rpc_url, "message/send", {"message": v03_message("b")}, headers=None)
        assert v03["result"]["status"]["state"] == "completed"
        no_header = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("a")}, headers=None)
        assert no_header["error"]["code"] == -32009
        # one task store: a 0.3 tasks/get sees the 1.0 task in 0.3 spelling
        got = await rpc(session, agent.rpc_url, "tasks/get", {"id": v1["result"]["task"]["id"]}, headers=None)
        assert got["result"]["kind"] == "task"
        assert got["result"]["status"]["state"] == "completed"


async def test_pre_03_legacy_agent(session: aiohttp.ClientSession) -> None:
    async with run_agent("pre_03") as agent:
        assert agent.origin is not None
        async with session.get(agent.origin + "/.well-known/agent-card.json") as resp:
            assert resp.status == 404
        async with session.get(agent.origin + "/.well-known/agent.json") as resp:
            assert resp.status == 200
            card = await resp.json()
        assert card["url"] == agent.rpc_url
        assert card["authentication"] == {"schemes": ["Bearer"]}
        assert "protocolVersion" not in card
        assert "supportedInterfaces" not in card
        assert card["skills"] == [{"id": "echo", "name": "Echo"}]
        assert {"name", "version", "capabilities"} <= set(card)

        params = {
            "id": "client-task-1",
            "sessionId": "sess-1",
            "message": {"role": "user", "parts": [{"type": "text", "text": "old"}]},
        }
        task = (await rpc(session, agent.rpc_url, "tasks/send", params, headers=None))["result"]
        assert task["id"] == "client-task-1"
        assert task["sessionId"] == "sess-1"
        assert task["status"]["state"] == "completed"
        assert task["artifacts"][0]["parts"] == [{"type": "text", "text": "echo: old"}]
        assert "kind" not in task
        assert "contextId" not in task
        got = (await rpc(session, agent.rpc_url, "tasks/get", {"id": "client-task-1"}, headers=None))["result"]
        assert got["status"]["state"] == "completed"
        for method in ("message/send", "SendMessage", "tasks/cancel", "tasks/sendSubscribe"):
            body = await rpc(session, agent.rpc_url, method, {"message": v03_message("x")}, headers=None)
            assert body["error"]["code"] == -32601


# --------------------------------------------------------------------------------------------------
# discovery / gateway faults


async def test_doubled_prefix(session: aiohttp.ClientSession) -> None:
    async with run_agent("doubled_prefix") as agent:
        assert agent.origin is not None
        assert agent.card_url == agent.origin + GATEWAY_PREFIX + "/.well-known/agent-card.json"
        async with session.get(agent.card_url) as resp:
            assert resp.status == 200
            card = await resp.json()
        advertised = card["supportedInterfaces"][0]["url"]
        assert advertised == agent.origin + "/api/a2a/api/a2a/ns/name"
        status, ctype, raw = await raw_post(session, advertised, envelope("GetTask", {"id": "x"}), V1)
        assert status == 404
        assert ctype.startswith("text/plain")
        assert raw == b"404 Not Found"
        # the real route works, with or without the trailing slash
        for url in (agent.rpc_url, agent.rpc_url + "/"):
            assert (await rpc(session, url, "GetTask", {"id": "x"}))["error"]["code"] == -32001
        async with session.get(agent.origin + "/.well-known/agent-card.json") as resp:
            assert resp.status == 404


async def test_in_cluster_host(session: aiohttp.ClientSession) -> None:
    async with run_agent("in_cluster_host") as agent:
        async with session.get(agent.card_url) as resp:
            card = await resp.json()
        assert card["supportedInterfaces"][0]["url"] == "http://agent.default.svc.cluster.local:8080/"


async def test_html_interface(session: aiohttp.ClientSession) -> None:
    async with run_agent("html_interface") as agent:
        status, ctype, raw = await raw_post(session, agent.rpc_url, envelope("SendMessage", {}), V1)
        assert status == 200
        assert ctype.startswith("text/html")
        assert raw.startswith(b"<!doctype html>")
        async with session.get(agent.card_url) as resp:
            assert resp.status == 200  # the card itself is fine


async def test_jsonrpc_error_200(session: aiohttp.ClientSession) -> None:
    async with run_agent("jsonrpc_error_200") as agent:
        for method in ("SendMessage", "GetTask", "Anything"):
            body = await rpc(session, agent.rpc_url, method, {"message": v1_message("x")}, rpc_id="e1")
            assert body["id"] == "e1"
            assert body["error"]["code"] == -32603


async def test_version_header_required(session: aiohttp.ClientSession) -> None:
    async with run_agent("version_header_required") as agent:
        status, ctype, raw = await raw_post(session, agent.rpc_url, envelope("SendMessage", {}))
        assert status == 400
        assert ctype.startswith("application/json")
        assert json.loads(raw) == {"error": "missing or unsupported A2A-Version"}
        ok = await rpc(session, agent.rpc_url, "SendMessage", {"message": v1_message("x")})
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_card_faults_serve_what_they_claim(session: aiohttp.ClientSession) -> None:
    async with run_agent("invalid_card") as agent, session.get(agent.card_url) as resp:
        card = await resp.json()
        assert "name" not in card
        assert all("url" not in i for i in card["supportedInterfaces"])
    async with run_agent("oversized_card") as agent, session.get(agent.card_url) as resp:
        raw = await resp.read()
        assert len(raw) == 2 * 1024 * 1024
        assert resp.content_length == len(raw)
    async with run_agent("duplicate_keys_card") as agent, session.get(agent.card_url) as resp:
        raw = await resp.read()
        assert raw.count(b'"name":') >= 2
        assert raw.startswith(b'{"name":"first-name","name":')
        assert agent.origin is not None
        # __ORIGIN__ was substituted
        assert json.loads(raw)["supportedInterfaces"][0]["url"] == agent.origin + "/"
    async with run_agent("nan_card") as agent, session.get(agent.card_url) as resp:
        raw = await resp.read()
        assert b"NaN" in raw
        with pytest.raises(ValueError, match="NaN"):
            json.loads(raw, parse_constant=reject_constant)


async def test_card_redirect_cross_origin(session: aiohttp.ClientSession) -> None:
    async with (
        run_agent("healthy") as target,
        run_agent(Faults(card_redirect_to=target.card_url)) as redirector,
    ):
        async with session.get(redirector.card_url, allow_redirects=False) as resp:
            assert resp.status == 302
            assert resp.headers["Location"] == target.card_url
        assert redirector.origin != target.origin


async def test_task_failed(session: aiohttp.ClientSession) -> None:
    async with run_agent("task_failed") as agent:
        task = await send_task(session, agent.rpc_url, "x")
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert task["status"]["message"]["role"] == "ROLE_AGENT"
        assert "artifacts" not in task


async def test_slow_task_returns_immediately_and_stops_quickly(session: aiohttp.ClientSession) -> None:
    started = time.monotonic()
    async with run_agent("slow_task") as agent:
        params = {"message": v1_message("x"), "configuration": {"returnImmediately": True}}
        task = (await rpc(session, agent.rpc_url, "SendMessage", params))["result"]["task"]
        await asyncio.sleep(0.05)
        got = (await rpc(session, agent.rpc_url, "GetTask", {"id": task["id"]}))["result"]
        assert got["status"]["state"] == "TASK_STATE_WORKING"
    assert time.monotonic() - started < 1.5  # stop() cancels the 3 s task


# --------------------------------------------------------------------------------------------------
# stream faults


async def test_stream_never_terminates_stops_on_disconnect() -> None:
    async with run_agent("stream_never_terminates") as agent:
        async with aiohttp.ClientSession() as session:
            body = envelope("SendStreamingMessage", {"message": v1_message("x")}, "s1")
            async with session.post(agent.rpc_url, json=body, headers={**V1, **SSE_ACCEPT}) as resp:
                assert resp.status == 200
                buf = b""
                while buf.count(b": keep-alive\n\n") < 2:
                    buf += await asyncio.wait_for(resp.content.readany(), 1.0)
                assert agent.open_streams == 1
        assert v1_states(parse_sse(buf)) == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]
        for _ in range(50):  # the handler notices the disconnect at its next keep-alive
            if agent.open_streams == 0:
                break
            await asyncio.sleep(0.02)
        assert agent.open_streams == 0


async def test_stream_never_terminates_stops_with_server() -> None:
    agent = DemoAgent("hang", FAULTS["stream_never_terminates"])
    await agent.start()
    async with aiohttp.ClientSession() as session:
        body = envelope("SendStreamingMessage", {"message": v1_message("x")}, "s1")
        async with session.post(agent.rpc_url, json=body, headers={**V1, **SSE_ACCEPT}) as resp:
            await asyncio.wait_for(resp.content.readany(), 1.0)
            started = time.monotonic()
            await agent.stop()
            assert time.monotonic() - started < 1.0
            rest = await asyncio.wait_for(resp.content.read(), 1.0)  # body ends cleanly
            assert b"TASK_STATE_COMPLETED" not in rest
    assert agent.open_streams == 0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("stream_closes_early", ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]),
        (
            "stream_regression",
            [
                "task:TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
                "artifact",
                "TASK_STATE_COMPLETED",
                "TASK_STATE_WORKING",
            ],
        ),
        (
            "stream_task_id_changes",
            [
                "task:TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
                "TASK_STATE_WORKING",
                "artifact",
                "TASK_STATE_COMPLETED",
            ],
        ),
    ],
)
async def test_stream_shape_faults(session: aiohttp.ClientSession, name: str, expected: list[str]) -> None:
    async with run_agent(name) as agent:
        status, ctype, raw = await stream(session, agent.rpc_url, {"message": v1_message("x")})
        assert status == 200
        assert ctype.startswith("text/event-stream")
        events = parse_sse(raw)
        assert v1_states(events) == expected
        task_id = events[0]["data"]["result"]["task"]["id"]
        ids = [next(iter(ev["data"]["result"].values())).get("taskId") for ev in events[1:]]
        if name == "stream_task_id_changes":
            assert ids[1] != task_id
            assert ids.count(task_id) == len(ids) - 1
        else:
            assert set(ids) == {task_id}


async def test_stream_wrong_content_type(session: aiohttp.ClientSession) -> None:
    async with run_agent("stream_wrong_content_type") as agent:
        status, ctype, raw = await stream(session, agent.rpc_url, {"message": v1_message("x")})
        assert status == 200
        assert ctype.startswith("application/json")
        assert raw.startswith(b"data: ")
        assert v1_states(parse_sse(raw))[-1] == "TASK_STATE_COMPLETED"


async def test_stream_error_event(session: aiohttp.ClientSession) -> None:
    async with run_agent("stream_error_event") as agent:
        _, ctype, raw = await stream(session, agent.rpc_url, {"message": v1_message("x")})
        assert ctype.startswith("text/event-stream")
        events = parse_sse(raw)
        assert [ev["event"] for ev in events] == [None, None, "error"]
        err = events[-1]["data"]
        assert err["id"] == "s1"
        assert err["error"]["code"] == -32603
        assert "result" not in err
        assert b"event: error\ndata: " in raw
        task_id = events[0]["data"]["result"]["task"]["id"]
        got = (await rpc(session, agent.rpc_url, "GetTask", {"id": task_id}))["result"]
        assert got["status"]["state"] == "TASK_STATE_FAILED"


async def test_crlf_chunked_stream() -> None:
    async with run_agent("crlf_chunked_stream") as agent, aiohttp.ClientSession() as session:
        body = envelope("SendStreamingMessage", {"message": v1_message("chunky")}, "s1")
        chunks: list[bytes] = []
        current = b""
        async with session.post(agent.rpc_url, json=body, headers={**V1, **SSE_ACCEPT}) as resp:
            assert resp.headers["Transfer-Encoding"] == "chunked"
            async for data, end_of_chunk in resp.content.iter_chunks():
                current += data
                if end_of_chunk:
                    chunks.append(current)
                    current = b""
        if current:
            chunks.append(current)
        raw = b"".join(chunks)
        assert max(len(c) for c in chunks) <= 7
        assert len(chunks) > 40
        assert raw.count(b"\r\n\r\n") == 4
        assert raw.replace(b"\r\n", b"").count(b"\n") == 0
        assert v1_states(parse_sse(raw))[-1] == "TASK_STATE_COMPLETED"


# --------------------------------------------------------------------------------------------------
# recording, catalogue, validation


async def test_request_recording(session: aiohttp.ClientSession) -> None:
    async with run_agent("healthy") as agent:
        async with session.get(agent.card_url):
            pass
        await rpc(session, agent.rpc_url, "GetTask", {"id": "x"})
        card_req, rpc_req = agent.requests
        assert (card_req.method, card_req.path) == ("GET", "/.well-known/agent-card.json")
        assert rpc_req.method == "POST"
        assert rpc_req.path == "/"
        assert rpc_req.header("a2a-version") == "1.0"
        assert rpc_req.json()["method"] == "GetTask"
        assert all(r.header("Authorization") is None for r in agent.requests)

        await rpc(session, agent.rpc_url, "GetTask", {"id": "x"}, headers={**V1, "Authorization": "Bearer t"})
        assert agent.requests[-1].header("authorization") == "Bearer t"

        agent.requests[:] = [RecordedRequest("GET", f"/{i}", "", {}) for i in range(1000)]
        async with session.get(agent.card_url):
            pass
        assert len(agent.requests) == 1000
        assert agent.requests[0].path == "/1"
        assert agent.requests[-1].path.endswith("agent-card.json")


async def test_every_catalogue_entry_starts_and_serves_its_card(session: aiohttp.ClientSession) -> None:
    assert set(FAULTS) == {
        "healthy", "healthy_03", "hybrid", "doubled_prefix", "html_interface", "jsonrpc_error_200",
        "version_header_required", "stream_never_terminates", "stream_closes_early", "stream_regression",
        "stream_task_id_changes", "stream_wrong_content_type", "stream_error_event", "invalid_card",
        "oversized_card", "duplicate_keys_card", "nan_card", "pre_03", "in_cluster_host", "task_failed",
        "slow_task", "crlf_chunked_stream", "push_code_03", "subscribe_updates_first_03", "subscribe_updates_first",
        "timestamp_offset", "timestamp_offset_03",
    }  # fmt: skip
    for name in FAULTS:
        async with run_agent(name) as agent, session.get(agent.card_url) as resp:
            assert resp.status == 200, name
            await resp.read()


def test_faults_validation() -> None:
    with pytest.raises(ValueError, match="protocol"):
        Faults(protocol="2.0")
    with pytest.raises(ValueError, match="stream_mode"):
        Faults(stream_mode="sometimes")
    with pytest.raises(ValueError, match="card_prefix"):
        Faults(card_prefix="api")
    with pytest.raises(ValueError, match="task_final_state"):
        Faults(task_final_state="done")
