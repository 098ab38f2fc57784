#!/usr/bin/env python
"""A loopback fleet: many correct A2A 1.0 JSON-RPC agents in one server process, hosted by path.

Agent NAME lives under ``/a/NAME/``: its card at ``/a/NAME/.well-known/agent-card.json`` advertises the
JSON-RPC interface ``/a/NAME/rpc``, which answers ``GetTask`` (TaskNotFound, what the ping probe expects),
``SendMessage`` (a completed task with an artifact) and ``SendStreamingMessage`` (submitted, working,
artifact, completed), in the same wire format as the official SDKs 1.3.0 (and the bundled demo agent).
Every RPC waits ``delay`` seconds before it answers (the card does not), so a client's measurement
overhead is its reported latency minus that known delay. The server counts what it served, per method and
per agent, and reports it on ``GET /_stats``; ``POST /_control?delay=S`` changes the delay at run time. It also
measures its own part of every RPC's latency: the time from its handler's start to the answer's return, less the
delay (JSON parsing, the delay timer's overshoot on its loop, the answer's encoding), p50 / p99 since the last
``POST /_control?reset=1``, so a client's overhead can be told apart from the fleet's own. Per agent it keeps when
its last RPCs were handled (``time.monotonic``, the system-wide clock every process on the machine shares: the
handler's start and its answer's return), on ``GET /_stats?handled=1``: a client subtracts the fleet's own
measured handling of each of its calls (delay, timer overshoot, parsing, encoding) from that call's latency.

It is built to cost little per request (aiohttp's low-level server, no router, pre-encoded card parts,
uvloop when installed) so a 2-core machine can serve the daemon tens of thousands of agents.

Run: ``python bench/fleet_agents.py [--port 0] [--delay 0.01]``; it prints ``listening http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import time
import uuid
from collections import Counter, deque
from typing import Any

from aiohttp import web

PREFIX = "/a/"
CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/rpc"
TASK_NOT_FOUND = -32001
METHODS = ("GetTask", "SendMessage", "SendStreamingMessage")
HOST = "127.0.0.1"


def _card_parts(origin: str) -> list[bytes]:
    """The card, pre-encoded, in the parts around the two places the agent's name goes (name, interface URL)."""
    card = {
        "name": "\x00", "description": "a2a-probe loopback fleet agent",
        "supportedInterfaces": [{"url": f"{origin}{PREFIX}\x00{RPC_PATH}", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "version": "1.0.0", "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes the text it receives.",
                    "tags": ["bench"], "examples": ["hello"]}],
    }
    text = json.dumps(card, separators=(",", ":"))
    return [part.encode() for part in text.split("\\u0000")]


class Fleet:
    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.served: Counter[str] = Counter()  # card, GetTask, SendMessage, SendStreamingMessage, other
        self.per_agent: Counter[str] = Counter()  # RPCs per agent (the probes it received)
        self.origin = ""
        self._card: list[bytes] = []
        self._server: web.Server | None = None
        self._runner: web.ServerRunner | None = None
        self._now = (0, "")
        self.extra: deque[float] = deque(maxlen=1 << 18)  # seconds each RPC's handling took beyond the delay
        self.handled: dict[str, deque[tuple[float, float]]] = {}  # agent -> its last RPCs' (start, end), monotonic

    async def start(self, port: int = 0) -> str:
        self._server = web.Server(self._handle, access_log=None)
        self._runner = web.ServerRunner(self._server, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, HOST, port, backlog=4096)
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]  # aiohttp exposes the bound port only here
        self.origin = f"http://{HOST}:{sock.getsockname()[1]}"
        self._card = _card_parts(self.origin)
        return self.origin

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def agent_url(self, name: str) -> str:
        return f"{self.origin}{PREFIX}{name}"

    def stats(self, per_agent: bool = False, handled: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"served": dict(self.served), "agents_hit": len(self.per_agent), "delay": self.delay,
                               "server_extra_ms": _quantiles(self.extra)}
        if per_agent:
            out["per_agent"] = dict(self.per_agent)
        if handled:
            out["handled"] = {name: list(spans) for name, spans in self.handled.items()}
        return out

    # ---- handlers

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path
        if path.startswith(PREFIX):
            if path.endswith(CARD_PATH) and request.method == "GET":
                name = path[len(PREFIX):-len(CARD_PATH)]
                self.served["card"] += 1
                body = name.encode().join(self._card)
                # a fixed validator per agent: the card of an agent never changes during a run
                etag = f'"{len(body):x}-{hash(name) & 0xFFFFFFFF:08x}"'
                return web.Response(body=body, content_type="application/json",
                                    headers={"Cache-Control": "max-age=300", "ETag": etag})
            if path.endswith(RPC_PATH) and request.method == "POST":
                return await self._rpc(request, path[len(PREFIX):-len(RPC_PATH)])
        if path == "/_stats":
            return web.json_response(self.stats(request.query.get("per_agent") == "1",
                                                request.query.get("handled") == "1"))
        if path == "/_control" and request.method == "POST":
            with contextlib.suppress(KeyError, ValueError):
                self.delay = max(0.0, float(request.query["delay"]))
            if request.query.get("reset") == "1":
                self.extra.clear()
                self.handled.clear()
            return web.json_response(self.stats())
        self.served["other"] += 1
        return web.Response(status=404, text="not found")

    async def _rpc(self, request: web.BaseRequest, name: str) -> web.StreamResponse:
        start = time.perf_counter()
        began = time.monotonic()
        resp = await self._answer(request, name)
        self.extra.append(time.perf_counter() - start - self.delay)
        if (spans := self.handled.get(name)) is None:
            spans = self.handled[name] = deque(maxlen=4)
        spans.append((began, time.monotonic()))
        return resp

    async def _answer(self, request: web.BaseRequest, name: str) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
            method, rpc_id, params = body["method"], body.get("id"), body.get("params") or {}
        except (ValueError, KeyError, TypeError):
            self.served["other"] += 1
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
        self.served[method if method in METHODS else "other"] += 1
        self.per_agent[name] += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if method == "GetTask":
            return _json({"jsonrpc": "2.0", "id": rpc_id, "error": {
                "code": TASK_NOT_FOUND, "message": "Task not found",
                "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                          "domain": "a2a-protocol.org"}]}})
        if method not in ("SendMessage", "SendStreamingMessage"):
            return _json({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32601, "message": "Method not found"}})
        msg = params.get("message") if isinstance(params, dict) else None
        if not isinstance(msg, dict):
            return _json({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32602, "message": "no message"}})
        task_id, ctx = str(uuid.uuid4()), str(uuid.uuid4())
        user = {"messageId": str(msg.get("messageId", "")), "contextId": ctx, "taskId": task_id, "role": "ROLE_USER",
                "parts": msg.get("parts", [])}
        text = " ".join(str(p.get("text", "")) for p in user["parts"] if isinstance(p, dict))
        artifact = {"artifactId": str(uuid.uuid4()), "name": "result", "parts": [{"text": f"echo: {text}"}]}
        now = self._stamp()
        if method == "SendMessage":
            return _json({"jsonrpc": "2.0", "id": rpc_id, "result": {"task": {
                "id": task_id, "contextId": ctx, "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now},
                "artifacts": [artifact], "history": [user]}}})
        events = [
            {"task": {"id": task_id, "contextId": ctx, "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": now},
                      "history": [user]}},
            {"statusUpdate": {"taskId": task_id, "contextId": ctx,
                              "status": {"state": "TASK_STATE_WORKING", "timestamp": now}}},
            {"artifactUpdate": {"taskId": task_id, "contextId": ctx, "artifact": artifact, "append": False,
                                "lastChunk": True}},
            {"statusUpdate": {"taskId": task_id, "contextId": ctx,
                              "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now}}},
        ]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        payload = "".join("data: " + json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": e},
                                                separators=(",", ":")) + "\n\n" for e in events)
        await resp.write(payload.encode())
        await resp.write_eof()
        return resp

    def _stamp(self) -> str:
        second = int(time.time())
        if self._now[0] != second:
            self._now = (second, time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(second)))
        return self._now[1]


def _quantiles(values: deque[float]) -> dict[str, float | int | None]:
    ordered = sorted(values)
    n = len(ordered)
    return {"n": n, **{f"p{q}": round(1e3 * ordered[min(n - 1, n * q // 100)], 3) if n else None for q in (50, 99)}}


def _json(obj: Any) -> web.Response:
    return web.Response(body=json.dumps(obj, separators=(",", ":")).encode(), content_type="application/json")


async def _serve(port: int, delay: float) -> None:
    fleet = Fleet(delay)
    origin = await fleet.start(port)
    print(f"listening {origin}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await fleet.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds every RPC waits before it answers")
    args = ap.parse_args(argv)
    try:
        import uvloop  # the server is not what is measured: use the fastest loop there is
    except ImportError:
        asyncio.run(_serve(args.port, args.delay))
    else:
        uvloop.run(_serve(args.port, args.delay))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
