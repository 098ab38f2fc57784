"""Protocol dialects (1.0, 0.3, 0.1) as data plus small functions, never as forks of the engine.

A dialect knows state and role spellings, how to build a user message and how to read results and
stream events back into one normalised shape (`Item`); method names belong to the bindings. It records shape
deviations as plain strings; the checks decide what they mean.

0.3 has two wire dialects: JSON-RPC speaks the 0.3 JSON schema (`kind` discriminators, `"completed"`), while
HTTP+JSON and gRPC speak the 0.3 proto (`specification/grpc/a2a.proto` at v0.3.0, package `a2a.v1`) as ProtoJSON:
results wrapped in a one-of (`{"task": …}`), `ROLE_USER`, `TASK_STATE_CANCELLED` (two Ls), a Message's parts in
`content` (an Artifact's stay in `parts`). `V03_PROTO` is that second one; `for_binding` picks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TaskState(StrEnum):
    SUBMITTED = "SUBMITTED"
    WORKING = "WORKING"
    INPUT_REQUIRED = "INPUT_REQUIRED"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"


TERMINAL = frozenset({TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED})
INTERRUPTED = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
_RANK = {TaskState.SUBMITTED: 0, TaskState.WORKING: 1, TaskState.INPUT_REQUIRED: 2, TaskState.AUTH_REQUIRED: 2}


# the proto TaskState numbers (the same in lf.a2a.v1 and the 0.3 a2a.v1); 0 is UNSPECIFIED
_STATE_NUMBERS = {1: TaskState.SUBMITTED, 2: TaskState.WORKING, 3: TaskState.COMPLETED, 4: TaskState.FAILED,
                  5: TaskState.CANCELED, 6: TaskState.INPUT_REQUIRED, 7: TaskState.REJECTED, 8: TaskState.AUTH_REQUIRED}
# ends a dialect problem the official parsers read past: invoke.dialect grades it, invoke.result_shape does not
NUMBER_NOTE = " (1.0 §5.5 and ProtoJSON: enum values as names; the official parsers read the number)"


def state_name(state: TaskState | None) -> str:
    """A state for a message: its name, or "no state" (never "None")."""
    return state.value if state is not None else "no state"


def is_regression(prev: TaskState, new: TaskState) -> bool:
    """True when `new` may not follow `prev` (spec §6: terminal never restarts, SUBMITTED never returns)."""
    if prev in TERMINAL:
        return True  # nothing may follow a terminal state, not even the same one again as an update
    if new in TERMINAL or new is TaskState.UNKNOWN or prev is TaskState.UNKNOWN:
        return False
    if prev in INTERRUPTED and new is TaskState.WORKING:
        return False  # resuming after input or out-of-band auth
    return _RANK.get(new, 0) < _RANK.get(prev, 0)


@dataclass(slots=True)
class Item:
    """One result or stream event, normalised across dialects."""

    kind: str  # task | message | status | artifact | unknown
    task_id: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    final: bool | None = None  # 0.3 only
    artifact_id: str | None = None
    append: bool = False
    last_chunk: bool = False
    texts: list[str] = field(default_factory=list)
    artifacts: int = 0
    # per artifact, its parts' kinds (text, file, data; 1.0 raw/url count as file) and its texts: what the
    # equivalence check compares across bindings, in a form both versions share
    artifact_parts: list[tuple[str, ...]] = field(default_factory=list)
    artifact_texts: list[str] = field(default_factory=list)
    status_text: str = ""
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Dialect:
    version: str
    states: dict[str, TaskState]
    roles: tuple[str, str]  # (user, agent)
    header_version: str | None  # the A2A-Version header value, None where the dialect has none
    parse: Callable[[Dialect, Any], Item]
    user_message: Callable[[str, str, str | None, str | None], dict[str, Any]]
    part_keys: tuple[str, ...] = ()  # a ProtoJSON Part's one-of members; () for the 0.x JSON `kind` parts
    message_parts: str = "parts"  # the Message field that holds its parts (the 0.3 proto calls it `content`)
    name: str = ""  # how messages name the dialect ("0.3 proto"); the version when empty

    @property
    def proto(self) -> bool:
        """ProtoJSON shapes: results wrapped in a one-of, and GetTask/CancelTask answer a bare Task."""
        return bool(self.part_keys)

    @property
    def label(self) -> str:
        return self.name or self.version

    def state(self, raw: Any, problems: list[str]) -> TaskState | None:
        number = self.enum_number(raw)
        if number is not None:  # ProtoJSON parsers read an enum's number (a2a-sdk: json_format), so the probe does
            numbered = _STATE_NUMBERS.get(number, TaskState.UNKNOWN)
            problems.append(f"status.state {raw!r} is the enum's number ({numbered.value}): ProtoJSON parsers read "
                            f"it, but {self.label} sends enums as their names{NUMBER_NOTE}")
            return numbered
        if not isinstance(raw, str):
            problems.append(f"status.state is {type(raw).__name__}, expected a string")
            return None
        state = self.states.get(raw)
        if state is None:
            other = next((d for d in (*DIALECTS.values(), V03_PROTO) if d is not self and raw in d.states), None)
            hint = f" (that is the {other.label} spelling)" if other else ""
            problems.append(f"unknown task state {raw!r} for protocol {self.label}{hint}")
            return TaskState.UNKNOWN
        return state

    def result_item(self, result: Any) -> Item:
        return self.parse(self, result)

    def enum_number(self, raw: Any) -> int | None:
        """The number a ProtoJSON enum value gives (an integer, or a string json_format's int() reads), for the
        proto dialects; None for a name or anything else."""
        if not self.proto or isinstance(raw, bool):
            return None
        if isinstance(raw, int):
            return raw
        if isinstance(raw, str) and raw not in self.states and raw not in self.roles:
            try:
                return int(raw)
            except ValueError:
                return None
        return None


NO_KIND = "has no 'kind'"  # the words of a missing discriminator, which the official client reads past (checks.shape)
_B64_STD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_B64_URL = (_B64_STD - {"+", "/"}) | {"-", "_"}


def _base64(value: Any, where: str, problems: list[str]) -> None:
    """ProtoJSON bytes: standard or URL-safe base64, padded or not (one alphabet per value)."""
    if not isinstance(value, str):
        problems.append(f"a part's {where} is not a base64 string (got {type(value).__name__})")
        return
    body = value.rstrip("=")
    alphabet = _B64_URL if ("-" in body or "_" in body) else _B64_STD
    bad = next((i for i, ch in enumerate(body) if ch not in alphabet), None)
    why: str | None = None
    if bad is not None:
        why = f"character {body[bad]!r} at offset {bad}"
    elif len(value) - len(body) > 2 or (value != body and len(value) % 4):
        why = "bad '=' padding"
    elif len(body) % 4 == 1:
        why = f"length {len(body)} is one more than a multiple of 4"
    if why:
        problems.append(f"a part's {where} is invalid base64: {why}")


def _texts(d: Dialect, parts: Any, problems: list[str]) -> list[str]:
    out: list[str] = []
    if parts is None:  # absent (or null): a REQUIRED gap json_format reads as no parts (invoke.required_fields)
        return out
    if not isinstance(parts, list):
        problems.append("parts is not a list")
        return out
    for p in parts:
        if not isinstance(p, dict):
            problems.append("a part is not an object")
            continue
        if d.part_keys:
            kinds = [k for k in d.part_keys if p.get(k) is not None]
            if len(kinds) > 1:  # none is a REQUIRED gap json_format reads as an empty Part (invoke.required_fields)
                problems.append(f"a {d.label} part must have exactly one of {'/'.join(d.part_keys)}, found "
                                f"{kinds or 'none'}")
            if "kind" in p and d.version != "1.0":  # 1.0 §5.7: an unrecognized field, ignored (as a2a-sdk does)
                problems.append(f"a {d.label} part carries the 0.3 'kind' field")
            if p.get("raw") is not None:  # null is absent (ProtoJSON)
                _base64(p["raw"], "raw", problems)
            if isinstance(p.get("file"), dict) and "fileWithBytes" in p["file"]:
                _base64(p["file"]["fileWithBytes"], "file.fileWithBytes", problems)
        else:
            if p.get("kind") is None and p.get("type") is None:
                problems.append(f"a 0.3 part {NO_KIND}")
            if isinstance(p.get("file"), dict) and "bytes" in p["file"]:
                _base64(p["file"]["bytes"], "file.bytes", problems)
        if isinstance(p.get("text"), str):
            out.append(p["text"])
    return out


_KIND_PROTO = {"text": "text", "raw": "file", "url": "file", "file": "file", "data": "data"}  # 1.0 and the 0.3 proto


def part_kinds(d: Dialect, parts: Any) -> tuple[str, ...]:
    """The kinds of a parts list, named alike in 1.0 and 0.3 (a part of no known kind is "?")."""
    out: list[str] = []
    for p in parts if isinstance(parts, list) else []:
        if not isinstance(p, dict):
            out.append("?")
        elif d.part_keys:
            out.append(next((_KIND_PROTO[k] for k in d.part_keys if k in p), "?"))
        else:
            kind = p.get("kind", p.get("type"))
            out.append(kind if kind in ("text", "file", "data") else "?")
    return tuple(out)


def _status(d: Dialect, item: Item, status: Any) -> None:
    if not isinstance(status, dict):
        item.problems.append("status is missing or not an object")
        return
    item.state = d.state(status.get("state"), item.problems)
    msg = status.get("message")
    if isinstance(msg, dict):
        item.status_text = " ".join(_texts(d, msg.get(d.message_parts), []))


def named(d: Dialect, body: dict[str, Any], json_name: str) -> Any:
    """A field by its ProtoJSON name, or by its proto name: ProtoJSON parsers accept both (protobuf's json_format
    under a2a-sdk, ts-proto's fromJSON under @a2a-js/sdk), so a proto dialect's item reads what they read; the
    snake_case spelling is invoke.camel_case's finding (probe.wire.schema), never a missing field here."""
    value = body.get(json_name)
    if value is None and d.proto:
        return body.get(_PROTO_NAMES.get(json_name) or json_name)
    return value


_PROTO_NAMES = {name: re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name) for name in (
    "contextId", "taskId", "artifactId", "lastChunk", "statusUpdate", "artifactUpdate", "messageId", "nextPageToken")}


def _task_fields(d: Dialect, item: Item, task: dict[str, Any]) -> None:
    item.task_id = task.get("id") if isinstance(task.get("id"), str) else None
    item.context_id = _str_or_none(named(d, task, "contextId"))
    if not item.task_id:
        item.problems.append("task has no string id")
    _status(d, item, task.get("status"))
    arts = task.get("artifacts")
    item.artifacts = len(arts) if isinstance(arts, list) else 0
    for art in arts if isinstance(arts, list) else []:
        if isinstance(art, dict):
            texts = _texts(d, art.get("parts"), item.problems)
            item.texts += texts
            item.artifact_parts.append(part_kinds(d, art.get("parts")))
            item.artifact_texts.append(" ".join(texts))
    for msg in task.get("history") or []:
        if isinstance(msg, dict) and msg.get("role") == d.roles[1]:
            item.texts += _texts(d, msg.get(d.message_parts), [])


def _parse_v1(d: Dialect, result: Any) -> Item:
    """A ProtoJSON result (1.0, and the 0.3 proto): exactly one of the one-of members, each read by the dialect."""
    if not isinstance(result, dict):
        return Item("unknown", problems=[f"result is {type(result).__name__}, expected an object"])
    keys = [k for k in ("task", "message", "statusUpdate", "artifactUpdate")
            if k in result or _PROTO_NAMES.get(k, k) in result]
    if len(keys) != 1:
        hint = " (looks like a 0.3 result with 'kind')" if "kind" in result else ""
        return Item("unknown", problems=[f"{d.label} result must wrap exactly one of task/message/statusUpdate/"
                                         f"artifactUpdate, found {keys or sorted(result)[:5]}{hint}"])
    key = keys[0]
    body = named(d, result, key)
    if not isinstance(body, dict):
        return Item("unknown", problems=[f"result.{key} is not an object"])
    item = Item({"task": "task", "message": "message", "statusUpdate": "status", "artifactUpdate": "artifact"}[key])
    _event_body(d, item, body)
    # 0.3's kind (and final) inside a 1.0 answer are unrecognized fields, which 1.0 §5.7 has receivers ignore (a2a-sdk
    # 1.3 parses with ignore_unknown_fields): nothing broken. a2a-sdk 0.3's REST client rejects them (json_format.Parse)
    if "kind" in body and d.version != "1.0":
        item.problems.append(f"{d.label} {key} carries the 0.3 'kind' field")
    return item


def _str_or_none(value: Any) -> str | None:
    """An id as the Item holds it: the agent's string, or None for anything else (a number, an object)."""
    return value if isinstance(value, str) else None


def _event_body(d: Dialect, item: Item, body: dict[str, Any]) -> None:
    v1 = d.version == "1.0"
    if item.kind == "task":
        _task_fields(d, item, body)
    elif item.kind == "message":
        item.context_id = _str_or_none(named(d, body, "contextId"))
        item.task_id = _str_or_none(named(d, body, "taskId"))
        item.texts = _texts(d, body.get(d.message_parts), item.problems)
        role = d.enum_number(body.get("role"))
        if role is not None:
            name = d.roles[role - 1] if role in (1, 2) else f"number {role}"
            item.problems.append(f"message role {body.get('role')!r} is the enum's number ({name}): ProtoJSON parsers "
                                 f"read it, but {d.label} sends enums as their names{NUMBER_NOTE}")
        elif body.get("role") not in d.roles:
            item.problems.append(f"message role {body.get('role')!r} is not one of {list(d.roles)}")
    else:
        item.task_id = _str_or_none(named(d, body, "taskId"))
        item.context_id = _str_or_none(named(d, body, "contextId"))
        if item.task_id is None or item.context_id is None:
            item.problems.append(f"{item.kind} update lacks taskId or contextId")
        if item.kind == "status":
            _status(d, item, body.get("status"))
            if not v1:
                item.final = body.get("final") is True
        else:
            art = body.get("artifact")
            art_id = named(d, art, "artifactId") if isinstance(art, dict) else None
            if not isinstance(art, dict) or not isinstance(art_id, str):
                item.problems.append("artifact update without an artifact.artifactId")
            else:
                item.artifact_id = art_id
                item.texts = _texts(d, art.get("parts"), item.problems)
            item.append = body.get("append") is True
            item.last_chunk = named(d, body, "lastChunk") is True


_KIND_03 = {"task": "task", "message": "message", "status-update": "status", "artifact-update": "artifact"}


# a 0.3 object without `kind`, by the fields its model requires, in the order of a2a-sdk's result unions (Task,
# Message, status update, artifact update): its pydantic models default `kind`, so the client reads it as the first
# member whose required fields it has
_BY_FIELDS_03 = (("task", ("id", "contextId", "status")), ("message", ("messageId", "role", "parts")),
                 ("status", ("taskId", "contextId", "status", "final")),
                 ("artifact", ("taskId", "contextId", "artifact")))


def _parse_03(d: Dialect, result: Any) -> Item:
    if not isinstance(result, dict):
        return Item("unknown", problems=[f"result is {type(result).__name__}, expected an object"])
    kind = _KIND_03.get(str(result.get("kind")))
    if kind is None and "kind" not in result:
        kind = next((k for k, fields in _BY_FIELDS_03 if all(f in result for f in fields)), None)
        if kind is not None:  # 0.3 §6 requires kind, but a2a-sdk's client reads the object by its fields
            item = Item(kind, problems=[f"0.3 {kind} {NO_KIND} (a2a-sdk's client reads it by its fields)"])
            _event_body(d, item, result)
            return item
    if kind is None:
        wrapped = [k for k in ("task", "message", "statusUpdate", "artifactUpdate") if k in result]
        hint = f" (looks like a 1.0 result wrapping {wrapped[0]})" if wrapped else ""
        return Item("unknown", problems=[f"0.3 result has no known 'kind' (got {result.get('kind')!r}){hint}"])
    item = Item(kind)
    _event_body(d, item, result)
    return item


def _parse_01(d: Dialect, result: Any) -> Item:
    if not isinstance(result, dict):
        return Item("unknown", problems=["result is not an object"])
    item = Item("task" if "status" in result and "id" in result and "artifact" not in result else "unknown")
    if item.kind == "task":
        _task_fields(d, item, result)
    return item


def _with_ids(m: dict[str, Any], task_id: str | None, context_id: str | None) -> dict[str, Any]:
    return m | ({"taskId": task_id} if task_id else {}) | ({"contextId": context_id} if context_id else {})


def _msg_v1(text: str, message_id: str, task_id: str | None, context_id: str | None) -> dict[str, Any]:
    return _with_ids({"role": "ROLE_USER", "messageId": message_id, "parts": [{"text": text}]}, task_id, context_id)


def _msg_03(text: str, message_id: str, task_id: str | None, context_id: str | None) -> dict[str, Any]:
    m = {"kind": "message", "role": "user", "messageId": message_id, "parts": [{"kind": "text", "text": text}]}
    return _with_ids(m, task_id, context_id)


def _msg_03_proto(text: str, message_id: str, task_id: str | None, context_id: str | None) -> dict[str, Any]:
    return _with_ids({"messageId": message_id, "role": "ROLE_USER", "content": [{"text": text}]}, task_id, context_id)


def _msg_01(text: str, _message_id: str, _task_id: str | None, _context_id: str | None) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


_LOWER = {"submitted": TaskState.SUBMITTED, "working": TaskState.WORKING, "input-required": TaskState.INPUT_REQUIRED,
          "auth-required": TaskState.AUTH_REQUIRED, "completed": TaskState.COMPLETED, "failed": TaskState.FAILED,
          "canceled": TaskState.CANCELED, "rejected": TaskState.REJECTED, "unknown": TaskState.UNKNOWN}

V1 = Dialect(
    version="1.0",
    states={f"TASK_STATE_{s.value}": s for s in TaskState if s is not TaskState.UNKNOWN}
    | {"TASK_STATE_UNSPECIFIED": TaskState.UNKNOWN},
    roles=("ROLE_USER", "ROLE_AGENT"), header_version="1.0", parse=_parse_v1, user_message=_msg_v1,
    part_keys=("text", "raw", "url", "data"),
)
V03 = Dialect(
    version="0.3",
    states=_LOWER, roles=("user", "agent"), header_version=None, parse=_parse_03, user_message=_msg_03,
)
V01 = Dialect(
    version="0.1",
    states=_LOWER, roles=("user", "agent"), header_version=None, parse=_parse_01, user_message=_msg_01,
)

# HTTP+JSON and gRPC in 0.3: ProtoJSON of the 0.3 proto (enum TaskState spells TASK_STATE_CANCELLED)
_PROTO_03_STATES = {f"TASK_STATE_{s.value}": s for s in TaskState if s not in (TaskState.UNKNOWN, TaskState.CANCELED)}
V03_PROTO = Dialect(
    version="0.3",
    states=_PROTO_03_STATES | {"TASK_STATE_CANCELLED": TaskState.CANCELED, "TASK_STATE_UNSPECIFIED": TaskState.UNKNOWN},
    roles=("ROLE_USER", "ROLE_AGENT"), header_version=None, parse=_parse_v1, user_message=_msg_03_proto,
    part_keys=("text", "file", "data"), message_parts="content", name="0.3 proto",
)

DIALECTS: dict[str, Dialect] = {"1.0": V1, "0.3": V03, "0.1": V01}


def for_binding(dialect: Dialect, binding: str) -> Dialect:
    """The wire dialect of a version on a binding: 0.3 over HTTP+JSON or gRPC is the 0.3 proto's ProtoJSON."""
    if dialect is V03 and binding in ("http_json", "grpc"):
        return V03_PROTO
    return dialect


def for_version(version: str) -> Dialect | None:
    """Map a card's protocol version ("1.0", "0.3.0", "0.2.5", …) to the dialect that speaks it."""
    major_minor = ".".join(version.strip().split(".")[:2])
    if major_minor == "1" or major_minor.startswith("1."):  # "1": a2a-sdk's client reads it as 1.0 (packaging)
        return V1
    if major_minor in ("0.3", "0.2"):
        return V03  # 0.2 uses the same JSON-RPC methods and shapes as 0.3
    if major_minor == "0.1":
        return V01
    return None
