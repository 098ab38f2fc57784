"""A sloppy A2A 1.0 agent: it works for the basic probe, and breaks the conformance rules you name.

`broken` names what to get wrong; everything else behaves correctly, so each suite check can be
shown to fail on its own. Used by the test that proves every catalogued check can fail.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from tests.agents.cards import valid_card
from tests.agents.server import serve

ALL = frozenset({
    "get_task_id", "return_immediately", "history_length", "cancel", "input_required", "message_to_terminal",
    "unknown_task_message", "context", "no_artifact", "subscribe", "subscribe_terminal", "parse_error",
    "invalid_request", "unknown_method", "invalid_params", "task_not_found", "not_cancelable", "version",
    "push", "extended_card", "error_info",
})  # not in ALL, used alone: "same_task_id", "version_on_send"


class Sloppy:
    def __init__(self, broken: frozenset[str] | set[str] = ALL, *, card_extra: dict[str, Any] | None = None,
                 require_auth: bool = False, streaming: bool = True, card_status: int = 200,
                 card_headers: dict[str, str] | None = None) -> None:
        self.broken = frozenset(broken)
        self.card_extra = card_extra or {}
        self.require_auth = require_auth
        self.streaming = streaming
        self.card_status = card_status
        self.card_headers = card_headers
        self.tasks: dict[str, dict[str, Any]] = {}
        self.origin = ""

    # ---- card

    def card(self) -> dict[str, Any]:
        return valid_card(f"{self.origin}/rpc", name="sloppy", streaming=self.streaming) | self.card_extra

    async def card_handler(self, _request: web.Request) -> web.Response:
        if self.card_status != 200:
            return web.Response(status=self.card_status, text="authentication required")
        headers = self.card_headers if self.card_headers is not None else {"Cache-Control": "max-age=60", "ETag": '"s"'}
        ctype = headers.pop("Content-Type", "application/json") if headers else "application/json"
        return web.Response(text=json.dumps(self.card()), content_type=ctype.split(";")[0], headers=headers)

    # ---- tasks

    def _task(self, text: str, state: str, context_id: str | None) -> dict[str, Any]:
        tid = "the-one-task" if "same_task_id" in self.broken else str(uuid.uuid4())
        msg = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}
        task: dict[str, Any] = {"id": tid, "contextId": context_id or str(uuid.uuid4()),
                                "status": {"state": f"TASK_STATE_{state}"},
                                "history": [msg, {"role": "ROLE_AGENT", "messageId": str(uuid.uuid4()),
                                                  "parts": [{"text": f"echo: {text}"}]}]}
        if state == "COMPLETED" and "no_artifact" not in self.broken:
            task["artifacts"] = [{"artifactId": str(uuid.uuid4()), "parts": [{"text": f"echo: {text}"}]}]
        self.tasks[tid] = task
        return task

    def _send(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        msg = params.get("message") or {}
        if (not msg.get("messageId") or not msg.get("parts")) and "invalid_params" not in self.broken:
            return None, {"code": -32602, "message": "message needs messageId and parts"}
        text = " ".join(p.get("text", "") for p in msg.get("parts") or [] if isinstance(p, dict))
        tid = msg.get("taskId")
        if tid:
            known = self.tasks.get(tid)
            if known is None and "unknown_task_message" not in self.broken:
                return None, self._not_found(tid)
            if known is not None and known["status"]["state"] == "TASK_STATE_INPUT_REQUIRED":
                known["status"]["state"] = "TASK_STATE_COMPLETED"
                known["artifacts"] = [{"artifactId": "a", "parts": [{"text": "done"}]}]
                return {"task": known}, None
            if known is not None and "message_to_terminal" not in self.broken:
                return None, {"code": -32004, "message": "task is terminal"}
        context = None if "context" in self.broken else msg.get("contextId")
        immediate = (params.get("configuration") or {}).get("returnImmediately") is True
        if "slow" in text and "cancel" not in self.broken:
            return {"task": self._task(text, "WORKING", context)}, None
        if "input" in text and "input_required" not in self.broken:
            return {"task": self._task(text, "INPUT_REQUIRED", context)}, None
        state = "SUBMITTED" if immediate and "return_immediately" not in self.broken else "COMPLETED"
        task = self._task(text, state, context)
        if state == "SUBMITTED":
            task["status"]["state"] = "TASK_STATE_COMPLETED"  # done by the next GetTask
            return {"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}}, None
        return {"task": task}, None

    def _not_found(self, tid: str) -> dict[str, Any]:
        err: dict[str, Any] = {"code": -32001, "message": f"task {tid} not found"}
        if "error_info" not in self.broken:
            err["data"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                            "domain": "a2a-protocol.org"}]
        return err

    def _get(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid = str(params.get("id"))
        task = self.tasks.get(tid)
        if task is None:
            if "task_not_found" in self.broken:
                return next(iter(self.tasks.values()), {"id": "x", "contextId": "c",
                                                        "status": {"state": "TASK_STATE_COMPLETED"}}), None
            return None, self._not_found(tid)
        if "get_task_id" in self.broken:
            return {**task, "id": "some-other-task"}, None
        n = params.get("historyLength")
        if isinstance(n, int) and "history_length" not in self.broken:
            return {**task, "history": task["history"][-n:] if n else []}, None
        return task, None

    def _cancel(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        task = self.tasks.get(str(params.get("id")))
        if task is None:
            return None, self._not_found(str(params.get("id")))
        terminal = task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_CANCELED")
        if terminal and "not_cancelable" not in self.broken:
            return None, {"code": -32002, "message": "not cancelable"}
        task["status"]["state"] = "TASK_STATE_CANCELED"
        return task, None

    # ---- transport

    async def rpc(self, request: web.Request) -> web.StreamResponse:
        if self.require_auth and request.headers.get("Authorization") != "Bearer sloppy-token":
            return web.Response(status=401, text="no")  # and no WWW-Authenticate: security.challenge fails
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            if "parse_error" in self.broken:
                return web.Response(status=500, text="Internal Server Error")
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
        version = request.headers.get("A2A-Version")
        if version != "1.0" and "version" not in self.broken:
            return self._reply(rid, None, {"code": -32009, "message": f"version {version} not supported"})
        if "version_on_send" in self.broken and method == "SendMessage":
            return self._reply(rid, None, {"code": -32009, "message": "SendMessage needs another version"})
        if method is None:
            if "invalid_request" in self.broken:
                return self._reply(rid, {}, None)
            return self._reply(rid, None, {"code": -32600, "message": "invalid request"})
        if method in ("SendStreamingMessage", "SubscribeToTask"):
            return await self._stream(request, rid, method, params)
        handler = {"SendMessage": self._send, "GetTask": self._get, "CancelTask": self._cancel}.get(method)
        if handler is not None:
            return self._reply(rid, *handler(params))
        if method == "CreateTaskPushNotificationConfig" and "push" in self.broken:
            return self._reply(rid, params, None)
        if method == "CreateTaskPushNotificationConfig":
            return self._reply(rid, None, {"code": -32003, "message": "push not supported"})
        if method == "GetExtendedAgentCard":
            if "extended_card" in self.broken:
                return self._reply(rid, self.card(), None)
            return self._reply(rid, None, {"code": -32004, "message": "no extended card"})
        if "unknown_method" in self.broken:
            return self._reply(rid, {}, None)
        return self._reply(rid, None, {"code": -32601, "message": "method not found"})

    def _reply(self, rid: Any, result: Any, error: dict[str, Any] | None) -> web.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        body |= {"error": error} if error is not None else {"result": result}
        return web.json_response(body)

    async def _stream(self, request: web.Request, rid: Any, method: str, params: dict[str, Any]) -> web.StreamResponse:
        if method == "SubscribeToTask":
            task = self.tasks.get(str(params.get("id")))
            if task is None:
                return self._reply(rid, None, self._not_found(str(params.get("id"))))
            terminal = task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_CANCELED")
            if "subscribe" in self.broken and not terminal:
                return self._reply(rid, {"task": task}, None)  # a plain answer, not a stream
            if terminal and "subscribe_terminal" not in self.broken:
                return self._reply(rid, None, {"code": -32004, "message": "task is terminal"})
            events = [{"task": task}]
        else:
            result, error = self._send(params)
            if error is not None:
                return self._reply(rid, None, error)
            task = result["task"]
            events = [{"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}},
                      {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"],
                                        "status": task["status"]}}]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for ev in events:
            await resp.write(f"data: {json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': ev})}\n\n".encode())
        await resp.write_eof()
        return resp


@asynccontextmanager
async def sloppy_agent(agent: Sloppy) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", agent.card_handler)
    app.router.add_post("/rpc", agent.rpc)
    async with serve(app) as origin:
        agent.origin = origin
        yield origin
