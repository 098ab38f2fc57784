"""The tests' fault-injecting A2A agent on aiohttp.web (it never ships in the product package).

The product's demo has its own small agent (``probe/demo/agent.py``); this one is the test suite's.
With default :class:`Faults` it is a healthy A2A 1.0 JSON-RPC echo agent whose wire format mirrors
the official SDKs (a2a-python / a2a-js 1.3.0). Each knob switches on exactly one failure mode.

Behaviour of the echo logic (all protocol versions):

* the reply text is ``"echo: <user text>"`` in an artifact named ``result``;
* a text containing ``message`` (new conversation, 1.0/0.3 only) gets a Message reply instead of a Task;
* a text containing ``input`` ends in INPUT_REQUIRED; a follow-up with the same ``taskId`` completes it;
* otherwise the task ends in ``Faults.task_final_state`` after ``Faults.task_delay`` seconds.

No a2a-sdk code is used; everything is plain JSON over aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from tests.agents.cards import valid_card
from tests.agents.server import serve

__all__ = ["DemoAgent", "Faults", "RecordedRequest", "RpcError"]

Json = dict[str, Any]

PROTOCOLS: Final = frozenset({"1.0", "0.3", "hybrid", "0.1"})
STREAM_MODES: Final = frozenset(
    {
        "ok",
        "never_terminates",
        "closes_early",
        "regression",
        "task_id_changes",
        "wrong_content_type",
        "error_event",
    }
)
FINAL_STATES: Final = frozenset({"completed", "failed", "canceled", "rejected"})
TERMINAL_STATES: Final = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED_STATES: Final = frozenset({"input-required", "auth-required"})

MAX_TASKS: Final = 1000
MAX_RECORDED: Final = 1000
RECORDED_BODY_LIMIT: Final = 64 * 1024
KEEPALIVE_INTERVAL: Final = 0.2
CHUNK_PAUSE: Final = 0.001
#: In ``Faults.card_raw`` this token is replaced by the agent's origin (``http://127.0.0.1:PORT``).
ORIGIN_PLACEHOLDER: Final = b"__ORIGIN__"

CARD_PATH: Final = "/.well-known/agent-card.json"
LEGACY_CARD_PATH: Final = "/.well-known/agent.json"

_ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST_TYPE: Final = "type.googleapis.com/google.rpc.BadRequest"
_DOMAIN: Final = "a2a-protocol.org"

_MESSAGES: Final[dict[int, str]] = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32001: "Task not found",
    -32002: "Task cannot be canceled",
    -32003: "Push Notification is not supported",
    -32004: "This operation is not supported",
    -32005: "Incompatible content types",
    -32006: "Invalid agent response",
    -32007: "Extended agent card not configured",
    -32008: "Extension support required",
    -32009: "Version not supported",
}
_REASONS: Final[dict[int, str]] = {
    -32001: "TASK_NOT_FOUND",
    -32002: "TASK_NOT_CANCELABLE",
    -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    -32004: "UNSUPPORTED_OPERATION",
    -32005: "CONTENT_TYPE_NOT_SUPPORTED",
    -32006: "INVALID_AGENT_RESPONSE",
    -32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    -32008: "EXTENSION_SUPPORT_REQUIRED",
    -32009: "VERSION_NOT_SUPPORTED",
}

_V1_ROLES: Final = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}
_LEGACY_ROLES: Final = {"user": "user", "agent": "agent"}

_SPA_HTML: Final = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Console</title>'
    '<script type="module" src="/assets/index-3f9a1c.js"></script></head>'
    '<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>'
    "</body></html>\n"
)


# --------------------------------------------------------------------------------------------------
# public configuration / records


@dataclass
class Faults:
    """Fault-injection knobs. Every default is the healthy behaviour."""

    #: Card at ``{card_prefix}/.well-known/agent-card.json``; JSON-RPC at ``{card_prefix}`` (and ``/``).
    card_prefix: str = ""
    #: Path advertised in the card's interface URL (default: the real JSON-RPC route).
    advertised_path: str | None = None
    #: Replaces ``host:port`` in the advertised URL, e.g. ``agent.ns.svc.cluster.local:8080``.
    advertised_host: str | None = None
    #: ``"1.0"``, ``"0.3"``, ``"hybrid"`` (1.0 + 0.3 on one URL) or ``"0.1"`` (legacy ``tasks/send``).
    protocol: str = "1.0"
    #: kagent-style: HTTP 400 ``{"error": ...}`` when the ``A2A-Version`` header is absent.
    require_version_header: bool = False
    #: The interface URL answers every request with HTTP 200 ``text/html`` (an SPA index page).
    interface_html: bool = False
    #: Every RPC is answered (HTTP 200) with a JSON-RPC error of this code.
    jsonrpc_error: int | None = None
    #: One of :data:`STREAM_MODES`.
    stream_mode: str = "ok"
    #: ``"\n"`` or ``"\r\n"``.
    stream_line_ending: str = "\n"
    #: If > 0, SSE bytes are written in chunks of this size with a tiny pause in between.
    stream_chunking: int = 0
    #: Serve this object verbatim as the card.
    card_override: dict[str, Any] | None = None
    #: Serve these bytes verbatim as the card (``__ORIGIN__`` is replaced by the origin).
    card_raw: bytes | None = None
    #: The well-known card path answers ``302 Location: <value>``.
    card_redirect_to: str | None = None
    #: Final state of a normal task: ``completed``, ``failed``, ``canceled`` or ``rejected``.
    task_final_state: str = "completed"
    #: Seconds a task stays WORKING before reaching its final state.
    task_delay: float = 0.0
    #: ``capabilities.streaming`` on the card (streaming methods answer -32004 when False).
    streaming: bool = True
    #: The JSON-RPC code push-config methods answer (the card never declares push; -32003 is the spec's).
    push_error_code: int = -32003
    #: A subscription starts with the Task (``"task"``, 1.0 §3.1.6) or straight with the updates (``"status"``).
    subscribe_first: str = "task"
    #: Status timestamps written at this offset (``"+00:00"``, ``"+02:00"``) instead of with 'Z' (1.0 §5.6.1).
    timestamp_offset: str = ""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {sorted(PROTOCOLS)}, not {self.protocol!r}")
        if self.stream_mode not in STREAM_MODES:
            raise ValueError(f"stream_mode must be one of {sorted(STREAM_MODES)}, not {self.stream_mode!r}")
        if self.stream_line_ending not in ("\n", "\r\n"):
            raise ValueError("stream_line_ending must be '\\n' or '\\r\\n'")
        if self.task_final_state not in FINAL_STATES:
            raise ValueError(f"task_final_state must be one of {sorted(FINAL_STATES)}")
        if self.card_prefix and not self.card_prefix.startswith("/"):
            raise ValueError("card_prefix must be empty or start with '/'")
        if self.advertised_path is not None and not self.advertised_path.startswith("/"):
            raise ValueError("advertised_path must start with '/'")
        if self.subscribe_first not in ("task", "status"):
            raise ValueError(f"subscribe_first must be 'task' or 'status', not {self.subscribe_first!r}")
        if self.stream_chunking < 0 or self.task_delay < 0:
            raise ValueError("stream_chunking and task_delay must be >= 0")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the agent received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes = b""  # first RECORDED_BODY_LIMIT bytes

    def header(self, name: str) -> str | None:
        """Case-insensitive header lookup."""
        wanted = name.lower()
        for key, value in self.headers.items():
            if key.lower() == wanted:
                return value
        return None

    def json(self) -> Any:
        """The body parsed as JSON (``None`` if it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class RpcError(Exception):
    """A JSON-RPC error raised inside a method handler."""

    def __init__(self, code: int, message: str | None = None, *, field: str | None = None) -> None:
        self.code = code
        self.message = message or _MESSAGES.get(code, "Error")
        self.field = field
        super().__init__(f"{code} {self.message}")


# --------------------------------------------------------------------------------------------------
# internal model (version-neutral) and its renderings


def _now(offset: str = "") -> str:
    """Now, in UTC with 'Z' (1.0 §5.6.1); with an offset ("+00:00", "+02:00"), the same instant written at it."""
    if not offset:
        return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    sign, hours, minutes = offset[0], int(offset[1:3]), int(offset[4:6])
    shift = timedelta(hours=hours, minutes=minutes) * (1 if sign == "+" else -1)
    return datetime.now(timezone(shift)).isoformat(timespec="milliseconds")


def _new_id() -> str:
    return str(uuid.uuid4())


@dataclass
class _Msg:
    message_id: str
    role: str  # "user" | "agent"
    parts: list[Json]  # 1.0 ProtoJSON parts: {text}|{raw}|{url}|{data} (+ mediaType/filename/metadata)
    context_id: str | None = None
    task_id: str | None = None
    metadata: Json | None = None

    @property
    def text(self) -> str:
        return " ".join(p["text"] for p in self.parts if isinstance(p.get("text"), str))


@dataclass
class _Artifact:
    artifact_id: str
    name: str
    parts: list[Json]


@dataclass(frozen=True)
class _Event:
    kind: str  # "status" | "artifact"
    task_id: str
    context_id: str
    state: str = ""
    timestamp: str = ""
    message: _Msg | None = None
    artifact: _Artifact | None = None

    @property
    def final(self) -> bool:
        return self.kind == "status" and (self.state in TERMINAL_STATES or self.state in INTERRUPTED_STATES)


_Queue = asyncio.Queue[_Event | None]


@dataclass(eq=False)
class _Task:
    id: str
    context_id: str
    state: str = "submitted"
    timestamp: str = field(default_factory=_now)
    status_message: _Msg | None = None
    history: list[_Msg] = field(default_factory=list)
    artifacts: list[_Artifact] = field(default_factory=list)
    listeners: list[_Queue] = field(default_factory=list)
    runner: asyncio.Task[None] | None = None

    @property
    def done(self) -> bool:
        return self.state in TERMINAL_STATES


def _v1_state(state: str) -> str:
    return "TASK_STATE_" + state.upper().replace("-", "_")


def _part_out(part: Json, dialect: str) -> Json:
    if dialect == "1.0":
        return dict(part)
    key = "kind" if dialect == "0.3" else "type"
    out: Json
    if "text" in part:
        out = {key: "text", "text": part["text"]}
    elif "data" in part:
        data = part["data"]
        out = {key: "data", "data": data if isinstance(data, dict) else {"value": data}}
    else:
        file: Json = {"bytes": part["raw"]} if "raw" in part else {"uri": part.get("url", "")}
        if "filename" in part:
            file["name"] = part["filename"]
        if "mediaType" in part:
            file["mimeType"] = part["mediaType"]
        out = {key: "file", "file": file}
    if "metadata" in part:
        out["metadata"] = part["metadata"]
    return out


def _msg_out(msg: _Msg, dialect: str) -> Json:
    parts = [_part_out(p, dialect) for p in msg.parts]
    if dialect == "0.1":
        return {"role": msg.role, "parts": parts}
    out: Json = {}
    if dialect == "0.3":
        out["kind"] = "message"
    out["messageId"] = msg.message_id
    if msg.context_id:
        out["contextId"] = msg.context_id
    if msg.task_id:
        out["taskId"] = msg.task_id
    out["role"] = ("ROLE_" + msg.role.upper()) if dialect == "1.0" else msg.role
    out["parts"] = parts
    if msg.metadata:
        out["metadata"] = msg.metadata
    return out


def _status_out(state: str, timestamp: str, message: _Msg | None, dialect: str) -> Json:
    out: Json = {"state": _v1_state(state) if dialect == "1.0" else state}
    if message is not None:
        out["message"] = _msg_out(message, dialect)
    out["timestamp"] = timestamp
    return out


def _artifact_out(art: _Artifact, dialect: str, index: int = 0) -> Json:
    parts = [_part_out(p, dialect) for p in art.parts]
    if dialect == "0.1":
        return {"name": art.name, "parts": parts, "index": index}
    return {"artifactId": art.artifact_id, "name": art.name, "parts": parts}


def _task_out(task: _Task, dialect: str, history_length: int | None = None) -> Json:
    out: Json = {}
    if dialect == "0.3":
        out["kind"] = "task"
    out["id"] = task.id
    if dialect == "0.1":
        out["sessionId"] = task.context_id
    else:
        out["contextId"] = task.context_id
    out["status"] = _status_out(task.state, task.timestamp, task.status_message, dialect)
    if task.artifacts:
        out["artifacts"] = [_artifact_out(a, dialect, i) for i, a in enumerate(task.artifacts)]
    history = task.history
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    if history:
        out["history"] = [_msg_out(m, dialect) for m in history]
    if dialect == "0.1":
        out["metadata"] = {}
    return out


def _event_out(event: _Event, dialect: str) -> Json:
    if event.kind == "status":
        status = _status_out(event.state, event.timestamp, event.message, dialect)
        if dialect == "1.0":
            ids = {"taskId": event.task_id, "contextId": event.context_id}
            return {"statusUpdate": {**ids, "status": status}}
        return {
            "kind": "status-update",
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": status,
            "final": event.final,
        }
    assert event.artifact is not None
    body: Json = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": _artifact_out(event.artifact, dialect),
        "append": False,
        "lastChunk": True,
    }
    if dialect == "1.0":
        return {"artifactUpdate": body}
    return {"kind": "artifact-update", **body}


def _result_task(task: _Task, dialect: str, history_length: int | None = None) -> Json:
    """SendMessage result / first stream event: 1.0 wraps in ``{"task"}``, 0.x is the bare Task."""
    rendered = _task_out(task, dialect, history_length)
    return {"task": rendered} if dialect == "1.0" else rendered


def _result_message(msg: _Msg, dialect: str) -> Json:
    rendered = _msg_out(msg, dialect)
    return {"message": rendered} if dialect == "1.0" else rendered


def _error_obj(code: int, message: str, dialect: str, field_name: str | None = None) -> Json:
    err: Json = {"code": code, "message": message}
    if dialect == "1.0":
        details: list[Json] = []
        reason = _REASONS.get(code)
        if reason:
            details.append({"@type": _ERROR_INFO_TYPE, "reason": reason, "domain": _DOMAIN})
        if code == -32602 and field_name:
            violation = {"field": field_name, "description": message}
            details.append({"@type": _BAD_REQUEST_TYPE, "fieldViolations": [violation]})
        if details:
            err["data"] = details
    return err


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _rpc_response(rpc_id: Any, *, result: Any = None, error: Json | None = None) -> web.Response:
    body: Json = {"jsonrpc": "2.0", "id": rpc_id}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    return web.Response(text=_dumps(body), content_type="application/json")


# --------------------------------------------------------------------------------------------------
# request parsing helpers


def _part_in(raw: Any, dialect: str, where: str) -> Json:
    if not isinstance(raw, dict):
        raise RpcError(-32602, f"{where} must be an object", field=where)
    meta = {k: raw[k] for k in ("metadata",) if k in raw}
    if dialect == "1.0":
        kinds = [k for k in ("text", "raw", "url", "data") if k in raw]
        if len(kinds) != 1:
            raise RpcError(-32602, f"{where} must have exactly one of text/raw/url/data", field=where)
        kind = kinds[0]
        if kind != "data" and not isinstance(raw[kind], str):
            raise RpcError(-32602, f"{where}.{kind} must be a string", field=f"{where}.{kind}")
        out = {k: raw[k] for k in (kind, "mediaType", "filename") if k in raw}
        return {**out, **meta}
    key = "kind" if dialect == "0.3" else "type"
    kind_val = raw.get(key, "text" if "text" in raw else None)
    if kind_val == "text":
        if not isinstance(raw.get("text"), str):
            raise RpcError(-32602, f"{where}.text must be a string", field=f"{where}.text")
        return {"text": raw["text"], **meta}
    if kind_val == "data":
        if "data" not in raw:
            raise RpcError(-32602, f"{where}.data is required", field=f"{where}.data")
        return {"data": raw["data"], **meta}
    if kind_val == "file":
        file = raw.get("file", raw) if dialect == "0.3" else raw.get("file")
        if not isinstance(file, dict) or not ("bytes" in file or "uri" in file):
            raise RpcError(-32602, f"{where}.file needs bytes or uri", field=f"{where}.file")
        part: Json = {"raw": file["bytes"]} if "bytes" in file else {"url": file["uri"]}
        if "name" in file:
            part["filename"] = file["name"]
        if "mimeType" in file:
            part["mediaType"] = file["mimeType"]
        return {**part, **meta}
    raise RpcError(-32602, f"{where}.{key} must be text, file or data", field=f"{where}.{key}")


#: The card's defaultInputModes: a part of any other media type gets ContentTypeNotSupportedError (-32005).
INPUT_MODES: Final = ("text/plain",)


def _accepted_media(msg: _Msg) -> None:
    for i, part in enumerate(msg.parts):
        media = str(part.get("mediaType") or "text/plain").split(";", 1)[0].strip().lower()
        if media not in INPUT_MODES:
            raise RpcError(-32005, f"media type {media} is not accepted (only {', '.join(INPUT_MODES)})",
                           field=f"message.parts[{i}].mediaType")


def _message_in(raw: Any, dialect: str) -> _Msg:
    if not isinstance(raw, dict):
        raise RpcError(-32602, "message is required", field="message")
    message_id: Any = _new_id() if dialect == "0.1" else raw.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        raise RpcError(-32602, "message.messageId is required", field="message.messageId")
    role = raw.get("role")
    roles = _V1_ROLES if dialect == "1.0" else _LEGACY_ROLES
    if role not in roles:
        raise RpcError(-32602, f"message.role must be one of {sorted(roles)}", field="message.role")
    parts = raw.get("parts")
    if not isinstance(parts, list) or not parts:
        raise RpcError(-32602, "message.parts must be a non-empty list", field="message.parts")
    for key in ("taskId", "contextId"):
        if key in raw and not isinstance(raw[key], str):
            raise RpcError(-32602, f"message.{key} must be a string", field=f"message.{key}")
    metadata = raw.get("metadata")
    msg = _Msg(
        message_id=message_id,
        role=roles[role],
        parts=[_part_in(p, dialect, f"message.parts[{i}]") for i, p in enumerate(parts)],
        context_id=raw.get("contextId") or None,
        task_id=raw.get("taskId") or None,
        metadata=metadata if isinstance(metadata, dict) else None,
    )
    _accepted_media(msg)
    return msg


def _opt_history_length(params: Json, where: str = "historyLength") -> int | None:
    value = params.get("historyLength")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RpcError(-32602, f"{where} must be a non-negative integer", field=where)
    return value


def _task_id_param(params: Json) -> str:
    task_id = params.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise RpcError(-32602, "id is required", field="id")
    return task_id


def _valid_rpc_id(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


def _version_ok(header: str) -> bool:
    parts = header.strip().split(".")
    return parts[0] == "1" and all(p.isdigit() for p in parts)


# --------------------------------------------------------------------------------------------------
# SSE writing


class _Sse:
    def __init__(self, resp: web.StreamResponse, rpc_id: Any, line_ending: str, chunking: int) -> None:
        self.resp = resp
        self.rpc_id = rpc_id
        self.le = line_ending
        self.chunking = chunking

    async def _send(self, text: str) -> None:
        data = text.encode()
        if self.chunking <= 0:
            await self.resp.write(data)
            return
        for start in range(0, len(data), self.chunking):
            await self.resp.write(data[start : start + self.chunking])
            await asyncio.sleep(CHUNK_PAUSE)

    async def result(self, result: Json) -> None:
        envelope = {"jsonrpc": "2.0", "id": self.rpc_id, "result": result}
        await self._send(f"data: {_dumps(envelope)}{self.le}{self.le}")

    async def error(self, error: Json) -> None:
        envelope = {"jsonrpc": "2.0", "id": self.rpc_id, "error": error}
        await self._send(f"event: error{self.le}data: {_dumps(envelope)}{self.le}{self.le}")

    async def comment(self, text: str) -> None:
        await self._send(f": {text}{self.le}{self.le}")


# --------------------------------------------------------------------------------------------------
# the agent

_RpcHandler = Callable[[web.Request, Any, Json, str], Awaitable[Any]]


class DemoAgent:
    """An in-process A2A echo agent for tests. ``faults`` selects the (mis)behaviour."""

    def __init__(self, name: str = "demo-agent", faults: Faults | None = None) -> None:
        self.name = name
        self.faults = faults if faults is not None else Faults()
        self.requests: list[RecordedRequest] = []
        self.origin: str | None = None
        self._prefix = self.faults.card_prefix.rstrip("/")
        self._tasks: OrderedDict[str, _Task] = OrderedDict()
        self._runners: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()
        self._open_streams = 0
        self._served: contextlib.AsyncExitStack | None = None  # the serve() context while started
        self._methods = self._method_table()

    # ---- lifecycle ---------------------------------------------------------------------------

    def app(self) -> web.Application:
        """A fresh aiohttp application serving this agent (shares the agent's state)."""
        self._closing = asyncio.Event()
        app = web.Application(middlewares=[self._middleware()])
        prefix = self._prefix
        card_paths = [LEGACY_CARD_PATH] if self.faults.protocol == "0.1" else [CARD_PATH]
        for path in card_paths:
            app.router.add_get(prefix + path, self._handle_card)
        rpc_paths = [prefix, prefix + "/"] if prefix else ["/"]
        for path in rpc_paths:
            app.router.add_post(path, self._handle_rpc)
            if self.faults.interface_html:
                app.router.add_get(path, self._handle_html)
        app.on_shutdown.append(self._on_shutdown)
        return app

    async def start(self, host: str = "127.0.0.1") -> str:
        """Serve on ``host`` and a free port (the one server helper); return the origin ``http://host:PORT``."""
        if self._served is not None:
            raise RuntimeError("agent already started")
        served = contextlib.AsyncExitStack()
        self.origin = await served.enter_async_context(serve(self.app(), host=host))
        self._served = served
        return self.origin

    async def stop(self) -> None:
        """Stop serving; open streams end, running tasks are cancelled."""
        served, self._served = self._served, None
        if served is not None:
            await served.aclose()
        await self._shutdown_work()
        self.origin = None

    async def __aenter__(self) -> DemoAgent:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def open_streams(self) -> int:
        """Number of SSE responses currently being written."""
        return self._open_streams

    @property
    def rpc_url(self) -> str:
        """The real JSON-RPC URL (requires :meth:`start`)."""
        return self._require_origin() + (self._prefix or "/")

    @property
    def card_url(self) -> str:
        """The URL where the card is actually served (requires :meth:`start`)."""
        path = LEGACY_CARD_PATH if self.faults.protocol == "0.1" else CARD_PATH
        return self._require_origin() + self._prefix + path

    def _require_origin(self) -> str:
        if self.origin is None:
            raise RuntimeError("agent not started")
        return self.origin

    async def _on_shutdown(self, _app: web.Application) -> None:
        await self._shutdown_work()

    async def _shutdown_work(self) -> None:
        self._closing.set()
        for task in list(self._tasks.values()):
            for queue in task.listeners:
                queue.put_nowait(None)
        runners = list(self._runners)
        for runner in runners:
            runner.cancel()
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)

    # ---- middleware --------------------------------------------------------------------------

    def _middleware(self) -> Middleware:
        @web.middleware
        async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
            body = b""
            if request.body_exists:
                body = await request.read()
            self.requests.append(
                RecordedRequest(
                    method=request.method,
                    path=request.path,
                    query=request.query_string,
                    headers=dict(request.headers),
                    body=body[:RECORDED_BODY_LIMIT],
                )
            )
            if len(self.requests) > MAX_RECORDED:
                del self.requests[:-MAX_RECORDED]
            try:
                return await handler(request)
            except web.HTTPNotFound:
                # like a gateway / ingress: plain text, not JSON
                return web.Response(status=404, text="404 Not Found", content_type="text/plain")

        return middleware

    # ---- card --------------------------------------------------------------------------------

    def _origin_for(self, request: web.Request) -> str:
        return self.origin or f"{request.scheme}://{request.host}"

    def _advertised_url(self, request: web.Request) -> str:
        f = self.faults
        base = f"http://{f.advertised_host}" if f.advertised_host else self._origin_for(request)
        path = f.advertised_path if f.advertised_path is not None else (self._prefix or "/")
        return base + path

    def _skills(self) -> list[Json]:
        return [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Echoes the text it receives, prefixed with 'echo: '.",
                "tags": ["demo", "echo"],
                "examples": ["hello"],
            }
        ]

    def build_card(self, request: web.Request) -> Json:
        """The card this agent serves (ignores ``card_override``/``card_raw``)."""
        f = self.faults
        url = self._advertised_url(request)
        description = f"{self.name}: a2a-probe demo echo agent"
        if f.protocol == "0.1":
            return {
                "name": self.name,
                "description": description,
                "url": url,
                "version": "1.0.0",
                "capabilities": {"streaming": False, "pushNotifications": False},
                "authentication": {"schemes": ["Bearer"]},
                "defaultInputModes": list(INPUT_MODES),
                "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "echo", "name": "Echo"}],
            }
        common: Json = {"description": description, "skills": self._skills(),
                        "capabilities": {"streaming": f.streaming, "pushNotifications": False}}
        if f.protocol == "0.3":
            return valid_card(url, name=self.name, version="0.3", **common)
        interfaces: list[tuple[str, str, str] | str] = [url]
        hybrid: Json = {}
        if f.protocol == "hybrid":
            interfaces.append((url, "JSONRPC", "0.3"))
            hybrid = {"preferredTransport": "JSONRPC", "protocolVersion": "0.3", "url": url}
        return valid_card(*interfaces, name=self.name, **common, **hybrid)

    async def _handle_card(self, request: web.Request) -> web.StreamResponse:
        f = self.faults
        if f.card_redirect_to is not None:
            return web.Response(status=302, headers={"Location": f.card_redirect_to})
        if f.card_raw is not None:
            body = f.card_raw.replace(ORIGIN_PLACEHOLDER, self._origin_for(request).encode())
        elif f.card_override is not None:
            body = _dumps(f.card_override).encode()
        else:
            body = _dumps(self.build_card(request)).encode()
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers = {"Cache-Control": "max-age=300", "ETag": etag}
        inm = request.headers.get("If-None-Match")
        if inm is not None:
            candidates = {c.strip().removeprefix("W/") for c in inm.split(",")}
            if etag in candidates or "*" in candidates:
                return web.Response(status=304, headers=headers)
        return web.Response(body=body, content_type="application/json", headers=headers)

    # ---- JSON-RPC entry ----------------------------------------------------------------------

    async def _handle_html(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text=_SPA_HTML, content_type="text/html")

    def _method_table(self) -> dict[str, tuple[_RpcHandler, str]]:
        v1: dict[str, tuple[_RpcHandler, str]] = {
            "SendMessage": (self._send_message, "1.0"),
            "SendStreamingMessage": (self._send_streaming_message, "1.0"),
            "GetTask": (self._get_task, "1.0"),
            "ListTasks": (self._list_tasks, "1.0"),
            "CancelTask": (self._cancel_task, "1.0"),
            "SubscribeToTask": (self._subscribe, "1.0"),
            "CreateTaskPushNotificationConfig": (self._push_unsupported, "1.0"),
            "GetTaskPushNotificationConfig": (self._push_unsupported, "1.0"),
            "ListTaskPushNotificationConfigs": (self._push_unsupported, "1.0"),
            "DeleteTaskPushNotificationConfig": (self._push_unsupported, "1.0"),
            "GetExtendedAgentCard": (self._unsupported, "1.0"),
        }
        v03: dict[str, tuple[_RpcHandler, str]] = {
            "message/send": (self._send_message, "0.3"),
            "message/stream": (self._send_streaming_message, "0.3"),
            "tasks/get": (self._get_task, "0.3"),
            "tasks/cancel": (self._cancel_task, "0.3"),
            "tasks/resubscribe": (self._subscribe, "0.3"),
            "tasks/pushNotificationConfig/set": (self._push_unsupported, "0.3"),
            "tasks/pushNotificationConfig/get": (self._push_unsupported, "0.3"),
            "tasks/pushNotificationConfig/list": (self._push_unsupported, "0.3"),
            "tasks/pushNotificationConfig/delete": (self._push_unsupported, "0.3"),
        }
        v01: dict[str, tuple[_RpcHandler, str]] = {
            "tasks/send": (self._tasks_send_01, "0.1"),
            "tasks/get": (self._get_task, "0.1"),
        }
        protocol = self.faults.protocol
        if protocol == "1.0":
            return v1
        if protocol == "0.3":
            return v03
        if protocol == "hybrid":
            return {**v1, **v03}
        return v01

    async def _handle_rpc(self, request: web.Request) -> web.StreamResponse:
        f = self.faults
        if f.interface_html:
            return await self._handle_html(request)
        version_header = request.headers.get("A2A-Version", "").strip()
        if f.require_version_header and not version_header:
            return web.json_response({"error": "missing or unsupported A2A-Version"}, status=400)
        default_dialect = "0.1" if f.protocol == "0.1" else ("0.3" if f.protocol == "0.3" else "1.0")

        raw = await request.read()
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            return _rpc_response(None, error={"code": -32700, "message": f"Parse error: {exc}"})
        if not isinstance(body, dict):
            message = "Batch requests are not supported" if isinstance(body, list) else "Invalid Request"
            return _rpc_response(None, error={"code": -32600, "message": message})
        rpc_id = body.get("id")
        if not _valid_rpc_id(rpc_id):
            return _rpc_response(None, error={"code": -32600, "message": "Invalid Request: bad id"})
        method = body.get("method")
        if body.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return _rpc_response(rpc_id, error={"code": -32600, "message": "Invalid Request"})
        if f.jsonrpc_error is not None:
            code = f.jsonrpc_error
            message = _MESSAGES.get(code, "Server error")
            return _rpc_response(rpc_id, error=_error_obj(code, message, default_dialect))
        entry = self._methods.get(method)
        if entry is None:
            return _rpc_response(rpc_id, error={"code": -32601, "message": "Method not found"})
        handler, dialect = entry
        if dialect == "1.0":
            requested = version_header or request.query.get("A2A-Version", "").strip() or "0.3"
            if not _version_ok(requested):
                message = f"A2A version '{requested}' is not supported by this agent. Supported versions: 1.0"
                return _rpc_response(rpc_id, error=_error_obj(-32009, message, dialect))
        params = body.get("params", {})
        if params is None:
            params = {}
        try:
            if not isinstance(params, dict):
                raise RpcError(-32602, "params must be an object", field="params")
            result = await handler(request, rpc_id, params, dialect)
        except RpcError as err:
            return _rpc_response(rpc_id, error=_error_obj(err.code, err.message, dialect, err.field))
        if isinstance(result, web.StreamResponse):
            return result
        return _rpc_response(rpc_id, result=result)

    # ---- task store --------------------------------------------------------------------------

    def _store(self, task: _Task) -> None:
        self._tasks[task.id] = task
        self._tasks.move_to_end(task.id)
        while len(self._tasks) > MAX_TASKS:
            self._tasks.popitem(last=False)

    def _lookup(self, task_id: str) -> _Task:
        task = self._tasks.get(task_id)
        if task is None:
            raise RpcError(-32001, f"Task not found: {task_id}")
        self._tasks.move_to_end(task_id)
        return task

    def _emit(self, task: _Task, event: _Event) -> None:
        for queue in task.listeners:
            queue.put_nowait(event)

    def _set_state(self, task: _Task, state: str, message: _Msg | None = None, *, task_id: str = "") -> None:
        task.state = state
        task.timestamp = _now(self.faults.timestamp_offset)
        task.status_message = message
        self._emit(
            task,
            _Event("status", task_id or task.id, task.context_id, state, task.timestamp, message),
        )

    def _agent_msg(self, task: _Task, text: str) -> _Msg:
        return _Msg(_new_id(), "agent", [{"text": text}], context_id=task.context_id, task_id=task.id)

    def _start(self, task: _Task, text: str, followup: bool) -> None:
        runner = asyncio.create_task(self._run(task, text, followup))
        task.runner = runner
        self._runners.add(runner)
        runner.add_done_callback(self._runners.discard)

    async def _run(self, task: _Task, text: str, followup: bool) -> None:
        self._set_state(task, "working")
        if self.faults.task_delay > 0:
            await asyncio.sleep(self.faults.task_delay)
        if task.done:
            return
        if not followup and "input" in text.lower():
            self._set_state(task, "input-required", self._agent_msg(task, "Need more input: what next?"))
            return
        final = self.faults.task_final_state
        if final == "completed":
            art = _Artifact(_new_id(), "result", [{"text": f"echo: {text}"}])
            task.artifacts.append(art)
            self._emit(task, _Event("artifact", task.id, task.context_id, artifact=art))
            self._set_state(task, "completed")
        elif final == "canceled":
            self._set_state(task, "canceled")
        else:
            self._set_state(task, final, self._agent_msg(task, f"task {final} (injected fault)"))

    async def _wait(self, task: _Task) -> None:
        runner = task.runner
        if runner is not None and not runner.done():
            await asyncio.wait({runner})

    def _begin(self, msg: _Msg, dialect: str, *, client_task_id: str | None = None) -> tuple[_Task, bool] | None:
        """Create or continue the task for ``msg``.

        Returns ``(task, start_runner)``, or ``None`` when the reply is a Message (no task).
        """
        if client_task_id is not None:  # 0.1: the client names the task
            existing = self._tasks.get(client_task_id)
            if existing is not None and not existing.done:
                return self._continue(existing, msg)
            return self._create(msg, client_task_id), True
        if msg.task_id is not None:
            existing = self._lookup(msg.task_id)
            if existing.done:
                raise RpcError(-32004, f"Task {existing.id} is in a terminal state ({existing.state})")
            if msg.context_id and msg.context_id != existing.context_id:
                raise RpcError(-32602, "message.contextId does not match the task", field="message.contextId")
            return self._continue(existing, msg)
        if dialect != "0.1" and "message" in msg.text.lower():
            return None
        return self._create(msg, None), True

    def _create(self, msg: _Msg, task_id: str | None) -> _Task:
        context_id = msg.context_id or _new_id()
        task = _Task(id=task_id or _new_id(), context_id=context_id, timestamp=_now(self.faults.timestamp_offset))
        msg.task_id, msg.context_id = task.id, context_id
        task.history.append(msg)
        self._store(task)
        return task

    def _continue(self, task: _Task, msg: _Msg) -> tuple[_Task, bool]:
        msg.task_id, msg.context_id = task.id, task.context_id
        if task.state in INTERRUPTED_STATES:
            if task.status_message is not None:
                task.history.append(task.status_message)
            task.history.append(msg)
            return task, True
        task.history.append(msg)  # still running: just record the message
        return task, False

    def _message_reply(self, msg: _Msg) -> _Msg:
        parts: list[Json] = [{"text": f"echo: {msg.text}"}]
        return _Msg(_new_id(), "agent", parts, context_id=msg.context_id or _new_id())

    # ---- methods -----------------------------------------------------------------------------

    async def _send_message(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        msg = _message_in(params.get("message"), dialect)
        config = params.get("configuration") or {}
        if not isinstance(config, dict):
            raise RpcError(-32602, "configuration must be an object", field="configuration")
        history_length = _opt_history_length(config, "configuration.historyLength")
        if dialect == "1.0":
            blocking = not bool(config.get("returnImmediately", False))
        else:
            blocking = bool(config.get("blocking", True))
        begun = self._begin(msg, dialect)
        if begun is None:
            return _result_message(self._message_reply(msg), dialect)
        task, start = begun
        if start:
            self._start(task, msg.text, followup=task.state in INTERRUPTED_STATES)
        if blocking:
            await self._wait(task)
        return _result_task(task, dialect, history_length)

    async def _tasks_send_01(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        task_id = _task_id_param(params)
        msg = _message_in(params.get("message"), dialect)
        history_length = _opt_history_length(params)
        session_id = params.get("sessionId")
        if isinstance(session_id, str) and session_id:
            msg.context_id = session_id  # 0.1 sessionId plays the role of contextId
        begun = self._begin(msg, dialect, client_task_id=task_id)
        assert begun is not None
        task, start = begun
        if start:
            self._start(task, msg.text, followup=task.state in INTERRUPTED_STATES)
        await self._wait(task)
        return _task_out(task, dialect, history_length)

    async def _get_task(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        task = self._lookup(_task_id_param(params))
        return _task_out(task, dialect, _opt_history_length(params))

    async def _list_tasks(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        page_size = params.get("pageSize", 50)
        if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 100:
            raise RpcError(-32602, "pageSize must be between 1 and 100", field="pageSize")
        token = params.get("pageToken") or "0"
        if not isinstance(token, str) or not token.isdigit():
            raise RpcError(-32602, "invalid pageToken", field="pageToken")
        history_length = _opt_history_length(params)
        tasks = sorted(self._tasks.values(), key=lambda t: t.timestamp, reverse=True)
        if isinstance(params.get("contextId"), str) and params["contextId"]:
            tasks = [t for t in tasks if t.context_id == params["contextId"]]
        if isinstance(params.get("status"), str) and params["status"]:
            tasks = [t for t in tasks if _v1_state(t.state) == params["status"]]
        offset = int(token)
        page = tasks[offset : offset + page_size]
        include_artifacts = bool(params.get("includeArtifacts", False))
        rendered = []
        for t in page:
            item = _task_out(t, dialect, history_length)
            if not include_artifacts:
                item.pop("artifacts", None)
            rendered.append(item)
        next_token = str(offset + page_size) if offset + page_size < len(tasks) else ""
        return {
            "tasks": rendered,
            "nextPageToken": next_token,
            "pageSize": page_size,
            "totalSize": len(tasks),
        }

    async def _cancel_task(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        task = self._lookup(_task_id_param(params))
        if task.done:
            raise RpcError(-32002, f"Task cannot be canceled: {task.id} is {task.state}")
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()
        self._set_state(task, "canceled")
        return _task_out(task, dialect)

    async def _push_unsupported(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        raise RpcError(self.faults.push_error_code)

    async def _unsupported(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        raise RpcError(-32004)

    # ---- streaming ---------------------------------------------------------------------------

    async def _send_streaming_message(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        if not self.faults.streaming:
            raise RpcError(-32004, "Streaming is not supported by this agent")
        msg = _message_in(params.get("message"), dialect)
        begun = self._begin(msg, dialect)
        if begun is None:
            resp, sse = await self._open_sse(request, rpc_id)
            self._open_streams += 1
            try:
                await sse.result(_result_message(self._message_reply(msg), dialect))
            except ConnectionError:
                return resp
            finally:
                self._open_streams -= 1
            return await self._finish(resp)
        task, start = begun
        followup = task.state in INTERRUPTED_STATES
        return await self._stream_task(
            request, rpc_id, dialect, task, (lambda: self._start(task, msg.text, followup)) if start else None
        )

    async def _subscribe(self, request: web.Request, rpc_id: Any, params: Json, dialect: str) -> Any:
        if not self.faults.streaming:
            raise RpcError(-32004, "Streaming is not supported by this agent")
        task = self._lookup(_task_id_param(params))
        if task.done:
            raise RpcError(-32004, f"Task {task.id} is in a terminal state ({task.state})")
        return await self._stream_task(request, rpc_id, dialect, task, None,
                                       snapshot=self.faults.subscribe_first == "task")

    async def _open_sse(self, request: web.Request, rpc_id: Any) -> tuple[web.StreamResponse, _Sse]:
        f = self.faults
        resp = web.StreamResponse(status=200)
        wrong = f.stream_mode == "wrong_content_type"
        resp.content_type = "application/json" if wrong else "text/event-stream"
        resp.headers["Cache-Control"] = "no-cache"
        resp.headers["X-Accel-Buffering"] = "no"
        await resp.prepare(request)
        return resp, _Sse(resp, rpc_id, f.stream_line_ending, f.stream_chunking)

    async def _finish(self, resp: web.StreamResponse) -> web.StreamResponse:
        with contextlib.suppress(ConnectionError):
            await resp.write_eof()
        return resp

    async def _stream_task(
        self,
        request: web.Request,
        rpc_id: Any,
        dialect: str,
        task: _Task,
        start: Callable[[], None] | None,
        *,
        snapshot: bool = True,
    ) -> web.StreamResponse:
        mode = self.faults.stream_mode
        queue: _Queue = asyncio.Queue()
        task.listeners.append(queue)
        self._open_streams += 1
        resp: web.StreamResponse | None = None
        try:
            resp, sse = await self._open_sse(request, rpc_id)
            if snapshot:
                await sse.result(_result_task(task, dialect))
            if mode in ("never_terminates", "error_event"):
                # scripted: the agent "hangs" (never_terminates) or "crashes" (error_event) after WORKING
                self._set_state(task, "working")
                event = queue.get_nowait()
                if event is not None:
                    await sse.result(_event_out(event, dialect))
                if mode == "error_event":
                    await sse.error({"code": -32603, "message": "boom: agent crashed (injected fault)"})
                    self._set_state(task, "failed", self._agent_msg(task, "boom: agent crashed"))
                    return await self._finish(resp)
                while not self._closing.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._closing.wait(), KEEPALIVE_INTERVAL)
                        break
                    await sse.comment("keep-alive")
                return await self._finish(resp)
            if start is not None:
                start()
            id_changed = False
            while True:
                event = await queue.get()
                if event is None:  # agent shutting down
                    break
                await sse.result(_event_out(event, dialect))
                if event.kind == "status" and event.state == "working":
                    if mode == "closes_early":
                        break
                    if mode == "task_id_changes" and not id_changed:
                        id_changed = True
                        rogue = _Event("status", _new_id(), event.context_id, "working", _now())
                        await sse.result(_event_out(rogue, dialect))
                if event.final:
                    if mode == "regression":
                        back = _Event("status", task.id, task.context_id, "working", _now())
                        await sse.result(_event_out(back, dialect))
                    break
            return await self._finish(resp)
        except ConnectionError:  # client went away
            return resp if resp is not None else web.StreamResponse()
        finally:
            self._open_streams -= 1
            with contextlib.suppress(ValueError):
                task.listeners.remove(queue)
