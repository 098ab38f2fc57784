"""One agent on two bindings, JSON-RPC and gRPC, whose gRPC side disagrees with its JSON-RPC side.

Both bindings serve one task store from one process: the JSON-RPC side follows the spec; the gRPC side
(grpc.aio with a2a-sdk's generated servicer) deviates as the `faults` say, so a test can assert exactly what
`interop.bindings_agree` reports and which binding it names. Loopback, ephemeral ports.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from a2a.types import a2a_pb2, a2a_pb2_grpc
from aiohttp import web
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2

from tests.agents.cards import valid_card
from tests.agents.server import serve

FAULTS = frozenset({
    "get_unknown_internal",  # GetTask of an unknown id: INTERNAL, no ErrorInfo (JSON-RPC: TaskNotFoundError)
    "get_unknown_other_name",  # ... FAILED_PRECONDITION with ErrorInfo UNSUPPORTED_OPERATION
    "cancel_terminal_ok",  # CancelTask of a COMPLETED task: OK with the task CANCELED (JSON-RPC: -32002)
    "data_artifact",  # SendMessage's artifact carries a data part instead of the text part
    "shout",  # SendMessage's artifact text is upper-cased (JSON-RPC echoes it as sent)
    "task_lost",  # SendMessage answers WORKING, then GetTask of that very task is NOT_FOUND
    # push without the capability, named by ErrorInfo: the 1.0.0 mapping (UNIMPLEMENTED) or the 1.0.1 one
    # (FAILED_PRECONDITION); without either, the servicer's default UNIMPLEMENTED with no details
    "push_unsupported_100", "push_unsupported_101",
    "push_unsupported_unmapped",  # ... named by ErrorInfo but sent as INVALID_ARGUMENT, in neither mapping
    "no_error_info",  # TaskNotFoundError without an ErrorInfo on both sides: gRPC NOT_FOUND, JSON-RPC -32001
    # the card declares Bearer security; JSON-RPC refuses a call without "Bearer t" (401), gRPC serves anyone
    "auth_jsonrpc_only",
})


@dataclass
class _Store:
    random_text: bool = False  # every answer carries a fresh nonce: a nondeterministic agent (an LLM)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def complete(self, message: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(p.get("text", "") for p in message.get("parts") or [] if isinstance(p, dict))
        if self.random_text:
            text = f"{text} {uuid.uuid4().hex[:8]}"
        task_id = str(uuid.uuid4())
        task = {"id": task_id, "contextId": message.get("contextId") or str(uuid.uuid4()),
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": str(uuid.uuid4()), "name": "result",
                               "parts": [{"text": f"echo: {text}"}]}]}
        self.tasks[task_id] = task
        return task


def _status(code: grpc.StatusCode, message: str, reason: str | None) -> tuple[grpc.StatusCode, str, bytes | None]:
    if reason is None:
        return code, message, None
    packed = any_pb2.Any()
    packed.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="a2a-protocol.org"))
    return code, message, status_pb2.Status(code=code.value[0], message=message, details=[packed]).SerializeToString()


async def _abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str,
                 reason: str | None = None) -> None:
    code, message, details = _status(code, message, reason)
    if details is not None:
        context.set_trailing_metadata((("grpc-status-details-bin", details),))
    await context.abort(code, message)


class _Servicer(a2a_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
    def __init__(self, store: _Store, faults: frozenset[str]) -> None:
        self.store = store
        self.faults = faults
        self.lost: set[str] = set()

    async def SendMessage(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        task = self.store.complete(json_format.MessageToDict(request.message))
        if "data_artifact" in self.faults:
            task["artifacts"][0]["parts"] = [{"data": {"text": task["artifacts"][0]["parts"][0]["text"]}}]
        if "shout" in self.faults:
            task["artifacts"][0]["parts"][0]["text"] = task["artifacts"][0]["parts"][0]["text"].upper()
        if "task_lost" in self.faults:
            task = task | {"status": {"state": "TASK_STATE_WORKING"}, "artifacts": []}
            self.lost.add(task["id"])
        return a2a_pb2.SendMessageResponse(task=json_format.ParseDict(task, a2a_pb2.Task()))

    async def GetTask(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        task = self.store.tasks.get(request.id)
        if task is None or request.id in self.lost:
            if request.id not in self.lost and "get_unknown_internal" in self.faults:
                await _abort(context, grpc.StatusCode.INTERNAL, "lookup failed")
            if request.id not in self.lost and "get_unknown_other_name" in self.faults:
                await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "not here", "UNSUPPORTED_OPERATION")
            await _abort(context, grpc.StatusCode.NOT_FOUND, f"task {request.id} not found",
                         None if "no_error_info" in self.faults else "TASK_NOT_FOUND")
        return json_format.ParseDict(task, a2a_pb2.Task())

    async def CreateTaskPushNotificationConfig(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        if "push_unsupported_100" in self.faults:
            await _abort(context, grpc.StatusCode.UNIMPLEMENTED, "push is not supported",
                         "PUSH_NOTIFICATION_NOT_SUPPORTED")
        if "push_unsupported_101" in self.faults:
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "push is not supported",
                         "PUSH_NOTIFICATION_NOT_SUPPORTED")
        if "push_unsupported_unmapped" in self.faults:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "push is not supported",
                         "PUSH_NOTIFICATION_NOT_SUPPORTED")
        await _abort(context, grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")

    async def CancelTask(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        task = self.store.tasks.get(request.id)
        if task is None:
            await _abort(context, grpc.StatusCode.NOT_FOUND, "no such task", "TASK_NOT_FOUND")
            raise AssertionError("unreachable")
        if "cancel_terminal_ok" in self.faults:
            return json_format.ParseDict(task | {"status": {"state": "TASK_STATE_CANCELED"}}, a2a_pb2.Task())
        await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, "task is terminal", "TASK_NOT_CANCELABLE")
        raise AssertionError("unreachable")


def _jsonrpc_app(store: _Store, grpc_url: str, faults: frozenset[str] = frozenset()) -> web.Application:
    def error(rid: Any, code: int, message: str, reason: str) -> web.Response:
        data = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]
        err = {"code": code, "message": message} if "no_error_info" in faults else {"code": code, "message": message,
                                                                                     "data": data}
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": err})

    async def rpc(request: web.Request) -> web.Response:
        if "auth_jsonrpc_only" in faults and request.headers.get("Authorization") != "Bearer t":
            return web.json_response({"error": "unauthenticated"}, status=401, headers={"WWW-Authenticate": "Bearer"})
        body = await request.json()
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
        if method == "SendMessage":
            task = store.complete(params["message"])
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": {"task": task}})
        task = store.tasks.get(str(params.get("id", "")))
        if method in ("GetTask", "CancelTask") and task is None:
            return error(rid, -32001, "Task not found", "TASK_NOT_FOUND")
        if method == "GetTask":
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": task})
        if method == "CancelTask":
            return error(rid, -32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE")
        return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method"}})

    async def card(request: web.Request) -> web.Response:
        doc = valid_card(f"http://{request.host}/rpc", (grpc_url, "GRPC", "1.0"), name="grpc-faults", streaming=False)
        if "auth_jsonrpc_only" in faults:
            doc |= {"securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                    "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]}
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"g"'})

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_post("/rpc", rpc)
    return app


@asynccontextmanager
async def grpc_fault_agent(*faults: str, random_text: bool = False) -> AsyncIterator[str]:
    """Serve the agent (JSON-RPC at /rpc, gRPC on its own port); yields the origin of its card."""
    unknown = set(faults) - FAULTS
    if unknown:
        raise ValueError(f"unknown gRPC faults {sorted(unknown)}; known: {sorted(FAULTS)}")
    store = _Store(random_text=random_text)
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(_Servicer(store, frozenset(faults)), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with serve(_jsonrpc_app(store, f"http://127.0.0.1:{port}", frozenset(faults))) as origin:
            yield origin
    finally:
        await server.stop(grace=0.2)
