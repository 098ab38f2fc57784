"""Valid answers of each version and binding, and the systematic mutations of them the differential harness serves.

A `Mutant` is one answer changed at one place: a card, a SendMessage result, a GetTask result or one event of a
SendStreamingMessage stream. Every mutation is made from a valid answer by one of the operators below, named
`<operator> <path>` (`drop task.status.state`, `null message.parts[0].text`, ...), so a row of the disagreement
table says exactly what changed. Strings in a card may hold `@BASE@`, the mutant's own URL prefix, filled in when
it is served.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

Json = Any
BASE = "@BASE@"
STAMP = "2026-01-01T00:00:00Z"


@dataclass(frozen=True)
class Flavour:
    """A protocol version and binding the official client speaks."""

    version: str  # "1.0" or "0.3"
    binding: Literal["JSONRPC", "HTTP+JSON"]

    @property
    def name(self) -> str:
        return f"{self.version} {self.binding}"


V10_RPC = Flavour("1.0", "JSONRPC")
V10_REST = Flavour("1.0", "HTTP+JSON")
V03_RPC = Flavour("0.3", "JSONRPC")
FLAVOURS = (V10_RPC, V10_REST, V03_RPC)


@dataclass
class Mutant:
    flavour: Flavour
    target: str  # card, send, get, stream
    name: str  # "<operator> <path>"; "valid" for the unchanged answers
    card: Json
    send: Json  # the SendMessage result (for "get": a WORKING task, so that GetTask is what is judged)
    get: Json  # the GetTask result
    stream: list[Json] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.flavour.name} {self.target}: {self.name}"


# ---- the valid answers

def card(flavour: Flavour) -> Json:
    url = f"{BASE}/rpc" if flavour.binding == "JSONRPC" else f"{BASE}/rest"
    common = {"name": "diff", "description": "differential agent", "version": "1.0.0",
              "provider": {"organization": "Example", "url": "https://example.com"},
              "documentationUrl": "https://example.com/docs",
              "capabilities": {"streaming": True, "pushNotifications": False},
              "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
              "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["test"],
                          "examples": ["hi"]}]}
    if flavour.version == "1.0":
        return {**common, "supportedInterfaces": [{"url": url, "protocolBinding": flavour.binding,
                                                   "protocolVersion": "1.0"}]}
    return {**common, "protocolVersion": "0.3.0", "url": url, "preferredTransport": flavour.binding}


def _task10(state: str) -> Json:
    return {"id": "t1", "contextId": "c1",
            "status": {"state": f"TASK_STATE_{state}", "timestamp": STAMP,
                       "message": {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}},
            "artifacts": [{"artifactId": "a1", "name": "result", "parts": [{"text": "echo"}]}],
            "history": [{"messageId": "m1", "role": "ROLE_USER", "contextId": "c1", "taskId": "t1",
                         "parts": [{"text": "hi"}]}]}


def _message10() -> Json:
    return {"messageId": "m3", "role": "ROLE_AGENT", "contextId": "c1",
            "parts": [{"text": "hello", "mediaType": "text/plain"},
                      {"data": {"k": [1, "v"]}, "mediaType": "application/json"},
                      {"url": "https://example.com/f.txt", "filename": "f.txt", "mediaType": "text/plain"},
                      {"raw": "aGVsbG8=", "filename": "h.bin", "mediaType": "application/octet-stream"}]}


def _task03(state: str) -> Json:
    return {"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": state, "timestamp": STAMP,
                       "message": {"kind": "message", "messageId": "m2", "role": "agent",
                                   "parts": [{"kind": "text", "text": "done"}]}},
            "artifacts": [{"artifactId": "a1", "name": "result", "parts": [{"kind": "text", "text": "echo"}]}],
            "history": [{"kind": "message", "messageId": "m1", "role": "user", "contextId": "c1", "taskId": "t1",
                         "parts": [{"kind": "text", "text": "hi"}]}]}


def _message03() -> Json:
    return {"kind": "message", "messageId": "m3", "role": "agent", "contextId": "c1",
            "parts": [{"kind": "text", "text": "hello"},
                      {"kind": "data", "data": {"k": [1, "v"]}},
                      {"kind": "file", "file": {"uri": "https://example.com/f.txt", "name": "f.txt",
                                                "mimeType": "text/plain"}},
                      {"kind": "file", "file": {"bytes": "aGVsbG8=", "name": "h.bin",
                                                "mimeType": "application/octet-stream"}}]}


def send_task(flavour: Flavour, state: str = "COMPLETED") -> Json:
    if flavour.version == "1.0":
        return {"task": _task10(state)}
    return _task03(state.lower().replace("_", "-"))


def send_message(flavour: Flavour) -> Json:
    return {"message": _message10()} if flavour.version == "1.0" else _message03()


def get_task(flavour: Flavour) -> Json:
    return _task10("COMPLETED") if flavour.version == "1.0" else _task03("completed")


def stream(flavour: Flavour) -> list[Json]:
    if flavour.version == "1.0":
        task = _task10("SUBMITTED")
        del task["artifacts"], task["status"]["message"]
        return [{"task": task},
                {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                  "status": {"state": "TASK_STATE_WORKING", "timestamp": STAMP}}},
                {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": False, "lastChunk": True,
                                    "artifact": {"artifactId": "a1", "parts": [{"text": "echo"}]}}},
                {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                  "status": {"state": "TASK_STATE_COMPLETED", "timestamp": STAMP}}}]
    task = _task03("submitted")
    del task["artifacts"], task["status"]["message"]
    return [task,
            {"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": False,
             "status": {"state": "working", "timestamp": STAMP}},
            {"kind": "artifact-update", "taskId": "t1", "contextId": "c1", "append": False, "lastChunk": True,
             "artifact": {"artifactId": "a1", "parts": [{"kind": "text", "text": "echo"}]}},
            {"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": True,
             "status": {"state": "completed", "timestamp": STAMP}}]


# ---- the operators: each yields (name, mutated document) for one document

Path = tuple[str | int, ...]


def _paths(doc: Json, path: Path = ()) -> Iterator[tuple[Path, Json]]:
    """Every member of every object and every element of every array, depth first."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield (*path, key), value
            yield from _paths(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield (*path, i), value
            yield from _paths(value, (*path, i))


def show_path(root: str, path: Path) -> str:
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _set(doc: Json, path: Path, value: Json) -> Json:
    out = copy.deepcopy(doc)
    holder = out
    for p in path[:-1]:
        holder = holder[p]
    if value is _DELETE:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return out


_DELETE: Any = object()


def _renamed(doc: Json, path: Path, name: str) -> Json:
    """`doc` with the member at `path` under another name, in its place."""
    out = copy.deepcopy(doc)
    holder = out
    for p in path[:-1]:
        holder = holder[p]
    items = [(name if k == path[-1] else k, v) for k, v in holder.items()]
    holder.clear()
    holder.update(items)
    return out


def _proto_name(json_name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), json_name)

# one value of each other JSON type
_WRONG: dict[type, list[Json]] = {
    str: [7, {"x": 1}], bool: ["true", 1], int: ["x", True], float: ["x"], dict: ["x", []], list: [{}, "x"],
}

_STAMP_VARIANTS = {
    "offset +00:00": "2026-01-01T00:00:00+00:00", "offset +02:00": "2026-01-01T02:00:00+02:00",
    "lowercase t and z": "2026-01-01t00:00:00z", "no zone": "2026-01-01T00:00:00",
    "nanos": "2026-01-01T00:00:00.123456789Z", "millis": "2026-01-01T00:00:00.123Z",
    "space separator": "2026-01-01 00:00:00Z", "date only": "2026-01-01", "epoch number": 1767225600,
    "leap second": "2026-06-30T23:59:60Z", "10 fraction digits": "2026-01-01T00:00:00.1234567890Z",
}

_STATES = ("SUBMITTED", "WORKING", "COMPLETED", "FAILED", "CANCELED", "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED")


_NUMBERS = {f"TASK_STATE_{s}": n for n, s in enumerate(("UNSPECIFIED", *_STATES[:2], "COMPLETED", "FAILED",
                                                          "CANCELED", "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED"))}
_NUMBERS |= {"ROLE_UNSPECIFIED": 0, "ROLE_USER": 1, "ROLE_AGENT": 2}


def _enum_variants(value: str) -> dict[str, Json]:
    """The other version's spelling, wrong case, an undefined name, and (ProtoJSON-valid) the enum's number."""
    if value.startswith("TASK_STATE_"):
        plain = value.removeprefix("TASK_STATE_")
        return {"0.3 spelling": plain.lower().replace("_", "-"), "lowercase": value.lower(), "bare": plain,
                "unspecified": "TASK_STATE_UNSPECIFIED", "undefined": "TASK_STATE_PAUSED", "number": _NUMBERS[value],
                "number as string": str(_NUMBERS[value])}
    if value.startswith("ROLE_"):
        plain = value.removeprefix("ROLE_")
        return {"0.3 spelling": plain.lower(), "lowercase": value.lower(), "unspecified": "ROLE_UNSPECIFIED",
                "number": _NUMBERS[value]}
    if value.upper().replace("-", "_") in _STATES:
        return {"1.0 spelling": "TASK_STATE_" + value.upper().replace("-", "_"), "uppercase": value.upper(),
                "undefined": "paused"}
    if value in ("user", "agent"):
        return {"1.0 spelling": "ROLE_" + value.upper(), "capitalised": value.capitalize()}
    return {}


_ENUM_KEYS = frozenset({"state", "role"})
_STAMP_KEYS = frozenset({"timestamp"})


def mutations(doc: Json, root: str, version: str) -> Iterator[tuple[str, Json]]:
    """The mutated documents of one valid document."""
    seen: set[str] = set()

    def once(name: str, mutated: Json) -> Iterator[tuple[str, Json]]:
        key = json.dumps(mutated, sort_keys=True)
        if key not in seen:
            seen.add(key)
            yield name, mutated

    for path, value in _paths(doc):
        where = show_path(root, path)
        key = path[-1]
        if isinstance(key, str):
            yield from once(f"drop {where}", _set(doc, path, _DELETE))
            yield from once(f"null {where}", _set(doc, path, None))
            # ProtoJSON parsers read a field by its proto name too; not a card's: @a2a-js/sdk's card resolver keeps
            # the card's JSON as sent (normalizeAgentCard parses it as ProtoJSON only when its security looks so)
            if _proto_name(key) != key and root != "card":
                yield from once(f"proto name {where}", _renamed(doc, path, _proto_name(key)))
        for i, wrong in enumerate(_WRONG.get(type(value), [])):
            yield from once(f"wrong type {where} = {json.dumps(wrong)}" if i else f"wrong type {where}",
                            _set(doc, path, wrong))
        if isinstance(value, list) and value:
            yield from once(f"empty array {where}", _set(doc, path, []))
        if isinstance(value, str) and value and key not in _STAMP_KEYS:
            yield from once(f"empty string {where}", _set(doc, path, ""))
        if isinstance(value, str) and key in _ENUM_KEYS:
            for label, other in _enum_variants(value).items():
                yield from once(f"enum {label} {where} = {other}", _set(doc, path, other))
        if key in _STAMP_KEYS:
            for label, other in _STAMP_VARIANTS.items():
                yield from once(f"timestamp {label} {where}", _set(doc, path, other))
        if isinstance(value, bool):
            yield from once(f"bool as string {where}", _set(doc, path, json.dumps(value)))
        if isinstance(value, int) and not isinstance(value, bool):
            yield from once(f"number as string {where}", _set(doc, path, str(value)))
        if isinstance(value, dict):
            yield from once(f"extra field {where}", _set(doc, path, {**value, "zzUnknown": 1}))
            yield from _part_mutations(value, path, doc, where, version, once)
            yield from _kind_mutations(value, path, doc, where, version, once)
    if isinstance(doc, dict):
        yield from once(f"extra field {root}", {**doc, "zzUnknown": {"a": [1]}})


Once = Callable[[str, Json], Iterator[tuple[str, Json]]]


def _part_mutations(value: dict[str, Json], path: Path, doc: Json, where: str, version: str,
                    once: Once) -> Iterator[tuple[str, Json]]:
    """A Part with its content member missing, two content members, or a member of the other version."""
    is_part = len(path) >= 2 and path[-2] == "parts"
    if not is_part:
        return
    if version == "1.0":
        content = [k for k in ("text", "raw", "url", "data") if k in value]
        rest = {k: v for k, v in value.items() if k not in content}
        yield from once(f"part without content {where}", _set(doc, path, rest or {"mediaType": "text/plain"}))
        extra = "raw" if "text" in value else "text"
        yield from once(f"part with two contents {where} (+{extra})",
                        _set(doc, path, {**value, extra: "aGk=" if extra == "raw" else "x"}))
        yield from once(f"part with 0.3 kind {where}", _set(doc, path, {**value, "kind": "text"}))
        if "text" in value:
            yield from once(f"0.3 file part in 1.0 {where}",
                            _set(doc, path, {"kind": "file", "file": {"uri": "https://example.com/f"}}))
    else:
        yield from once(f"part without kind {where}", _set(doc, path, {k: v for k, v in value.items()
                                                                        if k != "kind"}))
        yield from once(f"part as 1.0 {where}", _set(doc, path, {k: v for k, v in value.items() if k != "kind"}
                                                     | ({"mediaType": "text/plain"})))
        if value.get("kind") == "file":
            file = value["file"]
            yield from once(f"file with uri and bytes {where}",
                            _set(doc, path, {**value, "file": {**file, "uri": "https://x/y", "bytes": "aGk="}}))
            yield from once(f"file without uri or bytes {where}",
                            _set(doc, path, {**value, "file": {"name": "n"}}))
        if value.get("kind") == "text":
            yield from once(f"text part with data {where}", _set(doc, path, {**value, "data": {"a": 1}}))


def _kind_mutations(value: dict[str, Json], path: Path, doc: Json, where: str, version: str,
                    once: Once) -> Iterator[tuple[str, Json]]:
    if version == "1.0" and len(path) == 1 and path[0] in ("task", "message", "statusUpdate", "artifactUpdate"):
        kind = {"task": "task", "message": "message", "statusUpdate": "status-update",
                "artifactUpdate": "artifact-update"}[str(path[0])]
        yield from once(f"0.3 kind in 1.0 {where}", _set(doc, path, {**value, "kind": kind}))
    if version == "0.3" and "kind" in value and value["kind"] in ("message",) and path:
        yield from once(f"1.0 role in 0.3 {where}", _set(doc, path, {**value, "role": "ROLE_AGENT"}))


def _top_mutations(doc: Json, root: str, version: str) -> Iterator[tuple[str, Json]]:
    """Mutations of the whole result: the other version's envelope."""
    if version == "1.0" and isinstance(doc, dict) and len(doc) == 1:
        (key, inner), = doc.items()
        kind = {"task": "task", "message": "message", "statusUpdate": "status-update",
                "artifactUpdate": "artifact-update"}.get(key)
        if kind:
            yield f"0.3 form (bare, kind) {root}", {**inner, "kind": kind}
            yield f"empty result {root}", {}
            yield f"two members {root}", {**doc, "message": _message10()} if key != "message" else \
                {**doc, "task": _task10("COMPLETED")}
    if version == "0.3" and isinstance(doc, dict) and "kind" in doc:
        key = {"task": "task", "message": "message", "status-update": "statusUpdate",
               "artifact-update": "artifactUpdate"}[doc["kind"]]
        yield f"1.0 form (wrapped) {root}", {key: {k: v for k, v in doc.items() if k != "kind"}}
        yield f"kind wrong {root}", {**doc, "kind": "Task"}


def all_mutations(doc: Json, root: str, version: str) -> Iterator[tuple[str, Json]]:
    yield from mutations(doc, root, version)
    yield from _top_mutations(doc, root, version)


def generate(flavour: Flavour, targets: tuple[str, ...] = ("card", "send", "get", "stream")) -> Iterator[Mutant]:
    """Every mutant of one flavour (the valid answers first, as 'valid')."""
    v = flavour.version
    base_card, base_send, base_get, base_stream = card(flavour), send_task(flavour), get_task(flavour), stream(flavour)
    working = send_task(flavour, "WORKING")
    for target in targets:
        yield Mutant(flavour, target, "valid", base_card, working if target == "get" else base_send, base_get,
                     base_stream)
    if "card" in targets:
        for name, doc in all_mutations(base_card, "card", v):
            yield Mutant(flavour, "card", name, doc, base_send, base_get, base_stream)
    if "send" in targets:
        yield Mutant(flavour, "send", "valid message", base_card, send_message(flavour), base_get, base_stream)
        for name, doc in all_mutations(base_send, "result", v):
            yield Mutant(flavour, "send", name, base_card, doc, base_get, base_stream)
        for name, doc in all_mutations(send_message(flavour), "result", v):
            yield Mutant(flavour, "send", name, base_card, doc, base_get, base_stream)
    if "get" in targets:
        for name, doc in all_mutations(base_get, "task", v):
            yield Mutant(flavour, "get", name, base_card, working, doc, base_stream)
    if "stream" in targets:
        for i, event in enumerate(base_stream):
            for name, doc in all_mutations(event, f"event{i}", v):
                events = [*base_stream[:i], doc, *base_stream[i + 1:]]
                yield Mutant(flavour, "stream", name, base_card, base_send, base_get, events)
