"""A hostile gRPC agent: answers past the gRPC client's own receive limits (a message over 4 MiB, metadata over
16 KiB) are the probe's bounds, said as such (work_limit_exceeded, invoke_protocol_error), never an A2A error the
agent answered; an error whose details trailer is garbage is still the error its status names."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import grpc.aio
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from aiohttp import web
from google.protobuf import json_format

from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import to_dict
from probe.results import StepName
from probe.target import Target
from probe.wire.http import HttpClient
from tests.agents.cards import valid_card
from tests.agents.server import serve_grpc

TIMEOUT = 3.0


def _task(state: str = "COMPLETED") -> Any:
    return json_format.ParseDict({"id": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"},
                                  "artifacts": [{"artifactId": "a", "parts": [{"text": "ok"}]}]}, a2a_pb2.Task())


class _Hostile(a2a_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def SendMessage(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        task = _task()
        if self.mode == "huge message":
            task.metadata["x"] = "y" * (5 << 20)
        elif self.mode == "huge metadata":
            await context.send_initial_metadata([("x-echo", "v" * 100_000)])
        elif self.mode == "huge trailers":
            context.set_trailing_metadata([("x-echo", "v" * 100_000)])
        elif self.mode == "garbage details":
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such task",
                                trailing_metadata=(("grpc-status-details-bin", b"\xff\x00not a Status"),))
        return a2a_pb2.SendMessageResponse(task=task)

    async def SendStreamingMessage(self, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        first = _task("SUBMITTED")
        if self.mode == "huge first stream message":
            first.metadata["x"] = "y" * (5 << 20)
        yield a2a_pb2.StreamResponse(task=first)
        if self.mode == "huge stream message":
            task = _task("WORKING")
            task.metadata["x"] = "y" * (5 << 20)
            yield a2a_pb2.StreamResponse(task=task)
        elif self.mode == "huge stream error":
            await context.abort(grpc.StatusCode.INTERNAL, "boom " * 20_000)  # its grpc-message is 100 KB
        yield a2a_pb2.StreamResponse(task=_task())


@asynccontextmanager
async def _agent(mode: str) -> AsyncIterator[str]:
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(_Hostile(mode), server)

    async def card(_request: web.Request, port: int) -> web.Response:
        return web.json_response(valid_card((f"http://127.0.0.1:{port}", "GRPC", "1.0"), name="grpc-hostile"))

    async with serve_grpc(server, card) as origin:
        yield origin


@pytest.mark.parametrize(("mode", "steps", "reason", "fragment"), [
    ("huge message", (StepName.INVOKE,), Reason.WORK_LIMIT_EXCEEDED, "exceeds the 4194304-byte limit"),
    ("huge stream message", (StepName.STREAM,), Reason.WORK_LIMIT_EXCEEDED, "exceeds the 4194304-byte limit"),
    ("huge first stream message", (StepName.STREAM,), Reason.WORK_LIMIT_EXCEEDED, "exceeds the 4194304-byte limit"),
    ("huge metadata", (StepName.INVOKE,), Reason.INVOKE_PROTOCOL_ERROR, "metadata larger than"),
    ("huge trailers", (StepName.INVOKE,), Reason.INVOKE_PROTOCOL_ERROR, "metadata larger than"),
    ("huge stream error", (StepName.STREAM,), Reason.INVOKE_PROTOCOL_ERROR, "metadata larger than"),
    ("garbage details", (StepName.INVOKE,), Reason.INVOKE_A2A_ERROR, "no such task"),
])
async def test_grpc_answers_past_the_clients_limits(mode: str, steps: tuple[StepName, ...], reason: Reason,
                                                    fragment: str) -> None:
    async with _agent(mode) as origin, HttpClient() as client:
        t0 = time.monotonic()
        r = await asyncio.wait_for(run_probe(Target(name="g", url=origin, timeout=TIMEOUT, binding="GRPC"), client,
                                             steps=steps), TIMEOUT + 5)
        elapsed = time.monotonic() - t0
    detail = " ".join(s.detail for s in r.steps)
    assert r.reason is reason, to_dict(r)
    assert fragment in detail, detail
    assert elapsed < TIMEOUT
