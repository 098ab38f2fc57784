"""A replay of Mastra's A2A server (@mastra/server 1.67.0's A2A routes on @mastra/hono 1.7.9) in the shapes the probe
met on the real one (tests/peers/mastra, tests/interop/test_framework_peers.py), for the fast loop.

What it answers as Mastra does (@mastra/server dist/a2a-*.js: GET_AGENT_CARD_ROUTE, AGENT_EXECUTION_ROUTE):

* its card at /api/.well-known/echo/agent-card.json: protocolVersion 0.3.0, url /api/a2a/echo, no
  preferredTransport, capabilities streaming and pushNotifications;
* a body its route's zod schema refuses (not JSON, a method outside its list, params without messageId or parts):
  HTTP 400 {"error": "Invalid request body", "issues": [...]}, the framework's own page, no JSON-RPC envelope;
* message/send: the task COMPLETED, its answer in the artifact "response.txt"; tasks/get, tasks/cancel (a terminal
  task: TaskNotCancelableError); message/stream: the Task, the artifact update, the final status update;
* tasks/resubscribe of an unknown task: HTTP 200 text/event-stream, then the connection closed mid-chunk (Mastra's
  generator throws TaskNotFound inside the SSE body, and its ReadableStream errors);
* push configs kept per task; deleting one that is gone is InvalidParamsError -32602 "Push notification config not
  found: <id>"; nothing is ever delivered (Mastra refuses loopback and private webhook URLs).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.agents.server import serve

METHODS = ("message/send", "message/stream", "tasks/get", "tasks/list", "tasks/cancel", "tasks/resubscribe",
           "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
           "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
           "agent/getAuthenticatedExtendedCard")
CARD_PATH = "/api/.well-known/echo/agent-card.json"
RPC_PATH = "/api/a2a/echo"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(body: Any, status: int = 200) -> web.Response:
    """Hono's c.json / Response.json: compact JSON, Content-Type application/json (no charset)."""
    return web.Response(body=json.dumps(body, separators=(",", ":")).encode(), status=status,
                        headers={"Content-Type": "application/json"})


def _invalid(field: str, message: str) -> web.Response:
    return _json({"error": "Invalid request body", "issues": [{"field": field, "message": message}]}, 400)


def _reply(rid: Any, result: Any = None, error: dict[str, Any] | None = None) -> web.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    body |= {"error": error} if error is not None else {"result": result}
    return _json(body)


def _sse(rid: Any, result: Any) -> bytes:
    return f"data: {json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': result})}\n\n".encode()


class MastraReplay:
    def __init__(self) -> None:
        self.origin = ""
        self.tasks: dict[str, dict[str, Any]] = {}
        self.configs: dict[str, dict[str, dict[str, Any]]] = {}  # task id -> config id -> config

    def card(self) -> dict[str, Any]:
        return {"name": "echo", "description": "Echoes the user's text.", "url": f"{self.origin}{RPC_PATH}",
                "provider": {"organization": "Mastra", "url": "https://mastra.ai"}, "version": "1.0",
                "protocolVersion": "0.3.0", "additionalInterfaces": [], "supportsAuthenticatedExtendedCard": False,
                "security": [], "securitySchemes": {},
                "capabilities": {"streaming": True, "pushNotifications": True, "stateTransitionHistory": False,
                                 "extensions": []},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}

    async def card_handler(self, _: web.Request) -> web.Response:
        return _json(self.card())

    async def rpc(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return _invalid("body", str(exc))
        if not isinstance(body, dict) or body.get("method") not in METHODS:
            return _invalid("method", "Invalid discriminator value. Expected " +
                            " | ".join(f"'{m}'" for m in METHODS))
        rid, method, params = body.get("id"), body["method"], body.get("params") or {}
        if method in ("message/send", "message/stream"):
            message = params.get("message") or {}
            if not isinstance(message.get("messageId"), str) or not isinstance(message.get("parts"), list):
                return _invalid("params.message.messageId", "Invalid input: expected string, received undefined")
            task = self._complete(message)
            config = (params.get("configuration") or {}).get("pushNotificationConfig")
            if isinstance(config, dict):
                self._store(task["id"], config)
            if method == "message/send":
                return _reply(rid, task)
            return await self._stream(request, rid, task)
        if method == "tasks/resubscribe":
            return await self._resubscribe(request, rid, str(params.get("id")))
        handler = {"tasks/get": self._get, "tasks/cancel": self._cancel,
                   "tasks/pushNotificationConfig/set": self._push_set,
                   "tasks/pushNotificationConfig/get": self._push_get,
                   "tasks/pushNotificationConfig/list": self._push_list,
                   "tasks/pushNotificationConfig/delete": self._push_delete}.get(method)
        if handler is None:  # tasks/list (a 1.0 method), the extended card: refused as Mastra refuses them
            code, text = ((-32007, "Extended agent card not configured") if method.startswith("agent/")
                          else (-32601, "Method not found"))
            return _reply(rid, error={"code": code, "message": text})
        result, error = handler(params)
        return _reply(rid, result, error)

    def _complete(self, message: dict[str, Any]) -> dict[str, Any]:
        tid = message.get("taskId") or str(uuid.uuid4())
        cid = message.get("contextId") or str(uuid.uuid4())
        text = " ".join(p.get("text", "") for p in message["parts"] if isinstance(p, dict))
        task = {"id": tid, "contextId": cid, "status": {"state": "completed", "timestamp": _now()},
                "artifacts": [{"artifactId": f"{tid}:response", "name": "response.txt",
                               "parts": [{"kind": "text", "text": f"echo: {text}"}]}],
                "history": [message], "metadata": {"resourceId": "echo"}, "kind": "task"}
        self.tasks[tid] = task
        return task

    async def _stream(self, request: web.Request, rid: Any, task: dict[str, Any]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        working = {**task, "status": {"state": "working", "timestamp": _now()}, "artifacts": []}
        await resp.write(_sse(rid, working))
        await resp.write(_sse(rid, {"kind": "artifact-update", "taskId": task["id"], "contextId": task["contextId"],
                                    "lastChunk": True, "artifact": task["artifacts"][0]}))
        await resp.write(_sse(rid, {"kind": "status-update", "taskId": task["id"], "contextId": task["contextId"],
                                    "status": task["status"], "final": True}))
        await resp.write_eof()
        return resp

    async def _resubscribe(self, request: web.Request, rid: Any, task_id: str) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8",
                                           "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        task = self.tasks.get(task_id)
        if task is None:  # the headers went out; the body's stream errors: the connection is closed mid-chunk
            await asyncio.sleep(0.01)
            assert request.transport is not None
            request.transport.close()
            return resp
        await resp.write(_sse(rid, task))
        await resp.write_eof()
        return resp

    def _get(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        task = self.tasks.get(str(params.get("id")))
        return (task, None) if task else (None, _not_found(str(params.get("id"))))

    def _cancel(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid = str(params.get("id"))
        if tid not in self.tasks:
            return None, _not_found(tid)
        return None, {"code": -32002, "message": f"Task not cancelable: {tid}"}

    def _store(self, tid: str, config: dict[str, Any]) -> dict[str, Any]:
        stored = {"taskId": tid, "pushNotificationConfig": {**config, "id": config.get("id") or tid}}
        self.configs.setdefault(tid, {})[stored["pushNotificationConfig"]["id"]] = stored
        return stored

    def _push_set(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid = str(params.get("taskId"))
        if tid not in self.tasks:
            return None, _not_found(tid)
        return self._store(tid, params.get("pushNotificationConfig") or {}), None

    def _push_get(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid = str(params.get("id"))
        config_id = str(params.get("pushNotificationConfigId") or tid)
        config = self.configs.get(tid, {}).get(config_id)
        if config is None:
            return None, {"code": -32602, "message": f"Push notification config not found: {config_id}"}
        return config, None

    def _push_list(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        return list(self.configs.get(str(params.get("id")), {}).values()), None

    def _push_delete(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid, config_id = str(params.get("id")), str(params.get("pushNotificationConfigId"))
        if self.configs.get(tid, {}).pop(config_id, None) is None:
            return None, {"code": -32602, "message": f"Push notification config not found: {config_id}"}
        return None, None


def _not_found(task_id: str) -> dict[str, Any]:
    return {"code": -32001, "message": f"Task not found: {task_id}"}


@asynccontextmanager
async def mastra_replay(agent: MastraReplay | None = None) -> AsyncIterator[str]:
    """Serve the replay; yields its card's URL."""
    agent = agent or MastraReplay()
    app = web.Application()
    app.router.add_get(CARD_PATH, agent.card_handler)
    app.router.add_post(RPC_PATH, agent.rpc)
    async with serve(app) as origin:
        agent.origin = origin
        yield origin + CARD_PATH
