"""A small HTTP+JSON (REST) 1.0 agent whose A2A errors follow the 1.0.0 or the 1.0.1 status mapping (spec §5.4).

The two mappings differ on HTTP for TaskNotCancelableError (1.0.0: 409, 1.0.1: 400) and
ContentTypeNotSupportedError (1.0.0: 415, 1.0.1: 400); `mixed` answers the first the 1.0.0 way and the second
the 1.0.1 way; `unmapped` answers both with 422, which neither mapping gives (errors.error_status fails). With
`untyped`, every error's details carry a second object without @type (errors.details_typed fails). With
`version="0.3"` it is a 0.3 REST agent (routes under /v1, the 0.3 card) whose errors are JSON-RPC error objects
(`{code, message}`, @a2a-js/sdk 0.3's REST form) at the mapping's statuses. Tasks complete at once; a part whose
mediaType is not text/plain is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from probe.wire.a2a_errors import ERRORS
from tests.agents.cards import valid_card
from tests.agents.server import serve

_STATUS = {  # mapping -> (TaskNotCancelable, ContentTypeNotSupported) HTTP statuses
    "1.0.0": (409, 415), "1.0.1": (400, 400), "mixed": (409, 400), "unmapped": (422, 422),
}
_GRPC_NAME = {400: "FAILED_PRECONDITION", 404: "NOT_FOUND", 409: "ABORTED", 415: "INVALID_ARGUMENT"}


def _error_body(status: int, reason: str, message: str, untyped: bool = False) -> web.Response:
    info: dict[str, Any] = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                            "domain": "a2a-protocol.org"}
    details = [info, {"hint": "see the docs"}] if untyped else [info]
    body = {"error": {"code": status, "status": _GRPC_NAME.get(status, "UNKNOWN"), "message": message,
                      "details": details}}
    return web.json_response(body, status=status)


@asynccontextmanager
async def rest_mapping_agent(mapping: str, *, untyped: bool = False, version: str = "1.0") -> AsyncIterator[str]:
    """Serve the agent; yields its origin (the card at the well-known path, the interface at /rest)."""
    cancel_status, media_status = _STATUS[mapping]
    v03 = version == "0.3"

    def _error(status: int, reason: str, message: str) -> web.Response:
        if v03:
            code = next(e.jsonrpc for e in ERRORS if e.reason == reason)
            return web.json_response({"code": code, "message": message}, status=status)
        return _error_body(status, reason, message, untyped)

    tasks: dict[str, dict[str, Any]] = {}

    async def card(request: web.Request) -> web.Response:
        if v03:
            return web.json_response({
                "protocolVersion": "0.3.0", "name": f"rest-{mapping}-03", "description": "a 0.3 REST agent",
                "version": "1", "url": f"http://{request.host}/rest", "preferredTransport": "HTTP+JSON",
                "capabilities": {"streaming": False}, "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]})
        doc = valid_card((f"http://{request.host}/rest", "HTTP+JSON", "1.0"), name=f"rest-{mapping}",
                         streaming=False)
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"m"'})

    async def send(request: web.Request) -> web.Response:
        message = (await request.json()).get("message") or {}
        parts = message.get("parts") or []
        if any(isinstance(p, dict) and p.get("mediaType", "text/plain") != "text/plain" for p in parts):
            return _error(media_status, "CONTENT_TYPE_NOT_SUPPORTED", "only text/plain is accepted")
        if message.get("taskId"):
            known = message["taskId"] in tasks
            return (_error(400, "UNSUPPORTED_OPERATION", "the task is terminal") if known
                    else _error(404, "TASK_NOT_FOUND", "no such task"))
        tid = str(uuid.uuid4())
        task = {"id": tid, "contextId": message.get("contextId") or str(uuid.uuid4()),
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}]}
        tasks[tid] = task
        return web.json_response({"task": task})

    async def get_task(request: web.Request) -> web.Response:
        task = tasks.get(request.match_info["id"])
        return web.json_response(task) if task else _error(404, "TASK_NOT_FOUND", "no such task")

    async def cancel(request: web.Request) -> web.Response:
        tid = request.match_info["id"].removesuffix(":cancel")
        if tid not in tasks:
            return _error(404, "TASK_NOT_FOUND", "no such task")
        return _error(cancel_status, "TASK_NOT_CANCELABLE", "the task is terminal")

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    base = "/rest/v1" if v03 else "/rest"
    app.router.add_post(f"{base}/message:send", send)
    app.router.add_get(f"{base}/tasks/{{id}}", get_task)
    app.router.add_post(f"{base}/tasks/{{id}}", cancel)  # {id}:cancel (aiohttp cannot split on the colon)
    async with serve(app) as origin:
        yield origin
