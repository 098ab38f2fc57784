"""An agent with two callers (bearer tokens mapped to users) whose tasks it keeps apart, or does not: the fault
agents of security.scoped_access (1.0 §13.1, §3.3.2).

JSON-RPC 1.0 at /rpc and HTTP+JSON 1.0 at /rest on one card that declares a Bearer scheme and push notifications;
SendMessage completes a task at once, owned by its caller; a task's push configs are listed (none is ever set).
`mode`:

- ``scoped``: another caller's task is what an unknown id is (TaskNotFoundError; HTTP 404 on REST), and ListTasks
  lists the caller's own tasks only: it passes;
- ``shared``: every caller gets, cancels, lists the push configs of and lists every task: results are not scoped
  (MUST);
- ``forbidden``: another caller's task is refused as forbidden (HTTP 403; REST: PERMISSION_DENIED), an unknown id
  gets TaskNotFoundError: the refusal reveals that the task exists (MUST NOT).

A task's status message quotes the Authorization header it was created with (an agent that echoes credentials):
a second caller that reads the task reads the first caller's token, which no report may carry.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from aiohttp import web

from tests.agents.cards import valid_card
from tests.agents.server import serve

Mode = Literal["scoped", "shared", "forbidden"]
BEARER = {"securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
          "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}
_NOT_FOUND = {"code": -32001, "message": "Task not found"}
_NOT_CANCELABLE = {"code": -32002, "message": "Task cannot be canceled"}


def _rest_error(status: int, grpc: str, reason: str, message: str) -> web.Response:
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}
    return web.json_response({"error": {"code": status, "status": grpc, "message": message, "details": [info]}},
                             status=status)


@asynccontextmanager
async def scope_agent(mode: Mode, users: dict[str, str]) -> AsyncIterator[str]:
    """Serve the agent; `users` maps bearer tokens to user names. Yields its origin."""
    tasks: dict[str, tuple[str, dict[str, Any]]] = {}  # task id -> (owner, task)

    def caller(request: web.Request) -> str | None:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        return users.get(token) if scheme == "Bearer" else None

    def lookup(user: str, tid: str) -> tuple[str, dict[str, Any] | None]:
        """("ok", task) / ("missing", None) / ("forbidden", None), as the mode answers `user`."""
        owner, task = tasks.get(tid, ("", None))
        if task is None:
            return "missing", None
        if owner == user or mode == "shared":
            return "ok", task
        return ("forbidden" if mode == "forbidden" else "missing"), None

    def visible(user: str, context_id: str | None) -> list[dict[str, Any]]:
        return [t for owner, t in reversed(tasks.values())
                if (owner == user or mode == "shared") and context_id in (None, t["contextId"])]

    def create(request: web.Request, user: str, message: dict[str, Any]) -> dict[str, Any]:
        tid = str(uuid.uuid4())
        task = {"id": tid, "contextId": message.get("contextId") or str(uuid.uuid4()),
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z",
                           "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_AGENT", "parts": [
                               {"text": f"done for {request.headers.get('Authorization', '')}"}]}},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}]}
        tasks[tid] = (user, task)
        return task

    async def card(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        doc = valid_card(f"{origin}/rpc", (f"{origin}/rest", "HTTP+JSON", "1.0"), name=f"scope-{mode}",
                         streaming=False, **BEARER)
        doc["capabilities"]["pushNotifications"] = True
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"s"'})

    def unauthenticated() -> web.Response:
        return web.json_response({"error": "unauthenticated"}, status=401,
                                 headers={"WWW-Authenticate": 'Bearer realm="scope"'})

    async def rpc(request: web.Request) -> web.Response:
        user = caller(request)
        if user is None:
            return unauthenticated()
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}})
        if not isinstance(body, dict):
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid"}})
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}

        def answer(result: Any = None, error: dict[str, Any] | None = None, status: int = 200) -> web.Response:
            doc = {"jsonrpc": "2.0", "id": rid, **({"error": error} if error else {"result": result})}
            return web.json_response(doc, status=status)

        if method == "SendMessage":
            return answer({"task": create(request, user, params.get("message") or {})})
        if method == "ListTasks":
            listed = visible(user, params.get("contextId"))
            return answer({"tasks": [{k: v for k, v in t.items() if k != "artifacts"} for t in listed],
                           "nextPageToken": "", "pageSize": 50, "totalSize": len(listed)})
        if method in ("GetTask", "CancelTask", "ListTaskPushNotificationConfigs"):
            found, task = lookup(user, str(params.get("taskId" if method.startswith("ListTaskPush") else "id")))
            if found == "forbidden":
                return answer(error={"code": -32010, "message": "permission denied"}, status=403)
            if task is None:
                return answer(error=_NOT_FOUND)
            if method == "ListTaskPushNotificationConfigs":
                return answer({"configs": [], "nextPageToken": ""})
            return answer(task) if method == "GetTask" else answer(error=_NOT_CANCELABLE)
        return answer(error={"code": -32601, "message": "Method not found"})

    async def rest_send(request: web.Request) -> web.Response:
        user = caller(request)
        if user is None:
            return unauthenticated()
        return web.json_response({"task": create(request, user, (await request.json()).get("message") or {})})

    async def rest_list(request: web.Request) -> web.Response:
        user = caller(request)
        if user is None:
            return unauthenticated()
        listed = visible(user, request.query.get("contextId"))
        return web.json_response({"tasks": [{k: v for k, v in t.items() if k != "artifacts"} for t in listed],
                                  "nextPageToken": "", "pageSize": 50, "totalSize": len(listed)})

    async def rest_task(request: web.Request) -> web.Response:
        user = caller(request)
        if user is None:
            return unauthenticated()
        tid = request.match_info["id"]
        cancel = request.method == "POST"
        found, task = lookup(user, tid.removesuffix(":cancel"))
        if found == "forbidden":
            return _rest_error(403, "PERMISSION_DENIED", "PERMISSION_DENIED", "permission denied")
        if task is None:
            return _rest_error(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found")
        if cancel:
            return _rest_error(409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", "Task cannot be canceled")
        if request.path.endswith("/pushNotificationConfigs"):
            return web.json_response({"configs": [], "nextPageToken": ""})
        return web.json_response(task)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    app.router.add_post("/rest/message:send", rest_send)
    app.router.add_get("/rest/tasks", rest_list)
    app.router.add_get("/rest/tasks/{id}", rest_task)
    app.router.add_post("/rest/tasks/{id}", rest_task)  # {id}:cancel (aiohttp cannot split on the colon)
    app.router.add_get("/rest/tasks/{id}/pushNotificationConfigs", rest_task)
    async with serve(app) as origin:
        yield origin
