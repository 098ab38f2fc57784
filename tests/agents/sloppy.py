"""A sloppy A2A 1.0 agent: it works for the basic probe, and breaks the conformance rules you name.

`broken` names what to get wrong; everything else behaves correctly, so each suite check can be
shown to fail on its own. Used by the test that proves every catalogued check can fail.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    "push", "extended_card", "error_info", "context_inferred", "context_mismatch", "content_type", "unknown_fields",
    "extension", "extended_card_auth", "zoneless", "extensions_echo",
})  # not in ALL, used alone: "same_task_id", "version_on_send", "patch_version" (A2A-Version 1.0.1 refused, as a
# version 1.0 is not); and, as ALL drops contextIds and cancels nothing:
# "list_tasks" (no filter, oldest first, artifacts), "list_filter" (the status filter ignored), "list_pagination"
# (pageSize ignored), "history_on_send" (configuration.historyLength ignored), "history_kept" (no history),
# "history_order" (the follow-up first, texts changed), "history_empty" (GetTask at historyLength 0 answers
# "history": [] instead of leaving the field out), "offset_stamp" (GetTask's status timestamp at +00:00, not
# 'Z'), "media_type" (every JSON-RPC answer as text/plain), "required_gap" (GetTask's artifacts without their
# REQUIRED artifactId), "stream_zoneless" (the stream's status update with a timestamp without a zone),
# "untyped_details" (TaskNotFoundError's error.data holds an object without @type beside its ErrorInfo),
# "free_data" (JSON-RPC's own errors carry a non-array error.data: -32601 {"method": ...} as 1.0.0 §9.5's example,
# -32600 and -32602 a string, as a2a-sdk 1.0.0 does), "free_data_a2a" (TaskNotFoundError's error.data an object),
# "multi_stream" (only the last SubscribeToTask stream gets the task's events), "stream_bound" (closing a task's
# SendStreamingMessage stream cancels the task), "response_id" (the parse error answered with no "id" member, every
# other error with "id": null: a serializer that leaves nulls out, and one that loses the request's id),
# "response_id_other" (the parse error answered with "id": 0, every other error with another request's id)
FOLLOW_TIMEOUT = 10.0  # a live subscription of a task nobody ends closes after this


_MESSAGE_FIELDS = frozenset({"messageId", "role", "parts", "contextId", "taskId", "metadata", "extensions",
                             "referenceTaskIds"})


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
        self.followers: dict[str, list[asyncio.Queue[dict[str, Any] | None]]] = {}  # task id -> live streams
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

    def _remember(self, task: dict[str, Any], msg: dict[str, Any]) -> None:
        """Append a user message to the task's history, as sent (or, broken, first and with its text changed)."""
        if "history_kept" in self.broken:
            return
        kept = {**msg, "taskId": task["id"], "contextId": task["contextId"]}
        if "history_order" in self.broken:
            kept["parts"] = [{"text": "something else"}]
            task["history"].insert(0, kept)
        else:
            task["history"].append(kept)

    def _task(self, text: str, state: str, context_id: str | None, msg: dict[str, Any]) -> dict[str, Any]:
        tid = "the-one-task" if "same_task_id" in self.broken else str(uuid.uuid4())
        task: dict[str, Any] = {"id": tid, "contextId": context_id or str(uuid.uuid4()),
                                "status": {"state": f"TASK_STATE_{state}"}, "history": []}
        self._remember(task, msg)
        if "history_kept" not in self.broken:
            task["history"].append({"role": "ROLE_AGENT", "messageId": str(uuid.uuid4()),
                                    "parts": [{"text": f"echo: {text}"}]})
        if state == "COMPLETED" and "no_artifact" not in self.broken:
            task["artifacts"] = [{"artifactId": str(uuid.uuid4()), "parts": [{"text": f"echo: {text}"}]}]
        self.tasks[tid] = task
        return task

    def _send(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        msg = params.get("message") or {}
        if (not msg.get("messageId") or not msg.get("parts")) and "invalid_params" not in self.broken:
            return None, {"code": -32602, "message": "message needs messageId and parts",
                          **({"data": "Field required: messageId"} if "free_data" in self.broken else {})}
        unknown = (set(params) - {"message", "configuration", "metadata", "tenant"}) | (set(msg) - _MESSAGE_FIELDS)
        if unknown and "unknown_fields" in self.broken:  # a strict parser: unknown fields are refused
            return None, {"code": -32602, "message": f"unknown fields {sorted(unknown)}"}
        media = [p.get("mediaType") for p in msg.get("parts") or [] if isinstance(p, dict) and p.get("mediaType")]
        if any(m != "text/plain" for m in media) and "content_type" not in self.broken:
            return None, {"code": -32005, "message": f"media types {media} are not accepted"}
        text = " ".join(p.get("text", "") for p in msg.get("parts") or [] if isinstance(p, dict))
        tid = msg.get("taskId")
        if tid:
            known = self.tasks.get(tid)
            if known is None and "unknown_task_message" not in self.broken:
                return None, self._not_found(tid)
            cid = msg.get("contextId")
            if known is not None and cid and cid != known["contextId"] and "context_mismatch" not in self.broken:
                return None, {"code": -32602, "message": "contextId is not the task's"}
            if known is not None and not cid and "context_inferred" in self.broken:
                known["contextId"] = str(uuid.uuid4())  # a new context instead of the task's own
            if known is not None and known["status"]["state"] == "TASK_STATE_INPUT_REQUIRED":
                known["status"]["state"] = "TASK_STATE_COMPLETED"
                known["artifacts"] = [{"artifactId": "a", "parts": [{"text": "done"}]}]
                self._remember(known, msg)
                return {"task": self._limited(known, params)}, None
            if known is not None and "message_to_terminal" not in self.broken:
                return None, {"code": -32004, "message": "task is terminal"}
        context = None if "context" in self.broken else msg.get("contextId")
        immediate = (params.get("configuration") or {}).get("returnImmediately") is True
        if "slow" in text and "cancel" not in self.broken:
            return {"task": self._task(text, "WORKING", context, msg)}, None
        if "input" in text and "input_required" not in self.broken:
            return {"task": self._task(text, "INPUT_REQUIRED", context, msg)}, None
        state = "SUBMITTED" if immediate and "return_immediately" not in self.broken else "COMPLETED"
        task = self._task(text, state, context, msg)
        if state == "SUBMITTED":
            task["status"]["state"] = "TASK_STATE_COMPLETED"  # done by the next GetTask
            return {"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}}, None
        return {"task": self._limited(task, params)}, None

    def _limited(self, task: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """SendMessage's configuration.historyLength applied to the returned task."""
        n = (params.get("configuration") or {}).get("historyLength")
        if not isinstance(n, int) or "history_on_send" in self.broken:
            return task
        return {**task, "history": task["history"][-n:]} if n else {k: v for k, v in task.items() if k != "history"}

    def _list(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tasks = list(self.tasks.values())
        if "list_tasks" not in self.broken:  # broken: no filter, oldest first, artifacts always
            tasks.reverse()  # newest first: the sloppy agent's tasks never change after their last turn
            tasks = [t for t in tasks if params.get("contextId") in (None, t["contextId"])]
            if "list_filter" not in self.broken:
                tasks = [t for t in tasks if params.get("status") in (None, t["status"]["state"])]
            if params.get("includeArtifacts") is not True:
                tasks = [{k: v for k, v in t.items() if k != "artifacts"} for t in tasks]
        n = params.get("historyLength")
        if isinstance(n, int):
            tasks = [{**t, "history": t.get("history", [])[-n:] if n else []} for t in tasks]
        start = int(params.get("pageToken") or 0)
        size = len(tasks) if "list_pagination" in self.broken else int(params.get("pageSize") or 50)
        page = tasks[start:start + size]
        more = start + size < len(tasks)
        return {"tasks": page, "nextPageToken": str(start + size) if more else "", "pageSize": size,
                "totalSize": len(tasks)}, None

    def _not_found(self, tid: str) -> dict[str, Any]:
        err: dict[str, Any] = {"code": -32001, "message": f"task {tid} not found"}
        if "error_info" not in self.broken:
            err["data"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                            "domain": "a2a-protocol.org"}]
            if "untyped_details" in self.broken:  # the 1.0.0 text's own example puts such context in data
                err["data"].append({"taskId": tid})
            if "free_data_a2a" in self.broken:
                err["data"] = {"taskId": tid}
        return err

    def _get(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        tid = str(params.get("id"))
        task = self.tasks.get(tid)
        if task is not None and "zoneless" in self.broken:  # a timestamp the official clients cannot parse
            task = {**task, "status": {**task["status"], "timestamp": "2026-03-01T10:00:00"}}
        elif task is not None and "offset_stamp" in self.broken:  # one they parse, but 1.0 §5.6.1 forbids
            task = {**task, "status": {**task["status"], "timestamp": "2026-03-01T10:00:00+00:00"}}
        if task is not None and "required_gap" in self.broken:  # json_format reads it; 1.0 §5.7 REQUIRED forbids
            task = {**task, "artifacts": [{**a, "artifactId": None} for a in task.get("artifacts") or []]
                    or [{"parts": [{"text": "x"}]}]}
        if task is None:
            if "task_not_found" in self.broken:
                return next(iter(self.tasks.values()), {"id": "x", "contextId": "c",
                                                        "status": {"state": "TASK_STATE_COMPLETED"}}), None
            return None, self._not_found(tid)
        if "get_task_id" in self.broken:
            return {**task, "id": "some-other-task"}, None
        n = params.get("historyLength")
        if isinstance(n, int) and "history_length" not in self.broken:
            if n == 0:  # 1.0 §3.2.4: the field SHOULD be omitted ("history_empty": an empty list instead)
                kept = {k: v for k, v in task.items() if k != "history"}
                return (kept | {"history": []} if "history_empty" in self.broken else kept), None
            return {**task, "history": task["history"][-n:]}, None
        return task, None

    def _cancel(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        task = self.tasks.get(str(params.get("id")))
        if task is None:
            return None, self._not_found(str(params.get("id")))
        terminal = task["status"]["state"] in ("TASK_STATE_COMPLETED", "TASK_STATE_CANCELED")
        if terminal and "not_cancelable" not in self.broken:
            return None, {"code": -32002, "message": "not cancelable"}
        task["status"]["state"] = "TASK_STATE_CANCELED"
        followers = self.followers.pop(task["id"], [])
        update = {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"], "status": task["status"]}}
        for i, queue in enumerate(followers):  # broken multi_stream: only the last stream hears of it
            last = i == len(followers) - 1
            queue.put_nowait(update if last or "multi_stream" not in self.broken else None)
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
            if "response_id" in self.broken:  # no "id" member at all (JSON-RPC 2.0 §5: REQUIRED, null here)
                return web.json_response({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse"}})
            if "response_id_other" in self.broken:  # a value where null is due
                return web.json_response({"jsonrpc": "2.0", "id": 0, "error": {"code": -32700, "message": "parse"}})
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
        version = request.headers.get("A2A-Version")
        patched = (version or "").startswith("1.0.") and "patch_version" not in self.broken  # 1.0.1 is 1.0 (§3.6)
        supported = version == "1.0" or patched
        if not supported and "version" not in self.broken:
            return self._reply(rid, None, {"code": -32009, "message": f"version {version} not supported"})
        if "version_on_send" in self.broken and method == "SendMessage":
            return self._reply(rid, None, {"code": -32009, "message": "SendMessage needs another version"})
        if method is None:
            if "invalid_request" in self.broken:
                return self._reply(rid, {}, None)
            return self._reply(rid, None, {"code": -32600, "message": "invalid request",
                                           **({"data": "no method"} if "free_data" in self.broken else {})})
        activated = {u.strip() for u in request.headers.get("A2A-Extensions", "").split(",")}
        missing = [u for u in self._required_extensions() if u not in activated]
        if missing and method == "SendMessage" and "extension" not in self.broken:
            return self._reply(rid, None, {"code": -32008, "message": f"extensions {missing} are required"})
        if method in ("SendStreamingMessage", "SubscribeToTask"):
            return await self._stream(request, rid, method, params)
        handler = {"SendMessage": self._send, "GetTask": self._get, "CancelTask": self._cancel,
                   "ListTasks": self._list}.get(method)
        if handler is not None:
            resp = self._reply(rid, *handler(params))
            echo = sorted(activated & set(self._required_extensions()))
            if echo and "extensions_echo" not in self.broken:
                resp.headers["A2A-Extensions"] = ", ".join(echo)  # the activated ones, as the spec asks
            return resp
        if method == "CreateTaskPushNotificationConfig" and "push" in self.broken:
            return self._reply(rid, params, None)
        if method == "CreateTaskPushNotificationConfig":
            return self._reply(rid, None, {"code": -32003, "message": "push not supported"})
        caps = self.card().get("capabilities") or {}
        if method == "GetExtendedAgentCard" and caps.get("extendedAgentCard") is True:
            authorized = request.headers.get("Authorization") == "Bearer sloppy-token"
            if authorized or "extended_card_auth" in self.broken:
                return self._reply(rid, {**self.card(), "description": "the extended card"}, None)
            return web.Response(status=401, headers={"WWW-Authenticate": "Bearer"}, text="credentials needed")
        if method == "GetExtendedAgentCard":
            if "extended_card" in self.broken:
                return self._reply(rid, self.card(), None)
            return self._reply(rid, None, {"code": -32004, "message": "no extended card"})
        if "unknown_method" in self.broken:
            return self._reply(rid, {}, None)
        return self._reply(rid, None, {"code": -32601, "message": "method not found",
                                       **({"data": {"method": method}} if "free_data" in self.broken else {})})

    def _required_extensions(self) -> list[str]:
        exts = (self.card().get("capabilities") or {}).get("extensions") or []
        return [e["uri"] for e in exts if e.get("required")]

    def _reply(self, rid: Any, result: Any, error: dict[str, Any] | None) -> web.Response:
        if error is not None and "response_id" in self.broken:
            rid = None
        elif error is not None and "response_id_other" in self.broken:
            rid = "another-request"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        body |= {"error": error} if error is not None else {"result": result}
        return web.json_response(body, content_type="text/plain" if "media_type" in self.broken else "application/json")

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
            if not terminal:
                return await self._follow(request, rid, task)
            events = [{"task": task}]
        else:
            result, error = self._send(params)
            if error is not None:
                return self._reply(rid, None, error)
            task = result["task"]
            status = task["status"]
            if "stream_zoneless" in self.broken:  # an update the official clients cannot parse (stream.schema)
                status = {**status, "timestamp": "2026-03-01T10:00:00"}
            events = [{"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}},
                      {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"], "status": status}}]
            if task["status"]["state"] == "TASK_STATE_WORKING":  # a slow task: the stream stays with it
                return await self._follow(request, rid, task, events, origin=True)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for ev in events:
            await resp.write(f"data: {json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': ev})}\n\n".encode())
        await resp.write_eof()
        return resp

    async def _follow(self, request: web.Request, rid: Any, task: dict[str, Any],
                      first: list[dict[str, Any]] | None = None, *, origin: bool = False) -> web.StreamResponse:
        """A live stream of a running task: `first` (the Task), then the updates CancelTask broadcasts, to the
        terminal one. Broken "stream_bound": the task is canceled when its SendStreamingMessage stream closes."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.followers.setdefault(task["id"], []).append(queue)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        pending: list[dict[str, Any] | None] = list(first or [{"task": task}])
        loop = asyncio.get_running_loop()
        give_up = loop.time() + FOLLOW_TIMEOUT
        with contextlib.suppress(ConnectionError):
            while loop.time() < give_up:
                if pending:
                    event = pending.pop(0)
                    if event is None:
                        break
                    await resp.write(f"data: {json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': event})}\n\n"
                                     .encode())
                    state = (event.get("statusUpdate") or {}).get("status", {}).get("state")
                    if state in ("TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"):
                        break
                    continue
                if request.transport is None or request.transport.is_closing():  # the client went away
                    if origin and "stream_bound" in self.broken:
                        self._cancel({"id": task["id"]})
                    return resp
                with contextlib.suppress(TimeoutError):
                    pending.append(await asyncio.wait_for(queue.get(), 0.05))
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
