"""A gRPC agent at the HTTP/2 frame level, for the faults no gRPC server library will send.

It reads the client's frames without decoding its HPACK (each call is a fresh channel, whose first header block
carries the :path as a plain literal: the rpc's name is found there), and answers each request with a script of
frames: response headers of its choosing (any content-type, any
``:status``, a trailers-only answer with no ``grpc-status``), length-prefixed messages, trailers, RST_STREAM,
GOAWAY, or a closed socket. Its own headers go out as HPACK literals without indexing or Huffman coding, which
every decoder reads. Loopback, an ephemeral port; the card is served over HTTP/1.1 as `serve_grpc` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import Message

from tests.agents.cards import valid_card
from tests.agents.server import serve_card

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
# RFC 9113 §7 error codes
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, CANCEL, ENHANCE_YOUR_CALM, INADEQUATE_SECURITY = 0x0, 0x1, 0x2, 0x8, 0xb, 0xc


@dataclass(frozen=True)
class Headers:
    fields: Sequence[tuple[str, str]]
    end: bool = False


@dataclass(frozen=True)
class Msg:
    """One gRPC message (a 5-byte prefix and the serialized protobuf, or raw bytes as given; `compressed` sets the
    prefix's compressed flag, the body as given)."""

    body: bytes | Message
    end: bool = False
    compressed: bool = False


@dataclass(frozen=True)
class Reset:
    code: int = CANCEL


@dataclass(frozen=True)
class GoAway:
    code: int = NO_ERROR
    close: bool = True  # close the socket after it (a server going away mid-stream)


@dataclass(frozen=True)
class Close:
    pass


@dataclass(frozen=True)
class Pause:
    seconds: float


Step = Headers | Msg | Reset | GoAway | Close | Pause


def ok_headers(content_type: str = "application/grpc") -> Headers:
    return Headers([(":status", "200"), ("content-type", content_type)])


def trailers(status: int = 0, message: str = "", *extra: tuple[str, str]) -> Headers:
    fields = [("grpc-status", str(status))] + ([("grpc-message", message)] if message else []) + list(extra)
    return Headers(fields, end=True)


def message(pb: type[Message], doc: dict[str, Any], end: bool = False) -> Msg:
    return Msg(json_format.ParseDict(doc, pb()), end)


def _int(value: int, prefix: int) -> bytes:
    """An HPACK integer (RFC 7541 §5.1) with a `prefix`-bit prefix and zero flag bits."""
    top = (1 << prefix) - 1
    if value < top:
        return bytes([value])
    out, value = [top], value - top
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes([*out, value])


def hpack(fields: Sequence[tuple[str, str]]) -> bytes:
    out = b""
    for name, value in fields:
        n, v = name.encode(), value.encode()
        out += b"\x00" + _int(len(n), 7) + n + _int(len(v), 7) + v  # literal without indexing, new name
    return out


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def serialized(msg: Msg) -> bytes:
    return msg.body if isinstance(msg.body, bytes) else msg.body.SerializeToString()


def _grpc_message(msg: Msg) -> bytes:
    raw = serialized(msg)
    return (b"\x01" if msg.compressed else b"\x00") + struct.pack(">I", len(raw)) + raw


async def _answer(writer: asyncio.StreamWriter, stream: int, script: Sequence[Step]) -> bool:
    """Play the script on `stream`; False when it closed the connection."""
    for step in script:
        if isinstance(step, Headers):
            writer.write(frame(HEADERS, END_HEADERS | (END_STREAM if step.end else 0), stream, hpack(step.fields)))
        elif isinstance(step, Msg):
            writer.write(frame(DATA, END_STREAM if step.end else 0, stream, _grpc_message(step)))
        elif isinstance(step, Reset):
            writer.write(frame(RST_STREAM, 0, stream, struct.pack(">I", step.code)))
        elif isinstance(step, GoAway):
            writer.write(frame(GOAWAY, 0, 0, struct.pack(">II", stream - 2 if stream > 2 else 0, step.code)))
            if step.close:
                await writer.drain()
                writer.close()
                return False
        elif isinstance(step, Close):
            await writer.drain()
            writer.close()
            return False
        else:
            await writer.drain()
            await asyncio.sleep(step.seconds)
        await writer.drain()
    return True


def _rpc(block: bytes) -> str:
    """The rpc a request's header block names: gRPC core sends a fresh connection's :path as a plain literal."""
    found = re.search(rb":path.(?:/[A-Za-z0-9_.]+)?/(\w+)", block)
    return found[1].decode() if found else ""


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      scripts: Mapping[str, Sequence[Step]], log: list[tuple[int, str]], number: int) -> None:
    try:
        if await reader.readexactly(len(PREFACE)) != PREFACE:
            writer.close()
            return
        writer.write(frame(SETTINGS, 0, 0, b""))
        opened: dict[int, str] = {}
        while True:
            head = await reader.readexactly(9)
            length, kind, flags, stream = int.from_bytes(head[:3], "big"), head[3], head[4], \
                int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
            payload = await reader.readexactly(length)
            if kind == SETTINGS and not flags & ACK:
                writer.write(frame(SETTINGS, ACK, 0, b""))
            elif kind == PING and not flags & ACK:
                writer.write(frame(PING, ACK, 0, payload))
            elif kind == HEADERS:
                opened[stream] = _rpc(payload)
                log.append((number, opened[stream]))
            if kind in (HEADERS, DATA) and flags & END_STREAM and stream in opened:  # the request is complete
                script = scripts.get(opened[stream], scripts.get("*", [ok_headers(), trailers(12, "not scripted")]))
                if not await _answer(writer, stream, script):
                    return
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@asynccontextmanager
async def raw_grpc_agent(script: Sequence[Step] | Mapping[str, Sequence[Step]], *, streaming: bool = True,
                         version: str = "1.0", scheme: str = "http",
                         log: list[tuple[int, str]] | None = None) -> AsyncIterator[str]:
    """Serve frame scripts on a raw HTTP/2 port (one for every call, or by rpc name with "*" for the rest; an rpc
    not scripted is UNIMPLEMENTED) and the card (one GRPC interface) over HTTP; yields the card's origin. `log`
    gets (connection number, rpc) for each request ("" where the :path was not a literal: a reused connection)."""
    scripts = script if isinstance(script, Mapping) else {"*": script}
    requests = log if log is not None else []
    connections = iter(range(1 << 30))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _connection(reader, writer, scripts, requests, next(connections))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)

    async def card(_request: web.Request, port: int) -> web.Response:
        url = f"{scheme}://127.0.0.1:{port}"
        doc = (valid_card((url, "GRPC", "1.0"), name="grpc-raw", streaming=streaming) if version == "1.0" else
               valid_card(url, name="grpc-raw", streaming=streaming, version=version, preferredTransport="GRPC"))
        return web.json_response(doc)

    try:
        async with serve_card(card, server.sockets[0].getsockname()[1]) as origin:
            yield origin
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1.0)
