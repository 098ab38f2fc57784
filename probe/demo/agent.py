"""The demo's own A2A agent: a small healthy A2A 1.0 JSON-RPC echo agent on aiohttp.web.

`a2a-probe demo` runs two of them. One is healthy; the other shows the one failure the demo is about:
its card is served under a gateway prefix but advertises the prefix twice (``advertised_path``), so every
real client gets 404 while a naive card check stays green. The fault-injecting agents the tests use live
under ``tests/agents/``, not in the product.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

__all__ = ["DemoAgent"]

Json = dict[str, Any]
CARD_PATH = "/.well-known/agent-card.json"
MAX_TASKS = 1000
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _error(rid: Any, code: int, message: str, reason: str | None = None) -> web.Response:
    err: Json = {"code": code, "message": message}
    if reason:
        err["data"] = [{"@type": _ERROR_INFO, "reason": reason, "domain": "a2a-protocol.org"}]
    return web.json_response({"jsonrpc": "2.0", "id": rid, "error": err})


class DemoAgent:
    def __init__(self, name: str = "demo-agent", *, card_prefix: str = "", advertised_path: str | None = None) -> None:
        self.name = name
        self.prefix = card_prefix.rstrip("/")
        self.advertised_path = advertised_path
        self.origin: str | None = None
        self._tasks: OrderedDict[str, Json] = OrderedDict()
        self._runner: web.AppRunner | None = None

    # ---- lifecycle

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 20)
        app.router.add_get(self.prefix + CARD_PATH, self._card)
        for path in ([self.prefix, self.prefix + "/"] if self.prefix else ["/"]):
            app.router.add_post(path, self._rpc)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        bound_host, bound_port = runner.addresses[0][:2]
        self.origin = f"http://{bound_host}:{bound_port}"
        return self.origin

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        self.origin = None

    @property
    def card_url(self) -> str:
        assert self.origin is not None, "agent not started"
        return self.origin + self.prefix + CARD_PATH

    # ---- card

    async def _card(self, request: web.Request) -> web.Response:
        origin = self.origin or f"{request.scheme}://{request.host}"
        path = self.advertised_path if self.advertised_path is not None else (self.prefix or "/")
        card = {"name": self.name, "description": f"{self.name}: a2a-probe demo echo agent",
                "supportedInterfaces": [{"url": origin + path, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "version": "1.0.0", "capabilities": {"streaming": True, "pushNotifications": False},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "echo", "name": "Echo", "description": "Echoes the text it receives, prefixed "
                            "with 'echo: '.", "tags": ["demo", "echo"], "examples": ["hello"]}]}
        body = json.dumps(card).encode()
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        return web.Response(body=body, content_type="application/json",
                            headers={"Cache-Control": "max-age=300", "ETag": etag})

    # ---- JSON-RPC

    async def _rpc(self, request: web.Request) -> web.StreamResponse:
        try:
            req = json.loads(await request.read())
        except ValueError:
            return _error(None, -32700, "Parse error")
        if not isinstance(req, dict) or req.get("jsonrpc") != "2.0" or not isinstance(req.get("method"), str):
            return _error(req.get("id") if isinstance(req, dict) else None, -32600, "Invalid Request")
        rid, method, params = req.get("id"), req["method"], req.get("params")
        if not request.headers.get("A2A-Version", "").startswith("1."):
            return _error(rid, -32009, "Only A2A 1.0 is supported", "VERSION_NOT_SUPPORTED")
        params = params if isinstance(params, dict) else {}
        if method == "SendMessage":
            task = self._run(params)
            return task if isinstance(task, web.Response) else self._result(rid, {"task": task})
        if method == "SendStreamingMessage":
            task = self._run(params)
            return task if isinstance(task, web.Response) else await self._stream(request, rid, task)
        if method in ("GetTask", "CancelTask"):
            stored = self._tasks.get(str(params.get("id")))
            if stored is None:
                return _error(rid, -32001, "Task not found", "TASK_NOT_FOUND")
            if method == "CancelTask":
                return _error(rid, -32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE")
            return self._result(rid, stored)
        return _error(rid, -32601, "Method not found")

    def _result(self, rid: Any, result: Json) -> web.Response:
        return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})

    def _run(self, params: Json) -> Json | web.Response:
        """Echo the text; the task completes at once (blocking by nature)."""
        msg = params.get("message")
        if not isinstance(msg, dict) or not isinstance(msg.get("messageId"), str) or not msg.get("parts"):
            return _error(None, -32602, "Invalid params: message needs messageId and parts")
        text = " ".join(p["text"] for p in msg["parts"] if isinstance(p, dict) and isinstance(p.get("text"), str))
        tid, cid = str(uuid.uuid4()), str(msg.get("contextId") or uuid.uuid4())
        artifact = {"artifactId": str(uuid.uuid4()), "name": "result", "parts": [{"text": f"echo: {text}"}]}
        task = {"id": tid, "contextId": cid, "status": {"state": "TASK_STATE_COMPLETED", "timestamp": _now()},
                "artifacts": [artifact], "history": [{**msg, "taskId": tid, "contextId": cid}]}
        self._tasks[tid] = task
        while len(self._tasks) > MAX_TASKS:
            self._tasks.popitem(last=False)
        return task

    async def _stream(self, request: web.Request, rid: Any, task: Json) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
        await resp.prepare(request)
        ids = {"taskId": task["id"], "contextId": task["contextId"]}
        events = [{"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": _now()},
                            "artifacts": []}},
                  {"statusUpdate": {**ids, "status": {"state": "TASK_STATE_WORKING", "timestamp": _now()}}},
                  {"artifactUpdate": {**ids, "artifact": task["artifacts"][0], "lastChunk": True}},
                  {"statusUpdate": {**ids, "status": task["status"]}}]
        for ev in events:
            await resp.write(b"data: " + json.dumps({"jsonrpc": "2.0", "id": rid, "result": ev}).encode() + b"\n\n")
            await asyncio.sleep(0)
        await resp.write_eof()
        return resp
