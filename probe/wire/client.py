"""THE A2A client: every call the engine's steps and the conformance suite make goes through it.

It speaks A2A operations (send, get, list, cancel, subscribe, stream, poll until terminal, push config,
extended card) over whichever binding it is given, builds the version's request shapes, and reads
answers back into dialect `Item`s. It never judges: the engine and the suite decide what an answer
means. The one raw hatch, `jsonrpc_raw`, exists for the JSON-RPC-only checks (parse error, invalid
request, unknown method) and refuses every other binding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from probe.logs import new_probe_id
from probe.wire import push as push_shapes
from probe.wire.bindings.base import Answer, AnswerStream, Binding, Headers, Op
from probe.wire.bindings.jsonrpc import JsonRpcBinding
from probe.wire.dialects import INTERRUPTED, TERMINAL, Dialect, Item
from probe.wire.http import Deadline, WireError

Hook = Callable[[str, Answer | None, WireError | None], None]
Reply = tuple[Answer, Item | None]
Webhook = tuple[str, str, str]  # (url, token, Bearer credentials) of a push config

POLL_START, POLL_MAX = 0.05, 2.0


class NotJsonRpc(Exception):
    """The raw JSON-RPC hatch was used on another binding."""


class PollTimeout(Exception):
    def __init__(self, last: Item | None) -> None:
        super().__init__("the task was not terminal before the deadline")
        self.last = last


class A2AClient:
    def __init__(self, binding: Binding, deadline: Deadline) -> None:
        self.binding = binding
        self.deadline = deadline
        self.hooks: list[Hook] = []  # told about every answer (or its WireError), e.g. to count 5xx

    @property
    def dialect(self) -> Dialect:
        return self.binding.dialect

    @property
    def v1(self) -> bool:
        return self.dialect.version == "1.0"

    def method(self, op: Op) -> str:
        return self.binding.method(op)

    # ---- request shapes

    def message(self, text: str, *, task_id: str | None = None, context_id: str | None = None) -> dict[str, Any]:
        return self.dialect.user_message(text, new_probe_id(), task_id, context_id)  # a uuid4, pooled random bytes

    def send_params(self, message: dict[str, Any], *, immediate: bool | None = None,
                    push: Webhook | None = None, history_length: int | None = None) -> dict[str, Any]:
        """1.0 returnImmediately (default: wait); 0.3 blocking, sent explicitly (the 0.3 default is unclear);
        `push` asks for push notifications to that webhook (1.0 taskPushNotificationConfig, 0.3
        pushNotificationConfig); `history_length` limits the history of the returned task."""
        params: dict[str, Any] = {"message": message}
        config: dict[str, Any] = {}
        if self.v1:
            if immediate:
                config["returnImmediately"] = True
        elif self.dialect.version == "0.3":
            config["blocking"] = not immediate
        if history_length is not None:
            config["historyLength"] = history_length
        if push is not None:
            config |= push_shapes.inline(self.dialect, *push)
        if config:
            params["configuration"] = config
        return params

    # ---- reading

    def item(self, answer: Answer, *, bare_task: bool = False) -> Item | None:
        """The answer's result as an Item; None when it carries no result. ProtoJSON GetTask/CancelTask (1.0, and
        the 0.3 proto) return a bare Task, which `bare_task` wraps so one parser reads every shape."""
        if answer.error is not None or not answer.has_result:
            return None
        result = {"task": answer.result} if bare_task and self.dialect.proto else answer.result
        return self.dialect.result_item(result)

    # ---- unary operations

    async def call(self, op: Op, params: dict[str, Any], *, headers: Headers | None = None,
                   deadline: Deadline | None = None) -> Answer:
        label = self.method(op)
        try:
            answer = await self.binding.call(op, params, deadline=deadline or self.deadline, headers=headers)
        except WireError as exc:
            self._tell(label, None, exc)
            raise
        self._tell(label, answer, None)
        return answer

    async def send(self, text_or_message: str | dict[str, Any], *, task_id: str | None = None,
                   context_id: str | None = None, immediate: bool | None = None, headers: Headers | None = None,
                   deadline: Deadline | None = None, history_length: int | None = None) -> Reply:
        message = (self.message(text_or_message, task_id=task_id, context_id=context_id)
                   if isinstance(text_or_message, str) else text_or_message)
        params = self.send_params(message, immediate=immediate, history_length=history_length)
        answer = await self.call(Op.SEND, params, headers=headers, deadline=deadline)
        return answer, self.item(answer)

    async def get(self, task_id: str, *, history_length: int | None = None, headers: Headers | None = None,
                  deadline: Deadline | None = None) -> Reply:
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        answer = await self.call(Op.GET, params, headers=headers, deadline=deadline)
        return answer, self.item(answer, bare_task=True)

    async def list(self, *, context_id: str | None = None, page_size: int | None = None,
                   page_token: str | None = None, status: str | None = None, history_length: int | None = None,
                   include_artifacts: bool | None = None, headers: Headers | None = None) -> Answer:
        """ListTasks (1.0): the filters and page arguments given, by their ProtoJSON names; `status` is the
        1.0 state name (TASK_STATE_COMPLETED)."""
        params: dict[str, Any] = {}
        if context_id:
            params["contextId"] = context_id
        if status:
            params["status"] = status
        if page_size is not None:
            params["pageSize"] = page_size
        if page_token:
            params["pageToken"] = page_token
        if history_length is not None:
            params["historyLength"] = history_length
        if include_artifacts is not None:
            params["includeArtifacts"] = include_artifacts
        return await self.call(Op.LIST, params, headers=headers)

    async def cancel(self, task_id: str, *, headers: Headers | None = None) -> Reply:
        answer = await self.call(Op.CANCEL, {"id": task_id}, headers=headers)
        return answer, self.item(answer, bare_task=True)

    async def push_set(self, task_id: str, url: str, token: str | None = None,
                       credentials: str | None = None) -> Answer:
        """Create a task's push config: the bare URL, or with the token and Bearer credentials to deliver with."""
        if token is None or credentials is None:
            params = ({"taskId": task_id, "url": url} if self.v1
                      else {"taskId": task_id, "pushNotificationConfig": {"url": url}})
        else:
            params = push_shapes.create_params(self.dialect, task_id, url, token, credentials)
        return await self.call(Op.PUSH_SET, params)

    async def push_get(self, task_id: str, config_id: str) -> Answer:
        return await self.call(Op.PUSH_GET, push_shapes.config_params(self.dialect, task_id, config_id))

    async def push_list(self, task_id: str) -> Answer:
        return await self.call(Op.PUSH_LIST, push_shapes.config_params(self.dialect, task_id))

    async def push_delete(self, task_id: str, config_id: str) -> Answer:
        return await self.call(Op.PUSH_DELETE, push_shapes.config_params(self.dialect, task_id, config_id))

    async def extended_card(self) -> Answer:
        return await self.call(Op.EXTENDED_CARD, {})

    # ---- streams

    def stream(self, text_or_message: str | dict[str, Any], *, headers: Headers | None = None,
               deadline: Deadline | None = None) -> AbstractAsyncContextManager[AnswerStream]:
        message = self.message(text_or_message) if isinstance(text_or_message, str) else text_or_message
        return self.binding.open_stream(Op.STREAM, {"message": message}, deadline=deadline or self.deadline,
                                        headers=headers)

    def subscribe(self, task_id: str, *, deadline: Deadline | None = None) -> AbstractAsyncContextManager[AnswerStream]:
        return self.binding.open_stream(Op.SUBSCRIBE, {"id": task_id}, deadline=deadline or self.deadline)

    # ---- poll until terminal

    async def poll(self, task_id: str, *, deadline: Deadline | None = None,
                   observe: Callable[[Answer], None] | None = None,
                   start: float = POLL_START, cap: float = POLL_MAX) -> Reply:
        """GetTask with backoff until the task is terminal or interrupted, or the answer is not a task.

        `observe` sees each answer first (and may raise to stop); PollTimeout carries the last item when the
        deadline comes first.
        """
        deadline = deadline or self.deadline
        delay = start
        last: Item | None = None
        while True:
            if deadline.remaining() <= delay:
                raise PollTimeout(last)
            await asyncio.sleep(delay)
            delay = min(max(delay * 2, POLL_START), cap)
            answer, item = await self.get(task_id, deadline=deadline)
            if observe is not None:
                observe(answer)
            if item is None:
                return answer, None
            last = item
            if item.state in TERMINAL | INTERRUPTED:
                return answer, item

    # ---- the JSON-RPC-only hatch

    async def jsonrpc_raw(self, body: bytes, rid: str | None, label: str, *,
                          headers: Headers | None = None) -> Answer:
        """POST bytes as given to a JSON-RPC interface (parse error, invalid request, unknown method checks); `rid`
        None for a body with no id to read, whose answer's id is due null."""
        b = self.binding
        if not isinstance(b, JsonRpcBinding):
            raise NotJsonRpc(f"{label} is a JSON-RPC-only check; this interface is {b.name}")
        try:
            answer = await b.post(body, rid, label, deadline=self.deadline, headers=headers)
        except WireError as exc:
            self._tell(label, None, exc)
            raise
        self._tell(label, answer, None)
        return answer

    def _tell(self, label: str, answer: Answer | None, exc: WireError | None) -> None:
        for hook in self.hooks:
            hook(label, answer, exc)
