"""A 1.0 agent that declares push notifications and gets one push rule wrong, by name.

Faults (`PushFault.fault`):
  none           correct: delivers WORKING then COMPLETED with the config's Authorization
  never          accepts the config, never delivers
  no_terminal    delivers WORKING only
  out_of_order   delivers COMPLETED, then WORKING
  no_token       delivers without Authorization and without X-A2A-Notification-Token
  token_only     delivers with the token header but without the Authorization the config asked for
  wrong_task     delivers updates naming another task
  bad_payload    delivers the bare 0.3 Task instead of a 1.0 StreamResponse
  not_supported  declares push, but answers PushNotificationNotSupportedError (-32003)
  broken_config  delivers correctly; get returns another url, list is empty, a second delete fails, a config
                 for an unknown task is accepted
  delete_twice   the second delete of a config gets TaskNotFoundError (1.0 §3.1.10: delete MUST be idempotent)
  get_deleted    delete answers success but keeps the config: get still returns it (1.0 §3.1.8: get MUST fail for
                 a config that does not exist)
Deliveries go only to the URL the probe registered (loopback in tests).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp import web

from tests.agents.cards import valid_card
from tests.agents.server import serve

FAULTS = ("none", "never", "no_terminal", "out_of_order", "no_token", "token_only", "wrong_task", "bad_payload",
          "not_supported", "broken_config", "delete_twice", "get_deleted")


class PushFault:
    def __init__(self, fault: str = "none") -> None:
        assert fault in FAULTS, fault
        self.fault = fault
        self.origin = ""
        self.tasks: dict[str, dict[str, Any]] = {}
        self.configs: dict[str, dict[str, dict[str, Any]]] = {}  # task id -> config id -> config
        self.posted: list[str] = []  # the webhook URLs this agent called
        self._pending: set[asyncio.Task[None]] = set()

    def card(self) -> dict[str, Any]:
        return valid_card(f"{self.origin}/rpc", name=f"push-{self.fault}", description="push fault agent",
                          capabilities={"streaming": False, "pushNotifications": True})

    async def card_handler(self, _: web.Request) -> web.Response:
        return web.json_response(self.card(), headers={"Cache-Control": "max-age=60", "ETag": '"p"'})

    # ---- JSON-RPC

    async def rpc(self, request: web.Request) -> web.Response:
        body = await request.json()
        rid, method, params = body.get("id"), body.get("method"), body.get("params") or {}
        handler = {"SendMessage": self._send, "GetTask": self._get_task,
                   "CreateTaskPushNotificationConfig": self._create, "GetTaskPushNotificationConfig": self._get,
                   "ListTaskPushNotificationConfigs": self._list,
                   "DeleteTaskPushNotificationConfig": self._delete}.get(method)
        if handler is None:
            return _reply(rid, error={"code": -32601, "message": "Method not found"})
        result, error = handler(params)
        return _reply(rid, result, error)

    def _send(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        config = (params.get("configuration") or {}).get("taskPushNotificationConfig")
        if config is not None and self.fault == "not_supported":
            return None, _NOT_SUPPORTED
        tid = str(uuid.uuid4())
        msg = params.get("message") or {}
        task = {"id": tid, "contextId": str(uuid.uuid4()), "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "echo"}]}], "history": [msg]}
        self.tasks[tid] = task
        if config is not None:
            self._store(tid, config)
            job = asyncio.create_task(self._deliver(tid, task["contextId"], config))
            self._pending.add(job)
            job.add_done_callback(self._pending.discard)
            return {"task": {**task, "status": {"state": "TASK_STATE_SUBMITTED"}}}, None
        return {"task": task}, None

    def _get_task(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        task = self.tasks.get(str(params.get("id")))
        return (task, None) if task else (None, _NOT_FOUND)

    def _store(self, tid: str, config: dict[str, Any]) -> dict[str, Any]:
        stored = {**config, "id": str(uuid.uuid4()), "taskId": tid}
        self.configs.setdefault(tid, {})[stored["id"]] = stored
        return stored

    def _create(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        if self.fault == "not_supported":
            return None, _NOT_SUPPORTED
        tid = str(params.get("taskId"))
        if tid not in self.tasks and self.fault != "broken_config":
            return None, _NOT_FOUND
        return self._store(tid, {k: v for k, v in params.items() if k != "taskId"}), None

    def _get(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        config = self.configs.get(str(params.get("taskId")), {}).get(str(params.get("id")))
        if config is None:
            return None, _NOT_FOUND
        return ({**config, "url": "https://elsewhere.example/hook"} if self.fault == "broken_config" else config), None

    def _list(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        configs = list(self.configs.get(str(params.get("taskId")), {}).values())
        return {"configs": [] if self.fault == "broken_config" else configs, "nextPageToken": ""}, None

    def _delete(self, params: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        stored = self.configs.get(str(params.get("taskId")), {})
        removed = stored.get(str(params.get("id"))) if self.fault == "get_deleted" else stored.pop(
            str(params.get("id")), None)
        if removed is None and self.fault in ("broken_config", "delete_twice"):
            return None, _NOT_FOUND
        return {}, None

    # ---- delivery

    async def _deliver(self, tid: str, cid: str, config: dict[str, Any]) -> None:
        if self.fault == "never":
            return
        states = {"no_terminal": ["WORKING"], "out_of_order": ["COMPLETED", "WORKING"]}.get(
            self.fault, ["WORKING", "COMPLETED"])
        auth = config.get("authentication") or {}
        headers = {"Content-Type": "application/a2a+json"}
        if self.fault not in ("no_token", "token_only"):
            headers["Authorization"] = f"{auth.get('scheme')} {auth.get('credentials')}"
        if self.fault == "token_only":
            headers["X-A2A-Notification-Token"] = str(config.get("token"))
        named = "someone-elses-task" if self.fault == "wrong_task" else tid
        async with aiohttp.ClientSession() as session:
            for state in states:
                await asyncio.sleep(0.05)
                if self.fault == "bad_payload":
                    body: dict[str, Any] = {"kind": "task", "id": named, "contextId": cid,
                                            "status": {"state": state.lower()}}
                else:
                    body = {"statusUpdate": {"taskId": named, "contextId": cid,
                                             "status": {"state": f"TASK_STATE_{state}"}}}
                self.posted.append(config["url"])
                async with session.post(config["url"], data=json.dumps(body), headers=headers) as resp:
                    await resp.read()


_NOT_FOUND = {"code": -32001, "message": "Task not found"}
_NOT_SUPPORTED = {"code": -32003, "message": "Push Notification is not supported"}


def _reply(rid: Any, result: Any = None, error: dict[str, Any] | None = None) -> web.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    body |= {"error": error} if error is not None else {"result": result}
    return web.json_response(body)


@asynccontextmanager
async def push_fault_agent(agent: PushFault) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", agent.card_handler)
    app.router.add_post("/rpc", agent.rpc)
    try:
        async with serve(app) as origin:
            agent.origin = origin
            yield origin
    finally:
        for job in list(agent._pending):
            job.cancel()
