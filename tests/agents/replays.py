"""Wire-shape replays of the official Go (a2aproject/a2a-go) and Java (a2aproject/a2a-java) A2A servers.

Nobody here can run those servers (no Go toolchain, no JVM build), so each replay answers as the SDK's own server
code does, byte for byte in shape: the SDK's field order, omitted vs empty vs default fields, enum spellings, SSE
framing (`id:` lines, comments), error envelopes and HTTP statuses. docs/replays.md cites the SDK source for every
shape. The bodies are built here as the SDK's JSON text (dicts in the SDK's field order, serialised compactly as
Go's encoding/json and protobuf's JsonFormat.omittingInsignificantWhitespace do), never through the probe's models.

A replay keeps the tasks it made (GetTask finds them, an unknown id gets the SDK's TaskNotFound answer) and answers
the requests the SDK refuses as the SDK refuses them (parse errors, unknown methods, A2A-Version where the SDK checks
it). The agent behind each SDK server is its conformance-kit agent (e2e/tck in a2a-go): SUBMITTED, WORKING, one
text artifact, COMPLETED; `message_reply=True` is the SDKs' hello-world agent instead, which answers with a
Message.

Lines replayed (`LINES`): go-1.0-jsonrpc, go-1.0-rest, go-1.0-grpc (a2a-go v2.3.1), go-0.3-jsonrpc (a2a-go
v0.3.15), java-1.0-jsonrpc, java-1.0-rest, java-1.0-grpc (a2a-java v1.2.0.Final), java-0.3-jsonrpc,
java-0.3-rest (a2a-java v0.3.3.Final). The gRPC lines are served by grpc.aio with a2a-sdk's lf.a2a.v1 stubs (the
wire is protobuf, so the shapes are the messages' field values and the statuses: code, message,
grpc-status-details-bin), the card over HTTP.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import a2a_pb2, a2a_pb2_grpc
from aiohttp import web
from google.protobuf import any_pb2, json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2

from tests.agents.server import serve

LINES = ("go-1.0-jsonrpc", "go-1.0-rest", "go-1.0-grpc", "go-0.3-jsonrpc", "java-1.0-jsonrpc", "java-1.0-rest",
         "java-1.0-grpc", "java-0.3-jsonrpc", "java-0.3-rest")
_BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON", "grpc": "GRPC"}
GO_TEXT = "Hello, world!"
JAVA_TEXT = "Hello World"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
DOMAIN = "a2a-protocol.org"


def compact(obj: Any) -> str:
    """Go's json.Marshal / protobuf's omittingInsignificantWhitespace printer / Gson / Jackson: no spaces."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


_GSON_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "=": "\\u003d", "'": "\\u0027"}


def gson_escape(text: str) -> str:
    """protobuf-java's JsonFormat writes strings with a default Gson (gson.toJson), which escapes the HTML
    characters < > & = ' as \\uXXXX. They can only occur inside strings of a JSON text, so the whole text is mapped."""
    return "".join(_GSON_HTML.get(c, c) for c in text)


def proto_compact(obj: Any) -> str:
    """protobuf-java's JsonFormat.printer().omittingInsignificantWhitespace(): no blanks, Gson's string escapes."""
    return gson_escape(compact(obj))


def pretty(obj: Any, level: int = 0) -> str:
    """protobuf-java's JsonFormat.printer() default layout (JsonFormat.PrinterImpl with a PrettyTextGenerator): an
    object opens with `{` and a newline, one `"k": v` per line two spaces deeper, `,` and a newline between them,
    the `}` on its own line at the object's depth (an empty one is `{` newline `}`); a repeated field stays on
    the key's line, `[` elements joined by `, ` `]`, a message element opening inline (`[{` … `}, {` … `}]`)."""
    if isinstance(obj, dict):
        if not obj:
            return "{\n" + "  " * level + "}"
        pad = "  " * (level + 1)
        fields = ",\n".join(f"{pad}{json.dumps(k)}: {pretty(v, level + 1)}" for k, v in obj.items())
        return "{\n" + fields + "\n" + "  " * level + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(pretty(v, level) for v in obj) + "]"
    return gson_escape(json.dumps(obj, ensure_ascii=False))


def go_time(when: dt.datetime, offset: str | None = None) -> str:
    """Go's time.Time.MarshalJSON (RFC 3339 with nanoseconds, trailing zeros trimmed) of a2a.NewStatusUpdateEvent's
    time.Now(): local time, so 'Z' only on a host whose zone is UTC, `offset` (e.g. "+02:00") elsewhere."""
    nanos = f"{when.microsecond:06d}417".rstrip("0")  # Linux clocks give nanoseconds: 7 to 9 digits, trimmed
    base = when.strftime("%Y-%m-%dT%H:%M:%S")
    if offset is None:
        return f"{base}.{nanos}Z"
    sign, hours, minutes = offset[0], int(offset[1:3]), int(offset[4:6])
    delta = dt.timedelta(hours=hours, minutes=minutes) * (1 if sign == "+" else -1)
    local = when + delta
    return f"{local.strftime('%Y-%m-%dT%H:%M:%S')}.{nanos}{offset}"


def proto_time(when: dt.datetime) -> str:
    """protobuf's Timestamp JSON of a java.time.Instant (microsecond clock): UTC, 'Z', 3/6/9 fraction digits."""
    micros = when.microsecond
    frac = f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (frac if micros else "") + "Z"


def jackson_time(when: dt.datetime) -> str:
    """Jackson's OffsetDateTime (JavaTimeModule, shape STRING, adjusted to UTC): ISO-8601, trailing zeros trimmed."""
    frac = f"{when.microsecond:06d}".rstrip("0")
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


@dataclass
class Call:
    """One A2A call as the SDK's server decoded it: JSON-RPC id (None for REST), params, A2A-Version header."""

    rid: Any
    params: dict[str, Any]
    version: str | None


@dataclass
class Replay:
    """One SDK server line: `sdk` go|java, `version` 1.0|0.3, `binding` JSONRPC|HTTP+JSON|GRPC."""

    sdk: str
    version: str
    binding: str
    message_reply: bool = False  # the hello-world agent: one Message, no task
    tz_offset: str | None = None  # Go on a host whose local zone is not UTC
    card_overrides: dict[str, Any] = field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> the SDK-shaped task (without defaults)
    grpc_target: str = ""  # a gRPC line's host:port, once its server listens

    @classmethod
    def of(cls, line: str, **kw: Any) -> Replay:
        sdk, version, binding = line.split("-")
        return cls(sdk, version, _BINDINGS[binding], **kw)

    @property
    def path(self) -> str:
        """Where the server is mounted: a2a-go's examples at /invoke (JSON-RPC) and / (REST), a2a-java's Quarkus
        routes at the root. The root is the card's origin, so REST routes sit at /message:send."""
        if self.sdk == "go" and self.binding == "JSONRPC":
            return "/invoke"
        return ""

    # ---------------------------------------------------------------- the card

    def card(self, origin: str) -> tuple[str, dict[str, str]]:
        url = origin + (self.path or ("/" if self.sdk == "java" and self.binding == "JSONRPC" else ""))
        if self.sdk == "go" and self.binding == "GRPC":
            # examples/helloworld/server/grpc/main.go:92-111: NewAgentInterface("127.0.0.1:<port>", GRPC), no
            # Version (a2a/agent.go:75 has no omitempty: "version":""); served by NewStaticAgentCardHandler
            doc = {
                "supportedInterfaces": [{"url": self.grpc_target, "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
                "capabilities": {"streaming": True},
                "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                "description": "Just a hello world agent", "name": "Hello World Agent",
                "skills": [{"description": "Returns a 'Hello, world!'", "examples": ["hi", "hello"],
                            "id": "hello_world", "name": "Hello, world!", "tags": ["hello world"]}],
                "version": ""}
            headers = {"Content-Type": "application/json", "Access-Control-Allow-Origin": "*"}
        elif self.sdk == "go" and self.version == "1.0":
            # a2a/agent.go AgentCard, struct order; omitempty on capabilities' booleans, skill examples
            doc: dict[str, Any] = {
                "supportedInterfaces": [{"url": url, "protocolBinding": self.binding, "protocolVersion": "1.0"}],
                "capabilities": {"streaming": True},
                "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                "description": "A complete A2A agent implementation designed specifically for testing with the A2A "
                               "Technology Compatibility Kit (TCK)",
                "name": "TCK Core Agent",
                "skills": [{"description": "A complete A2A agent implementation designed for TCK testing",
                            "examples": ["tck", "testing", "core", "complete"], "id": "tck_core_agent",
                            "name": "TCK Core Agent", "tags": ["hello world", "how are you", "goodbye", "hi"]}],
                "version": "1.0.0"}
            headers = {"Content-Type": "application/json", "Access-Control-Allow-Origin": "*"}
        elif self.sdk == "go":
            # v0.3.15 a2a/agent.go: protocolVersion has no omitempty and neither the TCK SUT nor the hello-world
            # example sets it: "protocolVersion":"" (the constant a2a.Version "0.3.0" is never filled in)
            doc = {"capabilities": {"streaming": True}, "defaultInputModes": ["text"],
                   "defaultOutputModes": ["text"], "description": "Just a hello world agent",
                   "name": "Hello World Agent", "preferredTransport": "JSONRPC", "protocolVersion": "",
                   "skills": [{"description": "Returns a 'Hello, world!'", "examples": ["hi", "hello"],
                               "id": "hello_world", "name": "Hello, world!", "tags": ["hello world"]}],
                   "url": url, "version": ""}
            headers = {"Content-Type": "application/json", "Access-Control-Allow-Origin": "*"}
        elif self.version == "1.0":
            # spec AgentCard record through Gson (record order, nulls dropped); AgentCapabilities' booleans always
            doc = {"name": "Hello World Agent", "description": "Just a hello world agent", "version": "1.0.0",
                   "documentationUrl": "http://example.com/docs",
                   "capabilities": {"streaming": True, "pushNotifications": False, "extendedAgentCard": False},
                   "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                   "skills": [{"id": "hello_world", "name": "Returns hello world",
                               "description": "just returns hello world", "tags": ["hello world"],
                               "examples": ["hi", "hello world"]}],
                   "supportedInterfaces": [{"protocolBinding": self.binding,
                                            # examples/helloworld AgentCardProducer.java:39-46: GRPC "localhost:9000"
                                            "url": self.grpc_target if self.binding == "GRPC" else url,
                                            "protocolVersion": "1.0"}]}
            headers = {"Content-Type": "application/json"}
        else:
            # v0.3.3 AgentCard record through Jackson NON_ABSENT; the builder fills protocolVersion 0.3.0,
            # preferredTransport (JSONRPC unless set: a REST-only server must set HTTP+JSON, or AgentCardValidator
            # refuses the card) and additionalInterfaces (one entry: the preferred transport at the main url)
            doc = {"name": "Hello World Agent", "description": "Just a hello world agent", "url": url,
                   "version": "1.0.0", "documentationUrl": "http://example.com/docs",
                   "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": False},
                   "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                   "skills": [{"id": "hello_world", "name": "Returns hello world",
                               "description": "just returns hello world", "tags": ["hello world"],
                               "examples": ["hi", "hello world"]}],
                   "supportsAuthenticatedExtendedCard": False,
                   "additionalInterfaces": [{"transport": self.binding, "url": url}],
                   "preferredTransport": self.binding, "protocolVersion": "0.3.0"}
            headers = {"Content-Type": "application/json"}
        doc |= self.card_overrides
        body = compact(doc)
        if self.sdk == "java" and self.version == "1.0":
            # AgentCardCacheMetadata: Cache-Control public, max-age=3600; ETag the quoted MD5 of the card's JSON;
            # Last-Modified the start time, RFC 1123
            headers |= {"Cache-Control": "public, max-age=3600", "Last-Modified": "Sat, 05 Dec 2026 09:00:00 GMT",
                        "ETag": '"' + hashlib.md5(body.encode()).hexdigest() + '"'}  # the SDK's own hash
        return body, headers

    # ---------------------------------------------------------------- the agent's work, in the SDK's shapes

    def _text(self) -> str:
        return GO_TEXT if self.sdk == "go" else JAVA_TEXT

    def _stamp(self) -> str:
        if self.sdk == "go":
            return go_time(_now(), self.tz_offset)
        return proto_time(_now()) if self.version == "1.0" else jackson_time(_now())

    def _part(self, text: str) -> dict[str, Any]:
        # 1.0: Go's flattened Part, ProtoJSON's oneof member; 0.3: a TextPart with its kind (Go: kind first, as
        # withKind embeds it; Jackson: the @JsonTypeName type id first)
        return {"text": text} if self.version == "1.0" else {"kind": "text", "text": text}

    def _user_message(self, msg: dict[str, Any], tid: str, cid: str) -> dict[str, Any]:
        """The client's message as the SDK stores and re-serialises it in the task's history."""
        texts = [p.get("text", "") for p in msg.get("parts", []) if isinstance(p, dict)]
        parts = [self._part(t) for t in texts]
        mid = msg.get("messageId", "")
        if self.sdk == "go" and self.version == "1.0":
            return {"messageId": mid, "contextId": cid, "parts": parts, "role": "ROLE_USER", "taskId": tid}
        if self.sdk == "go":
            return {"kind": "message", "messageId": mid, "contextId": cid, "parts": parts, "role": "user",
                    "taskId": tid}
        if self.version == "1.0":
            return {"messageId": mid, "contextId": cid, "taskId": tid, "role": "ROLE_USER", "parts": parts}
        return {"role": "user", "parts": parts, "messageId": mid, "contextId": cid, "taskId": tid, "kind": "message"}

    def _artifact(self) -> dict[str, Any]:
        # Go: artifactId, description, extensions, metadata, name, parts (omitempty); Java 0.3: the record's order
        return {"artifactId": str(uuid.uuid4()), "parts": [self._part(self._text())]}

    def _status(self, state: str, stamp: bool = True) -> dict[str, Any]:
        spelled = f"TASK_STATE_{state.upper()}" if self.version == "1.0" else state
        out: dict[str, Any] = {"state": spelled}
        if stamp:
            out["timestamp"] = self._stamp()
        return out

    def _task(self, tid: str, cid: str, status: dict[str, Any], history: list[dict[str, Any]],
              artifacts: list[dict[str, Any]]) -> dict[str, Any]:
        if self.sdk == "go" and self.version == "1.0":  # a2a.Task: id, artifacts, contextId, history, metadata, status
            out: dict[str, Any] = {"id": tid}
            if artifacts:
                out["artifacts"] = artifacts
            return out | {"contextId": cid, "history": history, "status": status}
        if self.sdk == "go":
            out = {"kind": "task", "id": tid}
            if artifacts:
                out["artifacts"] = artifacts
            return out | {"contextId": cid, "history": history, "status": status}
        if self.version == "1.0":  # proto field order: id, context_id, status, artifacts, history, metadata
            return {"id": tid, "contextId": cid, "status": status, "artifacts": artifacts, "history": history}
        out = {"id": tid, "contextId": cid, "status": status}  # Jackson NON_ABSENT: an empty list is written
        return out | {"artifacts": artifacts, "history": history, "kind": "task"}

    def _status_event(self, tid: str, cid: str, state: str, final: bool) -> dict[str, Any]:
        status = self._status(state)
        if self.sdk == "go" and self.version == "1.0":
            return {"statusUpdate": {"contextId": cid, "status": status, "taskId": tid}}
        if self.sdk == "go":
            return {"kind": "status-update", "contextId": cid, "final": final, "status": status, "taskId": tid}
        if self.version == "1.0":
            return {"statusUpdate": {"taskId": tid, "contextId": cid, "status": status}}
        return {"taskId": tid, "status": status, "contextId": cid, "final": final, "kind": "status-update"}

    def _artifact_event(self, tid: str, cid: str, artifact: dict[str, Any]) -> dict[str, Any]:
        if self.sdk == "go" and self.version == "1.0":  # append, artifact, contextId, lastChunk, taskId
            return {"artifactUpdate": {"artifact": artifact, "contextId": cid, "lastChunk": True, "taskId": tid}}
        if self.sdk == "go":
            return {"kind": "artifact-update", "artifact": artifact, "contextId": cid, "lastChunk": True,
                    "taskId": tid}
        if self.version == "1.0":
            return {"artifactUpdate": {"taskId": tid, "contextId": cid, "artifact": artifact, "lastChunk": True}}
        return {"taskId": tid, "artifact": artifact, "contextId": cid, "append": False, "lastChunk": True,
                "kind": "artifact-update"}

    def _agent_message(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The hello-world agents' answer: a2a.NewMessage (no context or task id) / AgentEmitter.sendMessage."""
        if self.sdk == "go" and self.version == "1.0":
            return {"messageId": str(uuid.uuid4()), "parts": [self._part(GO_TEXT)], "role": "ROLE_AGENT"}
        if self.sdk == "go":
            return {"kind": "message", "messageId": str(uuid.uuid4()), "parts": [self._part(GO_TEXT)],
                    "role": "agent"}
        cid = msg.get("contextId") or str(uuid.uuid4())
        if self.version == "1.0":
            return {"messageId": str(uuid.uuid4()), "contextId": cid, "taskId": str(uuid.uuid4()),
                    "role": "ROLE_AGENT", "parts": [self._part(JAVA_TEXT)]}
        return {"role": "agent", "parts": [self._part(JAVA_TEXT)], "messageId": str(uuid.uuid4()),
                "contextId": cid, "kind": "message"}

    def run(self, params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The agent's events for one message, as (kind, SDK-shaped payload); the last one is the final task."""
        msg = params.get("message") if isinstance(params.get("message"), dict) else {}
        assert isinstance(msg, dict)
        if self.message_reply:
            return [("message", self._agent_message(msg))]
        tid = str(uuid.uuid4())
        cid = msg.get("contextId") or str(uuid.uuid4())
        history = [self._user_message(msg, tid, cid)]
        artifact = self._artifact()
        # a2a.NewSubmittedTask sets no timestamp; the Java TaskStatus constructor stamps every status
        submitted = self._task(tid, cid, self._status("submitted", stamp=self.sdk == "java"), history, [])
        completed_event = self._status_event(tid, cid, "completed", True)
        inner = completed_event.get("statusUpdate", completed_event)
        final = self._task(tid, cid, inner["status"], history, [artifact])
        self.tasks[tid] = final
        return [("task", submitted), ("status", self._status_event(tid, cid, "working", False)),
                ("artifact", self._artifact_event(tid, cid, artifact)), ("status", completed_event),
                ("final", final)]


# ---------------------------------------------------------------- Java's ProtoJSON: every field without presence


_DEFAULTS_1_0: dict[str, dict[str, Any]] = {
    # JsonFormat.printer().alwaysPrintFieldsWithNoPresence(): proto3 scalars and repeated fields with no presence
    # are written at their defaults; messages (status.message, metadata, timestamp) only when set
    "task": {"id": "", "contextId": "", "artifacts": [], "history": []},
    "message": {"messageId": "", "contextId": "", "taskId": "", "extensions": [], "referenceTaskIds": []},
    "artifact": {"artifactId": "", "name": "", "description": "", "extensions": []},
    "part": {"filename": "", "mediaType": ""},
    "artifactUpdate": {"append": False, "lastChunk": False},
}
_ORDER_1_0 = {
    "task": ["id", "contextId", "status", "artifacts", "history", "metadata"],
    "message": ["messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds"],
    "artifact": ["artifactId", "name", "description", "parts", "metadata", "extensions"],
    "part": ["text", "raw", "url", "data", "metadata", "filename", "mediaType"],
    "artifactUpdate": ["taskId", "contextId", "artifact", "append", "lastChunk", "metadata"],
    "statusUpdate": ["taskId", "contextId", "status", "metadata"],
}


def with_defaults(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 message as protobuf-java prints it with alwaysPrintFieldsWithNoPresence, in field-number order."""
    full = _DEFAULTS_1_0.get(kind, {}) | obj
    if kind == "task":
        full["history"] = [with_defaults("message", m) for m in full["history"]]
        full["artifacts"] = [with_defaults("artifact", a) for a in full["artifacts"]]
    elif kind in ("message", "artifact"):
        full["parts"] = [with_defaults("part", p) for p in full["parts"]]
    elif kind == "artifactUpdate":
        full["artifact"] = with_defaults("artifact", full["artifact"])
    return {k: full[k] for k in _ORDER_1_0[kind] if k in full}


def java_payload(kind: str, payload: dict[str, Any], defaults: bool) -> dict[str, Any]:
    """A SendMessageResponse / StreamResponse oneof member of a Java 1.0 answer."""
    if kind in ("task", "final"):
        return {"task": with_defaults("task", payload) if defaults else payload}
    if kind == "message":
        return {"message": with_defaults("message", payload) if defaults else payload}
    member, inner = next(iter(payload.items()))
    return {member: with_defaults(member, inner) if defaults else inner}


# ---------------------------------------------------------------- a2a-java 0.3.3's REST: the 0.3 proto's ProtoJSON

_STATE_PROTO_03 = {"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
                   "input-required": "TASK_STATE_INPUT_REQUIRED", "auth-required": "TASK_STATE_AUTH_REQUIRED",
                   "completed": "TASK_STATE_COMPLETED", "canceled": "TASK_STATE_CANCELLED",
                   "failed": "TASK_STATE_FAILED", "rejected": "TASK_STATE_REJECTED"}


def _proto_stamp(jackson: str) -> str:
    """The same instant as protobuf's Timestamp JSON (ToProto.taskStatus: seconds and nanos of the Instant)."""
    return proto_time(dt.datetime.fromisoformat(jackson.replace("Z", "+00:00")).replace(tzinfo=None))


def proto03(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """spec-grpc v0.3.3 ProtoUtils.ToProto of a 0.3 object (held here in its Jackson shape), as JsonFormat prints it
    without defaults: the 0.3 proto's field order, a field only when set to a non-default value; a Message's parts
    are `content`; Task and Message always get `metadata` (ToProto sets an empty Struct: `{}`); a Message's
    extensions and an Artifact's extensions are not copied."""
    if kind == "part":  # ToProto.part: a TextPart's text (the replays' agents write text only)
        return {"text": obj.get("text", "")}
    if kind == "message":
        out: dict[str, Any] = {"messageId": obj["messageId"]}
        out |= {k: obj[k] for k in ("contextId", "taskId") if obj.get(k) is not None}
        return out | {"role": "ROLE_USER" if obj["role"] == "user" else "ROLE_AGENT",
                      "content": [proto03("part", p) for p in obj["parts"]], "metadata": {}}
    if kind == "status":
        out = {"state": _STATE_PROTO_03[obj["state"]]}
        if obj.get("message") is not None:
            out["message"] = proto03("message", obj["message"])  # TaskStatus.update, json_name "message"
        if obj.get("timestamp"):
            out["timestamp"] = _proto_stamp(obj["timestamp"])
        return out
    if kind == "artifact":
        out = {k: obj[k] for k in ("artifactId", "name", "description") if obj.get(k)}
        return out | ({"parts": [proto03("part", p) for p in obj["parts"]]} if obj.get("parts") else {})
    if kind == "task":
        out = {"id": obj["id"], "contextId": obj["contextId"], "status": proto03("status", obj["status"])}
        if obj.get("artifacts"):
            out["artifacts"] = [proto03("artifact", a) for a in obj["artifacts"]]
        if obj.get("history"):
            out["history"] = [proto03("message", m) for m in obj["history"]]
        return out | {"metadata": {}}
    if kind == "status-update":  # `final` is a proto3 bool: written only when true
        out = {"taskId": obj["taskId"], "contextId": obj["contextId"], "status": proto03("status", obj["status"])}
        return out | ({"final": True} if obj.get("final") else {})
    assert kind == "artifact-update"
    out = {"taskId": obj["taskId"], "contextId": obj["contextId"], "artifact": proto03("artifact", obj["artifact"])}
    return out | {k: True for k in ("append", "lastChunk") if obj.get(k)}


def proto03_response(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """ToProto.taskOrMessage / taskOrMessageStream: a SendMessageResponse / StreamResponse (`msg` is json_name
    "message")."""
    if kind in ("task", "final"):
        return {"task": proto03("task", payload)}
    if kind == "message":
        return {"message": proto03("message", payload)}
    if kind == "status":
        return {"statusUpdate": proto03("status-update", payload)}
    return {"artifactUpdate": proto03("artifact-update", payload)}


JAVA_0_3_REST = {  # RestHandler.mapErrorToHttpStatus (transport/rest RestHandler.java:318-344, v0.3.3.Final)
    "parse": ("JSONParseError", 400), "invalid_request": ("InvalidRequestError", 400),
    "params": ("InvalidParamsError", 422), "method": ("MethodNotFoundError", 404),
    "not_found": ("TaskNotFoundError", 404), "extended_card": ("AuthenticatedExtendedCardNotConfiguredError", 404),
    "not_cancelable": ("TaskNotCancelableError", 409), "push": ("PushNotificationNotSupportedError", 501),
    "unsupported": ("UnsupportedOperationError", 501), "internal": ("InternalError", 500),
}


def java03_rest_error(kind: str, message: str | None = None) -> tuple[int, str]:
    """HTTPRestErrorResponse.toJson (RestHandler.java:411-430): the error's class name and getMessage(), glued
    into a JSON text by string concatenation (a space after each `:` and `,`, nothing escaped)."""
    name, status = JAVA_0_3_REST[kind]
    text = JAVA_0_3[kind][1] if message is None else message
    return status, '{"error": "io.a2a.spec.' + name + '", "message": "' + text + '"}'


def _java_proto_error(exc: Exception) -> str:
    """protobuf-java JsonFormat.parser()'s text for what protobuf-python's ParseDict refused."""
    found = re.search(r'Message type "([\w.]+)" has no field named "([^"]+)"', str(exc))
    if found:
        return f"Cannot find field: {found.group(2)} in message {found.group(1)}"
    return str(exc).split("\n", 1)[0].replace('"', "")


def java03_send_params(raw: bytes) -> dict[str, Any] | tuple[str, str]:
    """RestHandler.parseRequestBody (RestHandler.java:225-245), FromProto.messageSendParams and the Message
    constructor, for a SendMessageRequest body: the message (Jackson-shaped, for `Replay.run`), or (error kind,
    message) as a2a-java refuses it."""
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return "invalid_request", "Request body is required"
    try:
        doc = json.loads(text)  # validate(): Jackson's readTree
    except ValueError:
        return "parse", "Failed to parse json"
    if not isinstance(doc, dict):
        return "params", f"Failed to parse request body: Expect message object but got: {text.strip()[:80]}"
    request = a2a_v0_3_pb2.SendMessageRequest()
    try:  # JsonFormat.parser(): unknown fields refused
        json_format.ParseDict(doc, request)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        return "params", "Failed to parse request body: " + _java_proto_error(exc)
    msg = doc.get("message", doc.get("request"))
    for part in msg.get("content", []) if isinstance(msg, dict) else []:
        # a2a-java 0.3.3's a2a.proto has no Part.metadata and no FilePart.name (a2a-sdk's 0.3 proto has both)
        extra = "metadata" if isinstance(part, dict) and "metadata" in part else "name" if isinstance(
            part, dict) and isinstance(part.get("file"), dict) and "name" in part["file"] else None
        if extra is not None:
            where = "a2a.v1.Part" if extra == "metadata" else "a2a.v1.FilePart"
            return "params", f"Failed to parse request body: Cannot find field: {extra} in message {where}"
    m = request.request
    if not m.message_id:  # FromProto.message
        return "params", "Invalid parameters"
    if any(p.WhichOneof("part") is None or (p.HasField("file") and p.file.WhichOneof("file") is None)
           for p in m.content):
        return "invalid_request", "Request payload validation error"  # FromProto.part: new InvalidRequestError()
    if not m.content:  # Message's constructor (IllegalArgumentException, answered as an InternalError)
        return "internal", "Parts cannot be empty"
    if m.role == a2a_v0_3_pb2.ROLE_UNSPECIFIED:
        return "internal", "Parameter 'role' may not be null"
    out: dict[str, Any] = {"messageId": m.message_id, "parts": [{"text": p.text} for p in m.content]}
    return out | {k: v for k, v in (("contextId", m.context_id), ("taskId", m.task_id)) if v}


# ---------------------------------------------------------------- errors, per SDK


def _go_error_info(reason: str, **meta: str) -> dict[str, Any]:
    # errordetails.Typed.MarshalJSON: a Go map, so json.Marshal sorts the keys ("@type" first)
    stamp = _now().strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"@type": ERROR_INFO, "domain": DOMAIN, "metadata": dict(sorted((meta | {"timestamp": stamp}).items())),
            "reason": reason}


GO_RPC = {  # internal/jsonrpc codeToError + a2a/errors.go messages and reasons
    "parse": (-32700, "parse error", "PARSE_ERROR"), "invalid_request": (-32600, "invalid request", "INVALID_REQUEST"),
    "method": (-32601, "method not found", "METHOD_NOT_FOUND"), "params": (-32602, "invalid params", "INVALID_PARAMS"),
    "not_found": (-32001, "task not found", "TASK_NOT_FOUND"),
    "not_cancelable": (-32002, "task cannot be canceled", "TASK_NOT_CANCELABLE"),
    "push": (-32003, "push notification not supported", "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    "unsupported": (-32004, "this operation is not supported", "UNSUPPORTED_OPERATION"),
    "extended_card": (-32007, "extended card not configured", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
}
GO_REST = {  # internal/rest/rest.go errorMappings: (HTTP status, google.rpc status)
    "parse": (400, "INVALID_ARGUMENT"), "invalid_request": (400, "INVALID_ARGUMENT"), "method": (501, "UNIMPLEMENTED"),
    "params": (400, "INVALID_ARGUMENT"), "not_found": (404, "NOT_FOUND"),
    "not_cancelable": (400, "FAILED_PRECONDITION"), "push": (400, "FAILED_PRECONDITION"),
    "unsupported": (400, "FAILED_PRECONDITION"),
    "extended_card": (400, "FAILED_PRECONDITION"),
}
JAVA_1_0 = {  # spec A2AErrorCodes: (code, reason, grpc status, HTTP status) and the errors' default messages
    "parse": (-32700, "JSON_PARSE", "INVALID_ARGUMENT", 400, "Failed to parse json"),
    "invalid_request": (-32600, "INVALID_REQUEST", "INVALID_ARGUMENT", 400, "Request payload validation error"),
    "method": (-32601, "METHOD_NOT_FOUND", "NOT_FOUND", 404, "Method not found"),
    "params": (-32602, "INVALID_PARAMS", "INVALID_ARGUMENT", 422, "Invalid parameters"),
    "not_found": (-32001, "TASK_NOT_FOUND", "NOT_FOUND", 404, "Task not found"),
    "not_cancelable": (-32002, "TASK_NOT_CANCELABLE", "FAILED_PRECONDITION", 409, "Task cannot be canceled"),
    "push": (-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "UNIMPLEMENTED", 400, "Push Notification is not supported"),
    "unsupported": (-32004, "UNSUPPORTED_OPERATION", "UNIMPLEMENTED", 400, "This operation is not supported"),
    "extended_card": (-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "FAILED_PRECONDITION", 400,
                      "Extended Card not configured"),
    "version": (-32009, "VERSION_NOT_SUPPORTED", "UNIMPLEMENTED", 400, "Protocol version not supported"),
    "internal": (-32603, "INTERNAL", "INTERNAL", 500, "Internal Error"),
}
JAVA_0_3 = {  # io.a2a.spec *Error default codes and messages (v0.3.3.Final)
    "parse": (-32700, "Invalid JSON payload"), "invalid_request": (-32600, "Request payload validation error"),
    "method": (-32601, "Method not found"), "params": (-32602, "Invalid parameters"),
    "not_found": (-32001, "Task not found"), "not_cancelable": (-32002, "Task cannot be canceled"),
    "push": (-32003, "Push Notification is not supported"), "unsupported": (-32004, "This operation is not supported"),
    "extended_card": (-32007, "Authenticated Extended Card not configured"), "internal": (-32603, "Internal Error"),
}
GO_0_3_RPC = {k: v[:2] for k, v in GO_RPC.items()}


def rpc_error(replay: Replay, kind: str, rid: Any, detail: str = "") -> str:
    """The SDK's JSON-RPC error response (the id as the SDK writes it: None is null, or left out by Java)."""
    if replay.sdk == "go" and replay.version == "1.0":
        code, message, reason = GO_RPC[kind]
        err: dict[str, Any] = {"code": code, "message": f"{message}: {detail}" if detail else message,
                               "data": [_go_error_info(reason)]}
        return compact({"jsonrpc": "2.0", "id": rid, "error": err})
    if replay.sdk == "go":
        code, message = GO_0_3_RPC[kind]
        # v0.3.15 ToJSONRPCError: a bare sentinel error gets data {"error": err.Error()}
        text = f"{message}: {detail}" if detail else message
        return compact({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message,
                                                               "data": {"error": text}}})
    if replay.version == "1.0":
        code, reason, _, _, message = JAVA_1_0[kind]
        body = {"jsonrpc": "2.0"}
        if rid is not None:  # Gson's JsonWriter (serializeNulls off) drops `"id": null` with its name
            body["id"] = rid
        return compact(body | {"error": {"code": code, "message": detail or message,
                                         "data": [{"@type": ERROR_INFO, "reason": reason, "domain": DOMAIN}]}})
    code, message = JAVA_0_3[kind]
    body = {"jsonrpc": "2.0"}
    if rid is not None:  # @JsonInclude(NON_ABSENT) on JSONRPCResponse: a null id is not written
        body["id"] = rid
    return compact(body | {"error": {"code": code, "message": message}})


def rest_error(replay: Replay, kind: str, task_id: str = "", detail: str = "") -> tuple[int, str]:
    """The SDK's HTTP+JSON error: (HTTP status, google.rpc.Status-like body)."""
    if replay.sdk == "go":
        status, grpc = GO_REST[kind]
        _, message, reason = GO_RPC[kind]
        meta = {"taskId": task_id} if task_id else {}
        return status, compact({"error": {"code": status, "status": grpc,
                                          "message": f"{message}: {detail}" if detail else message,
                                          "details": [_go_error_info(reason, **meta)]}})
    _, reason, grpc, status, message = JAVA_1_0[kind]
    return status, compact({"error": {"code": status, "status": grpc, "message": detail or message,
                                      "details": [{"@type": ERROR_INFO, "reason": reason, "domain": DOMAIN}]}})


# ---------------------------------------------------------------- serving


def _sse_headers(replay: Replay) -> dict[str, str]:
    if replay.sdk == "go":  # internal/sse WriteHeaders
        return {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive",
                "X-Accel-Buffering": "no"}
    if replay.version == "1.0":  # reference/common SseResponseWriter
        return {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return {"Content-Type": "text/event-stream"}  # v0.3.3 MultiSseSupport.initialize


def sse_frames(replay: Replay, datas: list[str]) -> list[str]:
    """The SDK's SSE framing of JSON texts."""
    if replay.sdk == "go":  # internal/sse WriteData: an `id:` line (a fresh UUID) before the data line
        return [f"id: {uuid.uuid4()}\ndata: {d}\n\n" for d in datas]
    frames = [f"data: {d}\nid: {i}\n\n" for i, d in enumerate(datas)]  # SseFormatter: data, then a counter id
    if replay.version == "1.0" and frames:  # SseResponseWriter merges a kick-start comment into the first write
        frames[0] = ": SSE stream started\n\n" + frames[0]
    return frames


def _json_response(body: str, status: int = 200, *, newline: bool = False) -> web.Response:
    # Go's json.NewEncoder(rw).Encode appends "\n"; Vert.x's end(String) writes the text as it is
    return web.Response(status=status, body=(body + ("\n" if newline else "")).encode(),
                        headers={"Content-Type": "application/json"})


async def _write_stream(replay: Replay, request: web.Request, datas: list[str]) -> web.StreamResponse:
    resp = web.StreamResponse(status=200, headers=_sse_headers(replay))
    await resp.prepare(request)
    for frame in sse_frames(replay, datas):
        await resp.write(frame.encode())
    await resp.write_eof()
    return resp


def _follow_up_refusal(replay: Replay, msg: dict[str, Any]) -> tuple[str, str] | None:
    """A message naming a task (1.0 lines): a2a-go loads it, TaskNotFound when unknown, and refuses a terminal one
    as InvalidParams (a2asrv/agentexec.go:207-208); a2a-java refuses an unknown one with TaskNotFoundError and a
    terminal one with UnsupportedOperationError (DefaultRequestHandler.java:1195-1221). The 0.3 replays start a
    new task whatever the message names (not replayed)."""
    tid = msg.get("taskId")
    if replay.version != "1.0" or not isinstance(tid, str) or not tid:
        return None
    task = replay.tasks.get(tid)
    if task is None:
        return "not_found", ""
    state = task["status"]["state"]
    if replay.sdk == "go":
        return "params", f'task in a terminal state "{state}"'
    return "unsupported", (f"Cannot send message to task {tid}: task is in terminal state {state} and cannot "
                           "accept further messages")


def _extended_card_refusal(replay: Replay) -> str:
    """GetExtendedAgentCard on a card that does not declare one: a2a-go's handler checks the capability only when
    built WithCapabilityChecks (opt-in; a2asrv/handler.go:103-107, 454-460), so by default it answers
    ExtendedCardNotConfigured; a2a-java answers UnsupportedOperationError (JSONRPCHandler.java:671-676)."""
    return "extended_card" if replay.sdk == "go" or replay.version == "0.3" else "unsupported"


def _subscribe_refusal(replay: Replay, tid: str) -> tuple[str, str]:
    """SubscribeToTask of a task with no running execution, refused inside the stream (both SDKs write the SSE
    headers first): a2a-go wraps its execution manager's "no active execution" as TaskNotFound for a finished
    task too (a2asrv/handler.go:369-374, internal/taskexec/local_manager.go:134-140); a2a-java refuses a terminal
    task with UnsupportedOperationError (server-common DefaultRequestHandler.java:948-961)."""
    if replay.sdk == "go":
        return "not_found", "no active execution"
    return ("unsupported" if tid in replay.tasks else "not_found"), ""


def _java_version_error(replay: Replay, call: Call) -> str | None:
    """A2AVersionValidator (a2a-java 1.x, SendMessage and SendStreamingMessage only): a missing header is 0.3, and
    the major version must match one of the card's interfaces ("1.0")."""
    if not (replay.sdk == "java" and replay.version == "1.0"):
        return None
    requested = (call.version or "").strip() or "0.3"
    try:
        major = int(requested.split(".")[0]) if len(requested.split(".")) >= 2 else None
    except ValueError:
        major = None
    if major == 1:
        return None
    return f"Protocol version '{requested}' is not supported. Supported versions: [1.0]"


def _result_text(replay: Replay, kind: str, payload: dict[str, Any], *, stream: bool, rest: bool = False) -> Any:
    """The JSON-RPC `result` (or REST body) for one event, as a Python value in the SDK's order."""
    if replay.version == "0.3":
        return payload  # the Task / Message / event itself, with its `kind`
    if replay.sdk == "go":  # a2a.StreamResponse{Event}: {"task": …} / {"message": …} / the event's own wrapper
        if kind in ("task", "final"):
            return {"task": payload}
        if kind == "message":
            return {"message": payload}
        return payload
    # Java: JSON-RPC prints every field without presence; REST streams print only what is set
    return java_payload(kind, payload, defaults=not (rest and stream))


def build_app(replay: Replay, where: dict[str, str]) -> web.Application:
    """The SDK server's routes; `where["origin"]` is the origin the card names (filled in once serving)."""

    async def card(_: web.Request) -> web.Response:
        body, headers = replay.card(where["origin"])
        return web.Response(body=body.encode(), headers=headers)

    async def rpc(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as e:
            # Go: json.Decoder's own error text, wrapped as "parse error: …" (jsonrpc.go:368-374)
            text = "unexpected EOF" if e.pos >= len(raw.strip()) else f"invalid character {raw[e.pos:e.pos + 1]!r}"
            return _json_response(rpc_error(replay, "parse", None, "" if replay.sdk == "java" else text),
                                  newline=replay.sdk == "go")
        go = replay.sdk == "go"
        if not isinstance(body, dict):
            # Go: decoding a non-object into the request struct is a json.UnmarshalTypeError, read as invalid
            # params (jsonrpc.go:368-374); Java 1.0: getAsJsonObject throws, caught as an InternalError
            kind = "params" if go else "internal" if replay.version == "1.0" else "invalid_request"
            return _json_response(rpc_error(replay, kind, None), newline=go)
        rid = body.get("id")
        if not (rid is None or isinstance(rid, str | int | float)) or isinstance(rid, bool):
            return _json_response(rpc_error(replay, "invalid_request", None), newline=go)
        if body.get("jsonrpc") != "2.0" or (not go and "method" not in body):
            # Go: jsonrpc.go:74-77 with the id; Java: IdJsonMappingException keeps the id (JSONRPCUtils:182-186)
            return _json_response(rpc_error(replay, "invalid_request", rid), newline=go)
        method = body.get("method")
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        assert isinstance(params, dict)
        call = Call(rid, params, request.headers.get("A2A-Version"))
        names = _METHODS[replay.version]
        if method == names["send"] or method == names["stream"]:
            streaming = method == names["stream"]
            bad = _java_version_error(replay, call)
            if bad is not None:
                err = rpc_error(replay, "version", rid, bad)
                return await _write_stream(replay, request, [err]) if streaming else _json_response(err)
            msg = params.get("message")
            if not isinstance(msg, dict) or not msg.get("parts"):
                err = rpc_error(replay, "params", rid, "message is required" if go else "")
                if streaming:
                    return await _write_stream(replay, request, [err])
                return _json_response(err, newline=go)
            refused = _follow_up_refusal(replay, msg)
            if refused is not None:
                err = rpc_error(replay, refused[0], rid, refused[1])
                return await _write_stream(replay, request, [err]) if streaming else _json_response(err, newline=go)
            events = replay.run(params)
            if streaming:
                datas = [compact({"jsonrpc": "2.0", "id": rid, "result": _result_text(replay, k, p, stream=True)})
                         for k, p in events if k != "final"]
                return await _write_stream(replay, request, datas)
            kind, payload = events[-1]
            result = _result_text(replay, kind, payload, stream=False)
            return _json_response(compact({"jsonrpc": "2.0", "id": rid, "result": result}), newline=go)
        if method == names["get"]:
            task = replay.tasks.get(str(params.get("id")))
            if task is None:
                return _json_response(rpc_error(replay, "not_found", rid), newline=go)
            shown = with_defaults("task", task) if replay.sdk == "java" and replay.version == "1.0" else task
            return _json_response(compact({"jsonrpc": "2.0", "id": rid, "result": shown}), newline=go)
        if method == names["cancel"]:
            tid = str(params.get("id"))
            kind = "not_cancelable" if tid in replay.tasks else "not_found"
            return _json_response(rpc_error(replay, kind, rid), newline=go)
        if method == names["subscribe"]:
            kind, detail = _subscribe_refusal(replay, str(params.get("id")))
            return await _write_stream(replay, request, [rpc_error(replay, kind, rid, detail)])
        if method in names["push"]:
            return _json_response(rpc_error(replay, "push", rid), newline=go)
        if method == names["extended_card"]:
            return _json_response(rpc_error(replay, _extended_card_refusal(replay), rid), newline=go)
        if go and not method:
            return _json_response(rpc_error(replay, "invalid_request", rid), newline=go)
        return _json_response(rpc_error(replay, "method", rid), newline=go)

    async def rest_send(request: web.Request) -> web.StreamResponse:
        streaming = request.path.endswith(":stream")
        go = replay.sdk == "go"
        raw = await request.read()
        try:
            params = json.loads(raw)
            if not isinstance(params, dict):
                raise ValueError
        except ValueError:
            status, err = rest_error(replay, "parse")
            return _json_response(err, status, newline=go)
        call = Call(None, params, request.headers.get("A2A-Version"))
        bad = _java_version_error(replay, call)
        if bad is not None:
            status, err = rest_error(replay, "version", detail=bad)
            if streaming:  # RestHandler.sendStreamingMessage: the error as the stream's one event
                return await _write_stream(replay, request, [err])
            return _json_response(err, status)
        msg = params.get("message")
        if not isinstance(msg, dict) or not msg.get("parts"):
            status, err = rest_error(replay, "params", detail="message is required" if go else "")
            return _json_response(err, status, newline=go)
        refused = _follow_up_refusal(replay, msg)
        if refused is not None:
            status, err = rest_error(replay, refused[0], str(msg.get("taskId")), refused[1])
            if streaming:
                return await _write_stream(replay, request, [err])
            return _json_response(err, status, newline=go)
        events = replay.run(params)
        if streaming:
            datas = [compact(_result_text(replay, k, p, stream=True, rest=True)) for k, p in events if k != "final"]
            return await _write_stream(replay, request, datas)
        kind, payload = events[-1]
        result = _result_text(replay, kind, payload, stream=False, rest=True)
        if go:
            return _json_response(compact(result), newline=True)
        return _json_response(pretty(result))  # createSuccessResponse: the printer's default layout

    async def rest_task(request: web.Request) -> web.StreamResponse:
        go = replay.sdk == "go"
        tid_action = request.match_info["tid"]
        tid, _, action = tid_action.partition(":")
        task = replay.tasks.get(tid)
        if request.method == "GET" and not action:
            if task is None:
                status, err = rest_error(replay, "not_found", tid)
                return _json_response(err, status, newline=go)
            return _json_response(compact(task), newline=True) if go else _json_response(
                pretty(with_defaults("task", task)))
        if action == "cancel":
            status, err = rest_error(replay, "not_found" if task is None else "not_cancelable", tid)
            return _json_response(err, status, newline=go)
        if action == "subscribe":
            kind, detail = _subscribe_refusal(replay, tid)
            _, err = rest_error(replay, kind, "" if go else tid, detail)
            return await _write_stream(replay, request, [err])
        if go:  # net/http's ServeMux: 404 page not found (http.Error: text/plain)
            return web.Response(status=404, text="404 page not found\n", content_type="text/plain",
                                charset="utf-8")
        status, err = rest_error(replay, "method")
        return _json_response(err, status)

    async def rest_push(request: web.Request) -> web.StreamResponse:
        status, err = rest_error(replay, "push", request.match_info["tid"])
        return _json_response(err, status, newline=replay.sdk == "go")

    async def rest_extended(_: web.Request) -> web.StreamResponse:
        status, err = rest_error(replay, _extended_card_refusal(replay))
        return _json_response(err, status, newline=replay.sdk == "go")

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    if replay.binding == "GRPC":  # the card server only (the hello-world example serves it on its own port)
        return app
    if replay.binding == "JSONRPC":
        app.router.add_post(replay.path or "/", rpc)
    elif replay.sdk == "java" and replay.version == "0.3":
        _java03_rest_routes(replay, app)
    else:
        app.router.add_post("/message:send", rest_send)
        app.router.add_post("/message:stream", rest_send)
        app.router.add_route("*", "/tasks/{tid}/pushNotificationConfigs{rest:.*}", rest_push)
        app.router.add_route("*", "/tasks/{tid}", rest_task)
        app.router.add_get("/extendedAgentCard", rest_extended)
    return app


VERTX_404 = "<html><body><h1>Resource not found</h1></body></html>"


def _java03_rest_routes(replay: Replay, app: web.Application) -> None:
    """a2a-java v0.3.3.Final's reference/rest A2AServerRoutes (Quarkus reactive routes under /v1) over
    transport/rest RestHandler. A route that matches nothing is answered by Vert.x Web itself: its 404 page (the
    catch-all route `path = "^/v1/.*"`, A2AServerRoutes.java:299, is a literal path, never matched), 405 for a
    known path with another verb, 415 when a `consumes = application/json` route gets another Content-Type."""

    def reply(status: int, body: str) -> web.Response:  # sendResponse: status, Content-Type, end(body)
        return web.Response(status=status, body=body.encode(), headers={"Content-Type": "application/json"})

    def error(kind: str, message: str | None = None) -> web.Response:
        return reply(*java03_rest_error(kind, message))

    async def stream(request: web.Request, datas: list[str]) -> web.StreamResponse:
        # MultiSseSupport (A2AServerRoutes.java:357-447): Content-Type text/event-stream only, chunked;
        # `data: <json>\nid: <n>\n\n` per item, ids 0, 1, 2…; the response ends with the publisher
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for frame in sse_frames(replay, datas):
            await resp.write(frame.encode())
        await resp.write_eof()
        return resp

    def json_only(request: web.Request) -> web.Response | None:
        if request.content_type != "application/json":  # Vert.x: no route consumes it
            return web.Response(status=415, text="Unsupported Media Type")
        return None

    async def send(request: web.Request) -> web.StreamResponse:
        if (refused := json_only(request)) is not None:
            return refused
        streaming = request.path.endswith(":stream")
        parsed = java03_send_params(await request.read())
        if isinstance(parsed, tuple):
            if streaming:  # sendStreamingMessage: any error is the stream's one item (RestHandler.java:109-113)
                return await stream(request, [java03_rest_error(*parsed)[1]])
            return error(*parsed)
        events = replay.run({"message": parsed})
        if streaming:  # convertToSendStreamingMessageResponse: omittingInsignificantWhitespace, no defaults
            return await stream(request, [proto_compact(proto03_response(k, p)) for k, p in events if k != "final"])
        kind, payload = events[-1]
        return reply(200, pretty(proto03_response(kind, payload)))  # createSuccessResponse: printer().print

    async def task(request: web.Request) -> web.StreamResponse:
        tid, _, action = request.match_info["tid"].partition(":")
        if request.method == "POST" and action == "cancel":  # RestHandler.cancelTask, onCancelTask
            found = replay.tasks.get(tid)
            if found is None:
                return error("not_found")
            return error("not_cancelable", f"Task cannot be canceled - current state: {found['status']['state']}")
        if request.method == "POST" and action == "subscribe":
            # resubscribeTask: onResubscribeToTask throws TaskNotFoundError for an unknown task and for a finished
            # one (DefaultRequestHandler.java:553-567); caught, it is the stream's one item
            return await stream(request, [java03_rest_error("not_found")[1]])
        if request.method != "GET":
            return web.Response(status=405, text="Method Not Allowed")
        # getTask: GET /v1/tasks/:id (an id "x:subscribe" too); the query parameter is `history_length`
        # (A2AServerRoutes.java:125-128), not the spec's historyLength
        raw_length = request.query.get("history_length")
        try:
            length = int(raw_length) if raw_length is not None else 0
        except ValueError:
            return error("params", "bad history_length")
        found = replay.tasks.get(request.match_info["tid"])
        if found is None:
            return error("not_found")
        history = found["history"]
        if 0 < length < len(history):  # onGetTask (DefaultRequestHandler.java:153-166): the last N; <= 0 all
            found = found | {"history": history[-length:]}
        return reply(200, pretty(proto03("task", found)))

    async def push(request: web.Request) -> web.StreamResponse:
        if request.method == "POST" and (refused := json_only(request)) is not None:
            return refused
        if request.method not in ("POST", "GET", "DELETE") or (request.method == "DELETE"
                                                                and not request.match_info["rest"]):
            return web.Response(status=405, text="Method Not Allowed")
        # every push handler checks capabilities.pushNotifications first (RestHandler.java:136-137, 182-183, …)
        return error("push")

    async def extended(_: web.Request) -> web.StreamResponse:
        # getAuthenticatedExtendedCard (RestHandler.java:346-357): supportsAuthenticatedExtendedCard is false
        return error("extended_card")

    async def not_found(request: web.Request) -> web.StreamResponse:
        if request.path in ("/v1/message:send", "/v1/message:stream", "/v1/card"):
            return web.Response(status=405, text="Method Not Allowed")
        return web.Response(status=404, text=VERTX_404, content_type="text/html", charset="utf-8")

    app.router.add_post("/v1/message:send", send)
    app.router.add_post("/v1/message:stream", send)
    app.router.add_route("*", "/v1/tasks/{tid}/pushNotificationConfigs{rest:(/[^/]+)?}", push)
    app.router.add_route("*", "/v1/tasks/{tid}", task)
    app.router.add_get("/v1/card", extended)
    app.router.add_route("*", "/{tail:.*}", not_found)


_METHODS: dict[str, dict[str, Any]] = {
    "1.0": {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask", "cancel": "CancelTask",
            "subscribe": "SubscribeToTask", "extended_card": "GetExtendedAgentCard",
            "push": {"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                     "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"}},
    "0.3": {"send": "message/send", "stream": "message/stream", "get": "tasks/get", "cancel": "tasks/cancel",
            "subscribe": "tasks/resubscribe", "extended_card": "agent/getAuthenticatedExtendedCard",
            "push": {"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
                     "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"}},
}

# ---------------------------------------------------------------- gRPC: a2a-go v2.3.1's a2agrpc/v1 Handler

# internal/grpcutil/errors.go:34-62 errorMappings (the first match wins: ErrUnsupportedOperation and
# ErrExtendedCardNotConfigured are FAILED_PRECONDITION, ErrVersionNotSupported too); reasons a2a/errors.go:93-111
GO_GRPC = {
    "parse": ("INVALID_ARGUMENT", "PARSE_ERROR"), "invalid_request": ("INVALID_ARGUMENT", "INVALID_REQUEST"),
    "method": ("UNIMPLEMENTED", "METHOD_NOT_FOUND"), "params": ("INVALID_ARGUMENT", "INVALID_PARAMS"),
    "not_found": ("NOT_FOUND", "TASK_NOT_FOUND"), "not_cancelable": ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
    "push": ("FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    "unsupported": ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"),
    "extended_card": ("FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
    "version": ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    "unauthenticated": ("UNAUTHENTICATED", "UNAUTHENTICATED"), "internal": ("INTERNAL", "INTERNAL_ERROR"),
}


def go_grpc_status(kind: str, message: str, details: dict[str, Any] | None = None,
                   info_metadata: dict[str, str] | None = None) -> tuple[grpc.StatusCode, str, bytes]:
    """grpcutil.ToGRPCError (errors.go:65-129): status.New(code, err.Error()) with details: an *a2a.Error's
    `Details` map as a google.protobuf.Struct first (and any other typed detail as a Struct), then the ErrorInfo
    {reason, domain "a2a-protocol.org", metadata only when the error carries some: no timestamp, unlike
    JSON-RPC and REST}. The handler's own refusals are fmt.Errorf wraps of a sentinel, no *a2a.Error: ErrorInfo
    only. grpc-go writes the google.rpc.Status to grpc-status-details-bin."""
    code_name, reason = GO_GRPC[kind]
    code = getattr(grpc.StatusCode, code_name)
    packed: list[any_pb2.Any] = []
    if details:
        struct = struct_pb2.Struct()
        struct.update(details)
        packed.append(any_pb2.Any())
        packed[-1].Pack(struct)
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=info_metadata or {})
    packed.append(any_pb2.Any())
    packed[-1].Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=packed)
    return code, message, status.SerializeToString()


_GO_EXEC = "executor setup failed: failed to load exec ctx: "  # local_manager.go:276-281, agentexec.go:141-144


def go_grpc_send_refusal(replay: Replay, req: a2a_pb2.SendMessageRequest) -> tuple[str | None, str] | None:
    """Why a2a-go refuses a SendMessage/SendStreamingMessage: (None, text) for pbconv's conversion errors, which
    the handler answers `status.Errorf(codes.InvalidArgument, "failed to convert request: %v")` with no details
    (handler.go:52-55); (kind, err.Error()) for the request handler's, through ToGRPCError."""
    msg = req.message
    for part in msg.parts:  # FromProtoMessage: the parts first (from_proto.go:62-67, 99-121)
        if part.WhichOneof("content") is None:
            return None, "failed to convert part: unsupported part type: <nil>"
    if not req.HasField("message"):
        return None, "message cannot be nil"  # FromProtoSendMessageRequest (from_proto.go:40-47)
    if not msg.message_id:
        return None, "message id cannot be empty"
    if msg.role == a2a_pb2.ROLE_UNSPECIFIED:
        return None, "message role cannot be unspecified"
    push = req.configuration.task_push_notification_config if req.HasField("configuration") and \
        req.configuration.HasField("task_push_notification_config") else None
    if push is not None:  # fromProtoSendMessageConfig -> FromProtoTaskPushConfig (from_proto.go:534-555)
        if push.HasField("authentication") and not push.authentication.scheme:
            return None, ("failed to convert push config: failed to convert authentication info: authentication "
                          "scheme cannot be empty")
        if not push.url:
            return None, "failed to convert push config: url cannot be empty"
    if not msg.parts:  # handleSendMessage (a2asrv/handler.go:385-397)
        return "params", "message parts is required: invalid params"
    if msg.task_id:  # factory.loadExecutionContext (agentexec.go:178-212)
        task = replay.tasks.get(msg.task_id)
        if task is None:
            return "not_found", _GO_EXEC + "task loading failed: task not found"
        if msg.context_id and msg.context_id != task["contextId"]:
            return "params", _GO_EXEC + "message contextID different from task contextID: invalid params"
        # every task the replay keeps is COMPLETED
        return "params", _GO_EXEC + f'task in a terminal state "{task["status"]["state"]}": invalid params'
    if push is not None:  # CreateExecutor: no push store configured (agentexec.go:152-155)
        return "push", ("executor setup failed: bug: message with push config received bug push is not configured: "
                        "push notification not supported")
    return None


class GoGrpcServicer(a2a_pb2_grpc.A2AServiceServicer):
    """a2agrpc/v1 Handler (handler.go) over a2asrv's default request handler as the hello-world gRPC example builds
    it (examples/helloworld/server/grpc/main.go:61: NewHandler(executor, WithExtendedAgentCard(card)); no push
    store, no capability checks, no auth middleware). The `a2a-version` metadata becomes a ServiceParams entry
    (handler.go:299-305) that nothing reads."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    @staticmethod
    async def refuse(context: grpc.aio.ServicerContext, kind: str | None, message: str) -> None:
        if kind is None:  # status.Errorf(codes.InvalidArgument, "failed to convert request: %v", err): no details
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"failed to convert request: {message}")
        code, text, status = go_grpc_status(kind, message)
        await context.abort(code, text, trailing_metadata=(("grpc-status-details-bin", status),))

    def _events(self, req: a2a_pb2.SendMessageRequest) -> list[tuple[str, dict[str, Any]]]:
        return self.replay.run({"message": json_format.MessageToDict(req.message)})

    async def SendMessage(self, request: a2a_pb2.SendMessageRequest,
                          context: grpc.aio.ServicerContext) -> a2a_pb2.SendMessageResponse:
        refused = go_grpc_send_refusal(self.replay, request)
        if refused is not None:
            await self.refuse(context, *refused)
        events = self._events(request)
        # returnImmediately: shouldInterruptNonStreaming (handler.go:463-472) answers the stored task at its first
        # event (SUBMITTED), a Message as it comes; else the final Task, or the hello-world agent's Message
        # (pbconv.ToProtoSendMessageResponse)
        kind, payload = events[0 if request.configuration.return_immediately else -1]
        return json_format.ParseDict({"message" if kind == "message" else "task": payload},
                                     a2a_pb2.SendMessageResponse())

    async def SendStreamingMessage(self, request: a2a_pb2.SendMessageRequest,
                                   context: grpc.aio.ServicerContext) -> AsyncIterator[a2a_pb2.StreamResponse]:
        refused = go_grpc_send_refusal(self.replay, request)
        if refused is not None:
            await self.refuse(context, *refused)
        for kind, payload in self._events(request):  # one stream.Send per event, then OK (handler.go:75-98)
            if kind == "final":
                continue
            doc = {kind: payload} if kind in ("task", "message") else payload
            yield json_format.ParseDict(doc, a2a_pb2.StreamResponse())

    async def GetTask(self, request: a2a_pb2.GetTaskRequest,
                      context: grpc.aio.ServicerContext) -> a2a_pb2.Task:
        if not request.id:  # FromProtoGetTaskRequest (from_proto.go:177-195)
            await self.refuse(context, None, "task id cannot be empty")
        task = self.replay.tasks.get(request.id)
        if task is None:  # handler.go:258-262 over the in-memory store's ErrTaskNotFound
            await self.refuse(context, "not_found", "failed to get task: task not found")
        assert task is not None
        if request.HasField("history_length") and request.history_length >= 0:  # handler.go:264-273
            length, history = request.history_length, task["history"]
            task = task | {"history": [] if length == 0 else history[-length:] if length < len(history) else history}
        return json_format.ParseDict(task, a2a_pb2.Task())

    async def ListTasks(self, request: a2a_pb2.ListTasksRequest,
                        context: grpc.aio.ServicerContext) -> a2a_pb2.ListTasksResponse:
        # taskstore.InMemory.List (inmemory.go:170-176) needs a user name, and with no auth middleware the call
        # context's User is {Authenticated: false, Name: ""} (middleware.go:36-39): ErrUnauthenticated, always
        await self.refuse(context, "unauthenticated", "failed to list tasks: unauthenticated")
        return a2a_pb2.ListTasksResponse()

    async def CancelTask(self, request: a2a_pb2.CancelTaskRequest,
                         context: grpc.aio.ServicerContext) -> a2a_pb2.Task:
        if not request.id:  # handler.go:289-291: the bare sentinel
            await self.refuse(context, "params", "invalid params")
        task = self.replay.tasks.get(request.id)
        # localManager.Cancel -> factory.CreateCanceler (agentexec.go:259-269), convertToCancelationResult
        # (promise.go:59-62), handler.go:293-296
        prefix = "failed to cancel: cancelation failed: canceler setup failed: "
        if task is None:
            await self.refuse(context, "not_found", prefix + "failed to load a task: task not found")
        assert task is not None
        await self.refuse(context, "not_cancelable",
                          prefix + f"task in non-cancelable state {task['status']['state']}: task cannot be canceled")
        return a2a_pb2.Task()

    async def SubscribeToTask(self, request: a2a_pb2.SubscribeToTaskRequest,
                              context: grpc.aio.ServicerContext) -> AsyncIterator[a2a_pb2.StreamResponse]:
        # every replayed task has finished: localManager.Resubscribe finds no execution (local_manager.go:134-140),
        # wrapped "%w: %w" with ErrTaskNotFound (handler.go:369-374), the stream's status before any message
        await self.refuse(context, "not_found", "task not found: no active execution")
        yield a2a_pb2.StreamResponse()

    async def _push(self, context: grpc.aio.ServicerContext, converted: str | None) -> None:
        if converted is not None:
            await self.refuse(context, None, converted)
        # checkPushNotificationSupport: no push store or sender configured (handler.go:485-498)
        await self.refuse(context, "push", "push notification not supported")

    async def CreateTaskPushNotificationConfig(self, request: a2a_pb2.TaskPushNotificationConfig,
                                               context: grpc.aio.ServicerContext) -> a2a_pb2.TaskPushNotificationConfig:
        converted = None  # FromProtoTaskPushConfig (from_proto.go:534-555)
        if request.HasField("authentication") and not request.authentication.scheme:
            converted = "failed to convert authentication info: authentication scheme cannot be empty"
        elif not request.url:
            converted = "url cannot be empty"
        await self._push(context, converted)
        return request

    async def GetTaskPushNotificationConfig(self, request: a2a_pb2.GetTaskPushNotificationConfigRequest,
                                            context: grpc.aio.ServicerContext) -> a2a_pb2.TaskPushNotificationConfig:
        await self._push(context, "task id cannot be empty" if not request.task_id else
                         "config id cannot be empty" if not request.id else None)
        return a2a_pb2.TaskPushNotificationConfig()

    async def ListTaskPushNotificationConfigs(
            self, request: a2a_pb2.ListTaskPushNotificationConfigsRequest,
            context: grpc.aio.ServicerContext) -> a2a_pb2.ListTaskPushNotificationConfigsResponse:
        await self._push(context, "task id cannot be empty" if not request.task_id else None)
        return a2a_pb2.ListTaskPushNotificationConfigsResponse()

    async def DeleteTaskPushNotificationConfig(
            self, request: a2a_pb2.DeleteTaskPushNotificationConfigRequest,
            context: grpc.aio.ServicerContext) -> Any:
        await self._push(context, "task id cannot be empty" if not request.task_id else
                         "config id cannot be empty" if not request.id else None)

    async def GetExtendedAgentCard(self, request: a2a_pb2.GetExtendedAgentCardRequest,
                                   context: grpc.aio.ServicerContext) -> a2a_pb2.AgentCard:
        # WithExtendedAgentCard(card) and no capability checks (handler.go:454-461): the public card itself, though
        # the card does not declare capabilities.extendedAgentCard
        body, _ = self.replay.card("")
        return json_format.ParseDict(json.loads(body), a2a_pb2.AgentCard())


# ---------------------------------------------------------------- gRPC: a2a-java v1.2.0.Final's GrpcHandler


def java_grpc_status(kind: str, message: str = "",
                     metadata: dict[str, str] | None = None) -> tuple[grpc.StatusCode, str, bytes]:
    """GrpcHandler.handleError (transport/grpc GrpcHandler.java:758-779): the code is A2AErrorCodes' grpcStatus for
    the error's code (spec A2AErrorCodes.java:19-61: PushNotificationNotSupported, UnsupportedOperation and
    VersionNotSupported UNIMPLEMENTED, MethodNotFound NOT_FOUND), the message the error's, and the
    google.rpc.Status carries one ErrorInfo {reason: the A2AErrorCodes name, domain "a2a-protocol.org", metadata:
    the error's details (a string as it is, anything else as JSON)} (StatusProto.toStatusRuntimeException:
    grpc-status-details-bin)."""
    _, reason, code_name, _, default = JAVA_1_0[kind]
    code = getattr(grpc.StatusCode, code_name)
    text = message or default
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    packed = any_pb2.Any()
    packed.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=text, details=[packed])
    return code, text, status.SerializeToString()


def java_grpc_send_refusal(replay: Replay, req: a2a_pb2.SendMessageRequest,
                           version: str | None) -> tuple[str, str] | None:
    """Why a2a-java refuses a SendMessage/SendStreamingMessage, in GrpcHandler's order (GrpcHandler.java:198-216,
    388-410): A2A-Version first (A2AVersionValidator), then FromProto.messageSendParams (ProtoUtils.java:232-237:
    an IllegalArgumentException becomes InvalidParamsError(its message); the mappers' own A2A errors pass as they
    are), then the request handler (a follow-up naming a task: DefaultRequestHandler.java:1195-1221)."""
    bad = _java_version_error(replay, Call(None, {}, version))
    if bad is not None:
        return "version", bad
    if not req.HasField("message"):  # MessageSendParams: Assert.checkNotNullParam("message") (MessageSendParams:38)
        return "params", "Parameter 'message' may not be null"
    msg = req.message
    if not msg.message_id:  # MessageMapper.java:39 requireNonEmpty (A2ACommonFieldMapper.java:61-67)
        return "params", "Required field cannot be null or empty"
    if any(part.WhichOneof("content") is None for part in msg.parts):  # PartMapper.java:88-115
        return "invalid_request", ""
    if msg.role == a2a_pb2.ROLE_UNSPECIFIED:  # RoleMapper.java:42-45 null; Message.Builder.build Assert (Message:290)
        return "params", "Parameter 'role' may not be null"
    if not msg.parts:  # the Message record (Message.java:69-70)
        return "params", "Parts cannot be empty"
    refused = _follow_up_refusal(replay, {"taskId": msg.task_id})
    return refused


def _limit_history(task: dict[str, Any], length: int | None) -> dict[str, Any]:
    """DefaultRequestHandler.limitTaskHistory (DefaultRequestHandler.java:422-434): None keeps all, N the last N."""
    history = task.get("history", [])
    if length is None or length >= len(history):
        return task
    return task | {"history": history[len(history) - length:]}


def _stamp_millis(task: dict[str, Any]) -> int:
    when = dt.datetime.fromisoformat(task["status"]["timestamp"].replace("Z", "+00:00"))
    return int(when.timestamp() * 1000)


class JavaGrpcServicer(a2a_pb2_grpc.A2AServiceServicer):
    """transport/grpc GrpcHandler as reference/grpc's QuarkusGrpcHandler deploys it (QuarkusGrpcHandler.java:71-73
    registers A2AExtensionsInterceptor, which puts the `a2a-version` metadata in the call's context,
    A2AExtensionsInterceptor.java:62-129), over server-common's DefaultRequestHandler and InMemoryTaskStore,
    behind the java-1.0 lines' card with a GRPC interface (no push notifications, no extended card)."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    @staticmethod
    async def refuse(context: grpc.aio.ServicerContext, kind: str, message: str = "",
                     metadata: dict[str, str] | None = None) -> None:
        code, text, status = java_grpc_status(kind, message, metadata)
        await context.abort(code, text, trailing_metadata=(("grpc-status-details-bin", status),))

    @staticmethod
    def _version(context: grpc.aio.ServicerContext) -> str | None:
        for key, value in context.invocation_metadata() or ():
            if key == "a2a-version":  # metadata.get(VERSION_KEY): the first value
                return str(value)
        return None

    def _events(self, req: a2a_pb2.SendMessageRequest) -> list[tuple[str, dict[str, Any]]]:
        return self.replay.run({"message": json_format.MessageToDict(req.message)})

    @staticmethod
    def _send_history(req: a2a_pb2.SendMessageRequest) -> int | None:
        config = req.configuration
        return config.history_length if req.HasField("configuration") and config.HasField("history_length") \
            else None

    async def SendMessage(self, request: a2a_pb2.SendMessageRequest,
                          context: grpc.aio.ServicerContext) -> a2a_pb2.SendMessageResponse:
        refused = java_grpc_send_refusal(self.replay, request, self._version(context))
        if refused is not None:
            await self.refuse(context, *refused)
        events = self._events(request)
        # returnImmediately: blocking=false, the first event (DefaultRequestHandler.java:561-563, 589), the
        # SUBMITTED task; else the final task. Either way limitTaskHistory with the configuration's historyLength
        # (DefaultRequestHandler.java:735-738)
        kind, payload = events[0 if request.configuration.return_immediately else -1]
        if kind != "message":
            payload = _limit_history(payload, self._send_history(request))
        return json_format.ParseDict({"message" if kind == "message" else "task": payload},
                                     a2a_pb2.SendMessageResponse())

    async def SendStreamingMessage(self, request: a2a_pb2.SendMessageRequest,
                                   context: grpc.aio.ServicerContext) -> AsyncIterator[a2a_pb2.StreamResponse]:
        refused = java_grpc_send_refusal(self.replay, request, self._version(context))
        if refused is not None:
            await self.refuse(context, *refused)
        # convertToStreamResponse (GrpcHandler.java:472-561): one onNext per event, onCompleted after a final
        # status update; a Task event's history limited as on SendMessage (DefaultRequestHandler.java:844-849)
        for kind, payload in self._events(request):
            if kind == "final":
                continue
            if kind == "task":
                payload = _limit_history(payload, self._send_history(request))
            doc = {kind: payload} if kind in ("task", "message") else payload
            yield json_format.ParseDict(doc, a2a_pb2.StreamResponse())

    async def GetTask(self, request: a2a_pb2.GetTaskRequest,
                      context: grpc.aio.ServicerContext) -> a2a_pb2.Task:
        length = request.history_length if request.HasField("history_length") else None
        if length is not None and length < 0:  # TaskQueryParams.java:25-27, through FromProto.convert
            await self.refuse(context, "params", "Invalid history length")
        task = self.replay.tasks.get(request.id)
        if task is None:  # onGetTask (DefaultRequestHandler.java:403-413)
            await self.refuse(context, "not_found")
        assert task is not None
        return json_format.ParseDict(_limit_history(task, length), a2a_pb2.Task())

    async def ListTasks(self, request: a2a_pb2.ListTasksRequest,
                        context: grpc.aio.ServicerContext) -> a2a_pb2.ListTasksResponse:
        # ListTasksParamsMapper.java:39-47 (unset page size / history length: null; an empty context id, an
        # UNSPECIFIED status, include_artifacts false: null), the ListTasksParams record's checks (ListTasksParams
        # .java:47-58), onListTasks' timestamp checks (DefaultRequestHandler.java:436-462), InMemoryTaskStore.list
        # (InMemoryTaskStore.java:138-250) and PageToken (PageToken.java:33-66)
        page_size = request.page_size if request.HasField("page_size") else None
        history = request.history_length if request.HasField("history_length") else None
        if page_size is not None and not 1 <= page_size <= 100:
            await self.refuse(context, "params", f"pageSize must be between 1 and 100, got: {page_size}")
        if history is not None and history < 0:
            await self.refuse(context, "params", f"historyLength must be non-negative, got: {history}")
        after: int | None = None
        if request.HasField("status_timestamp_after"):
            after = request.status_timestamp_after.ToMilliseconds()
            if after > int(dt.datetime.now(dt.UTC).timestamp() * 1000):
                await self.refuse(context, "params", "Invalid params",
                                  {"parameter": "statusTimestampAfter", "reason": "Timestamp cannot be in the future"})
            if after < 0:
                await self.refuse(context, "params", "Invalid params",
                                  {"parameter": "statusTimestampAfter",
                                   "reason": f"Must be a non-negative timestamp value, got: {after}"})
        state = a2a_pb2.TaskState.Name(request.status) if request.status else None
        tasks = [t for t in self.replay.tasks.values()
                 if (not request.context_id or t["contextId"] == request.context_id)
                 and (state is None or t["status"]["state"] == state)
                 and (after is None or _stamp_millis(t) > after)]
        tasks.sort(key=lambda t: t["id"])
        tasks.sort(key=_stamp_millis, reverse=True)  # timestamp (ms) descending, then id ascending
        start = 0
        if request.page_token:
            millis, sep, tid = request.page_token.partition(":")
            if not sep:
                await self.refuse(context, "params", "Invalid pageToken format: expected 'timestamp:id'")
            if not millis.lstrip("-").isdigit():
                await self.refuse(context, "params", "Invalid pageToken format: timestamp must be numeric milliseconds")
            if not tid:
                await self.refuse(context, "params", "Invalid pageToken format: id part cannot be empty")
            start = next((i for i, t in enumerate(tasks)
                          if _stamp_millis(t) < int(millis) or (_stamp_millis(t) == int(millis) and t["id"] > tid)),
                         len(tasks))
        size = page_size or 50
        page = tasks[start:start + size]
        following = ""
        if start + size < len(tasks):
            last = page[-1]
            following = f"{_stamp_millis(last)}:{last['id']}"
        keep = history or 0  # getEffectiveHistoryLength: 0 when unset, and 0 is an empty history
        shown = [t | {"history": t["history"][len(t["history"]) - keep:] if keep else [],
                      "artifacts": t["artifacts"] if request.include_artifacts else []} for t in page]
        return a2a_pb2.ListTasksResponse(tasks=[json_format.ParseDict(t, a2a_pb2.Task()) for t in shown],
                                         next_page_token=following, page_size=len(shown), total_size=len(tasks))

    async def CancelTask(self, request: a2a_pb2.CancelTaskRequest,
                         context: grpc.aio.ServicerContext) -> a2a_pb2.Task:
        task = self.replay.tasks.get(request.id)
        if task is None:  # onCancelTask (DefaultRequestHandler.java:466-476)
            await self.refuse(context, "not_found")
        assert task is not None
        await self.refuse(context, "not_cancelable",
                          f"Task cannot be canceled - current state: {task['status']['state']}")
        return a2a_pb2.Task()

    async def SubscribeToTask(self, request: a2a_pb2.SubscribeToTaskRequest,
                              context: grpc.aio.ServicerContext) -> AsyncIterator[a2a_pb2.StreamResponse]:
        task = self.replay.tasks.get(request.id)
        if task is None:  # onSubscribeToTask (DefaultRequestHandler.java:948-964); every replayed task finished
            await self.refuse(context, "not_found")
        assert task is not None
        await self.refuse(context, "unsupported", f"Cannot subscribe to task {task['id']} - task is in terminal "
                                                  f"state: {task['status']['state']}")
        yield a2a_pb2.StreamResponse()

    async def _push(self, context: grpc.aio.ServicerContext) -> None:
        # every push rpc checks capabilities.pushNotifications first (GrpcHandler.java:283-286, 306-309, 329-332,
        # 587-590)
        await self.refuse(context, "push")

    async def CreateTaskPushNotificationConfig(self, request: a2a_pb2.TaskPushNotificationConfig,
                                               context: grpc.aio.ServicerContext) -> a2a_pb2.TaskPushNotificationConfig:
        await self._push(context)
        return request

    async def GetTaskPushNotificationConfig(self, request: a2a_pb2.GetTaskPushNotificationConfigRequest,
                                            context: grpc.aio.ServicerContext) -> a2a_pb2.TaskPushNotificationConfig:
        await self._push(context)
        return a2a_pb2.TaskPushNotificationConfig()

    async def ListTaskPushNotificationConfigs(
            self, request: a2a_pb2.ListTaskPushNotificationConfigsRequest,
            context: grpc.aio.ServicerContext) -> a2a_pb2.ListTaskPushNotificationConfigsResponse:
        await self._push(context)
        return a2a_pb2.ListTaskPushNotificationConfigsResponse()

    async def DeleteTaskPushNotificationConfig(
            self, request: a2a_pb2.DeleteTaskPushNotificationConfigRequest,
            context: grpc.aio.ServicerContext) -> Any:
        await self._push(context)

    async def GetExtendedAgentCard(self, request: a2a_pb2.GetExtendedAgentCardRequest,
                                   context: grpc.aio.ServicerContext) -> a2a_pb2.AgentCard:
        # capabilities.extendedAgentCard false: UnsupportedOperationError() (GrpcHandler.java:566-569)
        await self.refuse(context, "unsupported")
        return a2a_pb2.AgentCard()


@asynccontextmanager
async def replay_agent(line: str, **kw: Any) -> AsyncIterator[str]:
    """Serve the replay of one SDK line (`LINES`); yields its origin (the card is at the well-known path)."""
    replay = Replay.of(line, **kw)
    where = {"origin": ""}
    server = None
    if replay.binding == "GRPC":
        server = grpc.aio.server()
        servicer = GoGrpcServicer(replay) if replay.sdk == "go" else JavaGrpcServicer(replay)
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        # a2a-go's example: "127.0.0.1:<port>"; a2a-java's: "localhost:<port>" (the gRPC channel tries ::1, then
        # 127.0.0.1, where the replay listens)
        replay.grpc_target = f"{'127.0.0.1' if replay.sdk == 'go' else 'localhost'}:{port}"
        await server.start()
    try:
        async with serve(build_app(replay, where)) as origin:
            where["origin"] = origin
            yield origin
    finally:
        if server is not None:
            await server.stop(grace=None)
