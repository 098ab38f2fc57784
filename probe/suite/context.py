"""What every suite check shares: the selected binding, fresh ids, bounded calls, and how results are recorded.

The suite talks JSON-RPC at the interface the engine selected; every request is bounded by the
suite's own deadline, and every 5xx or dropped connection is remembered for errors.no_server_errors.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from probe.engine import ProbeRun
from probe.inbox import PushInbox
from probe.results import CheckResult, ProbeResult, Status, make_check
from probe.target import Target
from probe.wire import jsonrpc
from probe.wire.bindings import Call, JsonRpcBinding, Op
from probe.wire.card import Card
from probe.wire.dialects import Dialect, Item, TaskState
from probe.wire.http import Deadline, WireError


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    safe_only: bool = False
    slow_prompt: str | None = None  # a text that keeps a task running for a while (cancel, subscribe)
    input_prompt: str | None = None  # a text that makes the agent ask for input (multi-turn)
    timeout: float = 120.0  # the whole suite, on top of the basic probe
    peer: Target | None = None  # a second agent for the interop checks
    delegation_prompt: str | None = None
    delegation_expect: str | None = None
    inbox: PushInbox | None = None  # the push receiver (the CLI's listener or the daemon's route)


class Skip(Exception):
    """Raised by a check that cannot run here; the message says why."""


@dataclass
class Suite:
    run: ProbeRun
    opts: SuiteOptions
    deadline: Deadline
    server_errors: list[str] = field(default_factory=list)
    completed_task: Item | None = None  # a COMPLETED task created by the suite, reused by several checks

    @property
    def result(self) -> ProbeResult:
        return self.run.r

    @property
    def card(self) -> Card:
        assert self.run.card is not None
        return self.run.card

    @property
    def binding(self) -> JsonRpcBinding:
        b = self.run.binding
        if not isinstance(b, JsonRpcBinding):
            raise Skip("the conformance suite speaks JSON-RPC; this interface uses another binding")
        return b

    @property
    def dialect(self) -> Dialect:
        return self.binding.dialect

    @property
    def v1(self) -> bool:
        return self.dialect.version == "1.0"

    def record(self, check_id: str, status: Status, message: str = "", *, duration_ms: float = 0.0,
               recommendation: str | None = None) -> CheckResult:
        c = make_check(check_id, status, message, recommendation=recommendation, duration_ms=duration_ms)
        self.result.checks.append(c)
        return c

    # ---- calls

    async def rpc(self, method: str, params: dict[str, Any], *, headers: dict[str, str | None] | None = None) -> Call:
        rid = jsonrpc.new_id()
        return await self.raw(jsonrpc.request(method, params, rid), rid, method, headers=headers)

    async def op(self, op: Op, params: dict[str, Any]) -> Call:
        return await self.rpc(self.binding.method(op), params)

    async def raw(self, body: bytes, rid: str, method: str, *, headers: dict[str, str | None] | None = None) -> Call:
        try:
            call = await self.binding.post(body, rid, method, deadline=self.deadline, headers=headers)
        except WireError as exc:
            self.server_errors.append(f"{method}: {exc}")
            raise Skip(f"no answer to {method}: {exc}") from None
        if call.status is not None and call.status >= 500:
            self.server_errors.append(f"{method}: HTTP {call.status} {call.snippet[:80]}")
        return call

    def message(self, text: str, *, task_id: str | None = None, context_id: str | None = None) -> dict[str, Any]:
        return self.dialect.user_message(text, str(uuid.uuid4()), task_id, context_id)

    async def send(self, text: str, *, task_id: str | None = None, context_id: str | None = None,
                   immediate: bool = False) -> tuple[Call, Item | None]:
        """SendMessage; returns the call and the parsed result item (None when the agent answered an error)."""
        params: dict[str, Any] = {"message": self.message(text, task_id=task_id, context_id=context_id)}
        if self.v1 and immediate:
            params["configuration"] = {"returnImmediately": True}
        elif not self.v1:
            params["configuration"] = {"blocking": not immediate}
        call = await self.op(Op.SEND, params)
        return call, self.item(call)

    def item(self, call: Call, *, bare_task: bool = False) -> Item | None:
        env = call.envelope
        if env is None or env.error is not None or not env.has_result:
            return None
        result = {"task": env.result} if bare_task and self.v1 else env.result
        return self.dialect.result_item(result)

    async def get_task(self, task_id: str, history_length: int | None = None) -> tuple[Call, Item | None]:
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        call = await self.op(Op.GET, params)
        return call, self.item(call, bare_task=True)

    async def completed(self) -> Item:
        """A COMPLETED task of our own (created once per suite run)."""
        if self.completed_task is None:
            _, item = await self.send(f"a2a-probe conformance {uuid.uuid4().hex[:8]}")
            if item is None or item.kind != "task":
                raise Skip("the agent answers with Messages, not Tasks, so there is no task to test with")
            if item.state is not TaskState.COMPLETED:
                raise Skip(f"the basic task ended {item.state}, not COMPLETED")
            self.completed_task = item
        return self.completed_task


def error_of(call: Call) -> jsonrpc.RpcError | None:
    env = call.envelope
    return env.error if env is not None else None


def describe_answer(call: Call) -> str:
    err = error_of(call)
    if err is not None:
        return f"HTTP {call.status}, {err.describe()}"
    if call.not_jsonrpc:
        return f"HTTP {call.status} {call.content_type or ''}: {call.not_jsonrpc}"
    return f"HTTP {call.status} with a result"


def expect_error(s: Suite, check_id: str, call: Call, codes: set[int], what: str) -> None:
    """Pass when the answer is a JSON-RPC error with one of `codes` (any non-5xx HTTP status)."""
    err = error_of(call)
    expected = " or ".join(f"{c} {jsonrpc.ERROR_NAMES.get(c, '')}".strip() for c in sorted(codes, reverse=True))
    if err is not None and err.code in codes and (call.status or 0) < 500:
        s.record(check_id, Status.PASS, f"{what}: {err.describe()}")
    else:
        s.record(check_id, Status.FAIL, f"{what}: expected {expected}, got {describe_answer(call)}")
