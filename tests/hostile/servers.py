"""Hostile agents at the byte level: a raw asyncio server that serves a valid card (unless told otherwise)
and answers the interface URL with exactly the bytes, pacing and socket behaviour a case needs.

aiohttp's own server would refuse to send most of these (bad status lines, broken chunking, endless
headers), so the responses are written by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import ssl
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.agents.scripted import card

Writer = asyncio.StreamWriter
# (writer, request) -> None: writes the whole response (or misbehaves)
Handler = Callable[[Writer, "Request"], Awaitable[None]]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def rpc(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}


@dataclass
class Hostile:
    """What the agent does: `card` answers GET of the card, `rpc` answers every POST."""

    card: Handler | None = None
    rpc: Handler | None = None
    requests: list[Request] = field(default_factory=list)
    origin: str = ""


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = ([*lines[0].split(" ", 2), "", ""])[:3]
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return Request(method, path, headers, body)


def response(status: int = 200, body: bytes = b"", content_type: str = "application/json",
             extra: dict[str, str] | None = None, reason: str = "OK") -> bytes:
    hdrs = {"Content-Type": content_type, "Content-Length": str(len(body)), **(extra or {})}
    return (f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
            + "\r\n").encode() + body


def card_bytes(origin: str, **extra: Any) -> bytes:
    return json.dumps(card(origin, **extra)).encode()


async def good_card(w: Writer, req: Request, origin: str) -> None:
    w.write(response(body=card_bytes(origin), extra={"Cache-Control": "max-age=60", "ETag": '"h"'}))


def reset(w: Writer) -> None:
    """Close with a TCP RST (SO_LINGER 0), not a FIN."""
    sock = w.get_extra_info("socket")
    if sock is not None and not w.is_closing():
        with contextlib.suppress(OSError):  # the peer may have gone already
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    w.transport.abort()


@asynccontextmanager
async def hostile_agent(behaviour: Hostile, tls: ssl.SSLContext | None = None) -> AsyncIterator[Hostile]:
    conns: set[asyncio.Task[Any]] = set()

    async def serve(reader: asyncio.StreamReader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        conns.add(task)
        try:
            while (req := await _read_request(reader)) is not None:
                behaviour.requests.append(req)
                if req.method == "GET":
                    if behaviour.card is None:
                        await good_card(writer, req, behaviour.origin)
                    else:
                        await behaviour.card(writer, req)
                elif behaviour.rpc is not None:
                    await behaviour.rpc(writer, req)
                if writer.is_closing():
                    return
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass  # the probe hung up (it stops reading at its bounds): expected
        finally:
            conns.discard(task)
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=tls, limit=1 << 20)
    port = server.sockets[0].getsockname()[1]
    behaviour.origin = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    try:
        yield behaviour
    finally:
        server.close()
        for task in list(conns):  # endless responses (floods, trickles) end with the test
            task.cancel()
        await asyncio.sleep(0)


# ---- building blocks for the cases

def gzip_bomb(decompressed: int) -> bytes:
    """`decompressed` zero bytes, gzip-compressed (about 1000:1)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    out = [comp.compress(chunk) for _ in range(decompressed >> 20)]
    out.append(comp.flush())
    return b"".join(out)


def deep_json(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def sse_event(rid: str, result: dict[str, Any]) -> bytes:
    return f"data: {json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': result})}\n\n".encode()


def chunked_head(content_type: str = "text/event-stream") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


# ---- misbehaviours shared by the hostile suite and the soak (bench/soak.py)

def task_result(state: str, **extra: object) -> dict[str, object]:
    return {"task": {"id": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}, **extra}}


async def trickle(w: Writer, req: Request) -> None:
    body = card_bytes("http://127.0.0.1:1")
    w.write(response(body=body)[:-len(body)])
    for b in body:
        w.write(bytes([b]))
        await w.drain()
        await asyncio.sleep(1.0)


def raw(data: bytes, *, then_reset: bool = False) -> Callable[..., Awaitable[None]]:
    async def h(w: Writer, _req: Request) -> None:
        w.write(data)
        await w.drain()
        if then_reset:
            await asyncio.sleep(0.05)
            reset(w)
        else:
            w.close()
    return h


async def stream_then_reset(w: Writer, req: Request) -> None:
    rid = str(req.rpc.get("id"))
    w.write(chunked_head() + chunk(sse_event(rid, task_result("SUBMITTED")))
            + chunk(sse_event(rid, task_result("WORKING"))))
    await w.drain()
    await asyncio.sleep(0.1)
    reset(w)


async def flood(w: Writer, req: Request) -> None:
    """Millions of tiny events as fast as the socket takes them, never a terminal one."""
    rid = str(req.rpc.get("id"))
    w.write(chunked_head() + chunk(sse_event(rid, task_result("SUBMITTED"))))
    working = sse_event(rid, {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                               "status": {"state": "TASK_STATE_WORKING"}}})
    batch = chunk(working * 500)
    for _ in range(10_000):
        w.write(batch)
        await w.drain()
        await asyncio.sleep(0)  # the agents sharing this loop still answer (only the probe may be flooded)


__all__ = ["Hostile", "Request", "chunk", "chunked_head", "deep_json", "flood", "gzip", "gzip_bomb", "hostile_agent",
           "raw", "reset", "response", "sse_event", "stream_then_reset", "task_result", "trickle"]
