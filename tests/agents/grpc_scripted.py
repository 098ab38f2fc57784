"""A scripted gRPC agent (A2A 1.0, lf.a2a.v1; or 0.3, a2a.v1): each rpc (every one the service defines, by its
name) replays ProtoJSON messages of its response type, then ends as told; an rpc not scripted is UNIMPLEMENTED.

For semantics that need exact events and exact endings: a stream that ends OK with no terminal event, a status
with no details, a details trailer that is not a google.rpc.Status, metadata of the agent's choosing. The token
``{secret}`` in any text or metadata value is replaced by the ``authorization`` metadata the call carried (a
trailer given as a function gets it as its argument, for a serialized google.rpc.Status), so an agent can echo the
probe's credentials back in every place a gRPC answer has.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
from a2a.types import a2a_pb2, a2a_pb2_grpc
from aiohttp import web
from google.protobuf import any_pb2, json_format, message_factory
from google.rpc import error_details_pb2, status_pb2

from tests.agents.cards import valid_card
from tests.agents.server import serve_grpc

Json = dict[str, Any]
_MODULES = {"1.0": (a2a_pb2, a2a_pb2_grpc), "0.3": (a2a_v0_3_pb2, a2a_v0_3_pb2_grpc)}


@dataclass
class Call:
    """What one rpc does: send `messages` (ProtoJSON of its response type; a unary rpc sends the first), then end
    with `code` (None: OK) and `details`, with `trailers` and after `initial` metadata."""

    messages: list[Json] = field(default_factory=list)
    code: grpc.StatusCode | None = None
    details: str = ""
    trailers: list[tuple[str, str | bytes | Callable[[str], bytes]]] = field(default_factory=list)  # fn(secret)
    initial: list[tuple[str, str]] = field(default_factory=list)
    hold: float = 0.0  # seconds to wait after the messages, before the end (a task that stays WORKING)


def rpc_status(code: grpc.StatusCode, message: str, reason: str | None = None, *, domain: str = "a2a-protocol.org",
               **metadata: str) -> bytes:
    """A serialized google.rpc.Status (grpc-status-details-bin) with an ErrorInfo (the A2A domain unless told)
    when `reason` is given."""
    details = []
    if reason is not None:
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata=metadata))
        details.append(packed)
    return status_pb2.Status(code=code.value[0], message=message, details=details).SerializeToString()


def _fill(value: Any, secret: str) -> Any:
    if callable(value):
        return value(secret)
    if isinstance(value, str):
        return value.replace("{secret}", secret)
    if isinstance(value, dict):
        return {k: _fill(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, secret) for v in value]
    return value


class _Scripted:
    def __init__(self, script: dict[str, Call], pb2: Any) -> None:
        self.script = script
        self.pb2 = pb2

    def _call(self, rpc: str, context: grpc.aio.ServicerContext) -> tuple[Call, str]:
        secret = next((v for k, v in context.invocation_metadata() or () if k == "authorization"), "")
        return self.script.get(rpc, Call(code=grpc.StatusCode.UNIMPLEMENTED, details="not scripted")), str(secret)

    async def _end(self, call: Call, secret: str, context: grpc.aio.ServicerContext) -> None:
        if call.trailers:
            context.set_trailing_metadata(tuple((k, _fill(v, secret)) for k, v in call.trailers))
        if call.code is not None:
            await context.abort(call.code, _fill(call.details, secret))

    async def _unary(self, rpc: str, response: Any, context: grpc.aio.ServicerContext) -> Any:
        call, secret = self._call(rpc, context)
        if call.initial:
            await context.send_initial_metadata(tuple((k, _fill(v, secret)) for k, v in call.initial))
        await self._end(call, secret, context)
        return json_format.ParseDict(_fill(call.messages[0], secret), response())

    async def _stream(self, rpc: str, response: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        call, secret = self._call(rpc, context)
        if call.initial:
            await context.send_initial_metadata(tuple((k, _fill(v, secret)) for k, v in call.initial))
        for message in call.messages:
            yield json_format.ParseDict(_fill(message, secret), response())
        await asyncio.sleep(call.hold)
        await self._end(call, secret, context)


def _handlers(pb2: Any, service: str) -> dict[str, Any]:
    """One scripted handler for every rpc of the service, answering its own response type."""
    out: dict[str, Any] = {}
    for method in pb2.DESCRIPTOR.services_by_name[service].methods:
        response = message_factory.GetMessageClass(method.output_type)

        if method.server_streaming:
            async def stream(self: _Scripted, request: Any, context: grpc.aio.ServicerContext,
                             rpc: str = method.name, response: Any = response) -> AsyncIterator[Any]:
                async for message in self._stream(rpc, response, context):  # grpc.aio wants an async generator
                    yield message
            out[method.name] = stream
        else:
            async def unary(self: _Scripted, request: Any, context: grpc.aio.ServicerContext, rpc: str = method.name,
                            response: Any = response) -> Any:
                return await self._unary(rpc, response, context)
            out[method.name] = unary
    return out


@asynccontextmanager
async def scripted_grpc_agent(script: dict[str, Call], *, streaming: bool = True,
                              version: str = "1.0") -> AsyncIterator[str]:
    """Serve the script on a gRPC port and its card (one GRPC interface of `version`) over HTTP; yields the card's
    origin."""
    pb2, pb2_grpc = _MODULES[version]
    servicer = type("_Servicer", (_Scripted, pb2_grpc.A2AServiceServicer), _handlers(pb2, "A2AService"))(script, pb2)
    server = grpc.aio.server()
    pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)

    async def card(_request: web.Request, port: int) -> web.Response:
        url = f"http://127.0.0.1:{port}"
        doc = (valid_card((url, "GRPC", "1.0"), name="grpc-scripted", streaming=streaming) if version == "1.0" else
               valid_card(url, name="grpc-scripted", streaming=streaming, version=version, preferredTransport="GRPC"))
        return web.json_response(doc, headers={"Cache-Control": "max-age=60", "ETag": '"g"'})

    async with serve_grpc(server, card) as origin:
        yield origin
