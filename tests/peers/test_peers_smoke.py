"""Smoke tests: the four official-SDK reference peers answer the shared behaviour table on the wire.

Raw aiohttp only (no SDK client), so these also pin down the wire shapes the probe relies on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.peers.fixtures import js_peer, js_peer_compat, py_peer, py_peer_compat  # noqa: F401
from tests.peers.harness import Peer

pytestmark = pytest.mark.external  # starts programs outside this Python (see pyproject)

ALL_PEERS = ["py_peer", "py_peer_compat", "js_peer", "js_peer_compat"]
COMPAT_PEERS = ["py_peer_compat", "js_peer_compat"]
V1 = {"A2A-Version": "1.0"}
TIMEOUT = aiohttp.ClientTimeout(total=15)

JsonObj = dict[str, Any]


@pytest.fixture(params=ALL_PEERS)
def peer(request: pytest.FixtureRequest) -> Peer:
    result: Peer = request.getfixturevalue(request.param)
    return result


@pytest.fixture(params=COMPAT_PEERS)
def compat_peer(request: pytest.FixtureRequest) -> Peer:
    result: Peer = request.getfixturevalue(request.param)
    return result


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        yield session


def user_message(text: str, task_id: str | None = None) -> JsonObj:
    message: JsonObj = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}
    if task_id:
        message["taskId"] = task_id
    return {"message": message}


async def rpc(
    http: aiohttp.ClientSession,
    peer: Peer,
    method: str,
    params: JsonObj,
    headers: dict[str, str] | None = None,
) -> JsonObj:
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    async with http.post(peer.jsonrpc_url, json=body, headers=V1 if headers is None else headers) as resp:
        assert resp.status == 200
        reply: JsonObj = await resp.json(content_type=None)
    assert "error" not in reply, reply
    result: JsonObj = reply["result"]
    return result


async def send(http: aiohttp.ClientSession, peer: Peer, text: str, task_id: str | None = None) -> JsonObj:
    return await rpc(http, peer, "SendMessage", user_message(text, task_id))


def sse_events(body: str) -> list[JsonObj]:
    """``data:`` payloads of an SSE body; tolerates both CRLF (Python) and LF (JS) line ends."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def event_state(result: JsonObj) -> str | None:
    for key in ("task", "statusUpdate"):
        if key in result:
            state: str = result[key]["status"]["state"]
            return state
    return None


def artifact_texts(task: JsonObj) -> list[str]:
    return [
        part["text"] for artifact in task.get("artifacts", []) for part in artifact["parts"] if "text" in part
    ]


async def test_card(http: aiohttp.ClientSession, peer: Peer) -> None:
    async with http.get(peer.card_url, headers=V1) as resp:
        assert resp.status == 200
        assert resp.content_type == "application/json"
        card = await resp.json()
    assert card["name"] == ("py-ref" if peer.kind == "python" else "js-ref")
    assert card["capabilities"]["streaming"] is True
    first = card["supportedInterfaces"][0]
    assert (first["url"], first["protocolBinding"], first["protocolVersion"]) == (
        peer.jsonrpc_url,
        "JSONRPC",
        "1.0",
    )
    legacy = [i for i in card["supportedInterfaces"] if i["protocolVersion"] == "0.3"]
    if peer.compat:
        assert card["supportedInterfaces"][1] == legacy[0]
        assert (legacy[0]["url"], legacy[0]["protocolBinding"]) == (peer.jsonrpc_url, "JSONRPC")
    else:
        assert legacy == []


async def test_send_message_completes(http: aiohttp.ClientSession, peer: Peer) -> None:
    task = (await send(http, peer, "hello"))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["name"] == "result"
    assert artifact_texts(task) == ["echo: hello"]


async def test_streaming_ends_completed(http: aiohttp.ClientSession, peer: Peer) -> None:
    body = {"jsonrpc": "2.0", "id": "s1", "method": "SendStreamingMessage", "params": user_message("hello")}
    async with http.post(peer.jsonrpc_url, json=body, headers=V1) as resp:
        assert resp.status == 200
        assert resp.content_type == "text/event-stream"
        events = sse_events(await resp.text())
    results = [event["result"] for event in events]
    assert "task" in results[0]
    assert any("artifactUpdate" in r for r in results)
    assert event_state(results[-1]) == "TASK_STATE_COMPLETED"


async def test_v03_message_send(http: aiohttp.ClientSession, compat_peer: Peer) -> None:
    params = {
        "message": {
            "kind": "message",
            "role": "user",
            "messageId": str(uuid.uuid4()),
            "parts": [{"kind": "text", "text": "hello"}],
        }
    }
    result = await rpc(http, compat_peer, "message/send", params, headers={})
    assert result["kind"] == "task"
    assert result["status"]["state"] == "completed"


async def test_input_required_then_follow_up(http: aiohttp.ClientSession, peer: Peer) -> None:
    first = (await send(http, peer, "need input"))["task"]
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert first["status"]["message"]["parts"] == [{"text": "need more input"}]
    second = (await send(http, peer, "here it is", task_id=first["id"]))["task"]
    assert second["id"] == first["id"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert artifact_texts(second) == ["echo: here it is"]


async def test_cancel_input_required(http: aiohttp.ClientSession, peer: Peer) -> None:
    task = (await send(http, peer, "input please"))["task"]
    canceled = await rpc(http, peer, "CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


async def test_bare_message(http: aiohttp.ClientSession, peer: Peer) -> None:
    result = await send(http, peer, "message me")
    assert "task" not in result
    assert result["message"]["role"] == "ROLE_AGENT"
    assert result["message"]["parts"] == [{"text": "echo: message me"}]


async def test_fail(http: aiohttp.ClientSession, peer: Peer) -> None:
    task = (await send(http, peer, "please fail"))["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["role"] == "ROLE_AGENT"


async def test_slow_then_cancel(http: aiohttp.ClientSession, peer: Peer) -> None:
    body = {"jsonrpc": "2.0", "id": "s2", "method": "SendStreamingMessage", "params": user_message("slow")}
    async with http.post(peer.jsonrpc_url, json=body, headers=V1) as resp:
        assert resp.content_type == "text/event-stream"
        first = await _next_sse_event(resp)
        task_id = first["result"]["task"]["id"]
        canceled = await rpc(http, peer, "CancelTask", {"id": task_id})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        # The open stream also sees the cancellation, then closes.
        rest = sse_events((await resp.read()).decode())
    assert event_state(rest[-1]["result"]) == "TASK_STATE_CANCELED"
    got = await rpc(http, peer, "GetTask", {"id": task_id})
    assert got["status"]["state"] == "TASK_STATE_CANCELED"


async def _next_sse_event(resp: aiohttp.ClientResponse) -> JsonObj:
    """First complete SSE event, read incrementally (the stream stays open while the task runs)."""
    buf = ""
    async for chunk in resp.content.iter_any():
        buf = (buf + chunk.decode()).replace("\r\n", "\n")
        if "\n\n" in buf and (events := sse_events(buf.split("\n\n", 1)[0])):
            return events[0]
    raise AssertionError(f"stream closed before the first event: {buf!r}")
