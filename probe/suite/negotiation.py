"""What a request declares and the agent must honour: the A2A-Version it omits (1.0 §3.6.2: read as 0.3), the
extensions it does not activate (§3.3.4), a part media type the agent does not accept (§3.1.1), and fields the
agent does not know (§5.7: ignored)."""

from __future__ import annotations

import base64
import uuid
from typing import Any

from probe.results import Status
from probe.suite.context import Skip, Suite, describe_answer, expect_error
from probe.wire import a2a_errors as E
from probe.wire.bindings import Op, ProblemKind
from probe.wire.card import extensions_header, required_extensions

PROBE_MEDIA_TYPE = "application/x-a2a-probe-unsupported"  # no agent declares it, unless it accepts every type
_PROBE_BYTES = base64.b64encode(b"a2a-probe: a part of a media type the agent does not accept").decode()
UNKNOWN_FIELD = "a2aProbeUnknownField"  # in the request params and in the message: a field no version defines
_NO_EXTENSIONS: dict[str, str | None] = {"A2A-Extensions": None, "X-A2A-Extensions": None}


def _covers(mode: Any, media_type: str) -> bool:
    """An input mode that accepts `media_type`: the same type, `*/*`, `*` or `<type>/*`."""
    if not isinstance(mode, str):
        return False
    mode = mode.split(";", 1)[0].strip().lower()
    return mode in ("*", "*/*", media_type) or (mode.endswith("/*") and media_type.startswith(mode[:-1]))


def _input_modes(doc: dict[str, Any]) -> list[Any]:
    modes = list(doc.get("defaultInputModes") or [])
    for skill in doc.get("skills") or []:
        if isinstance(skill, dict):
            modes += list(skill.get("inputModes") or [])
    return modes


def _file_part(s: Suite) -> dict[str, Any]:
    if s.v1:
        return {"raw": _PROBE_BYTES, "mediaType": PROBE_MEDIA_TYPE, "filename": "a2a-probe.bin"}
    if s.dialect.proto:
        # 0.3 over HTTP+JSON and gRPC: the 0.3 proto's FilePart, which has no name (v0.3.0 specification/grpc/
        # a2a.proto: file_with_uri | file_with_bytes, mime_type); a strict ProtoJSON parser (a2a-java 0.3.3's
        # JsonFormat.parser()) refuses an unknown `name` as InvalidParamsError before the media type is looked at
        return {"file": {"fileWithBytes": _PROBE_BYTES, "mimeType": PROBE_MEDIA_TYPE}}
    return {"kind": "file", "file": {"bytes": _PROBE_BYTES, "mimeType": PROBE_MEDIA_TYPE, "name": "a2a-probe.bin"}}


async def content_type_not_supported(s: Suite) -> None:
    modes = _input_modes(s.card.doc)
    if not modes:
        raise Skip("the card declares no input modes to hold a media type against")
    if any(_covers(m, PROBE_MEDIA_TYPE) for m in modes):
        raise Skip(f"the card's input modes accept every media type ({', '.join(map(str, modes[:4]))})")
    message = s.message("a2a-probe content type")
    message[s.dialect.message_parts] = [_file_part(s)]
    answer, _ = await s.client.send(message)
    expect_error(s, "errors.content_type_not_supported", answer, {"ContentTypeNotSupportedError"},
                 f"a part of media type {PROBE_MEDIA_TYPE}, not in the card's input modes "
                 f"({', '.join(map(str, modes[:4]))})")


async def extension_required(s: Suite) -> None:
    required = required_extensions(s.card.doc)
    if not required:
        raise Skip("the card declares no required extension")
    header = extensions_header(s.dialect.version)
    answer, _ = await s.client.send(f"a2a-probe extensions {uuid.uuid4().hex[:8]}", headers=_NO_EXTENSIONS)
    what = (f"a SendMessage without {header} (every other call of the probe activates it) although the card "
            f"requires {', '.join(required[:3])}")
    if s.v1:
        expect_error(s, "errors.extension_required", answer, {"ExtensionSupportRequiredError"}, what)
    elif answer.error is not None and (answer.status or 0) < 500:
        s.record("errors.extension_required", Status.PASS, f"{what}: {answer.error.describe()} (0.3 names no code)")
    else:
        s.record("errors.extension_required", Status.FAIL, f"{what}: accepted ({describe_answer(answer)})")


async def extensions_echoed(s: Suite) -> None:
    """An activated required extension is named in the answer's A2A-Extensions (0.3: X-A2A-Extensions) header."""
    required = required_extensions(s.card.doc)
    if not required:
        raise Skip("the card declares no required extension (only an activated one is known to be echoed)")
    header = extensions_header(s.dialect.version)
    answer, item = await s.client.send(f"a2a-probe extensions activated {uuid.uuid4().hex[:8]}")
    if item is None:
        raise Skip(f"the request activating {', '.join(required[:3])} was refused: {describe_answer(answer)}")
    echoed = {u.strip() for u in (answer.extensions or "").split(",") if u.strip()}
    missing = [u for u in required if u not in echoed]
    if missing:
        s.record("lifecycle.extensions_echoed", Status.FAIL,
                 f"the request activated {', '.join(required[:3])} ({header}) and was served, but the answer's "
                 f"{header} header {'names ' + repr(answer.extensions) if answer.extensions else 'is missing'}")
    else:
        s.record("lifecycle.extensions_echoed", Status.PASS, f"{header}: {answer.extensions}")


async def missing_version_is_0_3(s: Suite) -> None:
    if not s.v1:
        raise Skip("a 1.0 interface rule: 0.3 clients send no A2A-Version")
    tid = f"a2a-probe-missing-{uuid.uuid4()}"
    answer, item = await s.client.get(tid, headers={"A2A-Version": None})
    err, problem = answer.error, answer.problem
    what = f"{answer.method} without A2A-Version"
    if item is not None or (err is not None and err.is_(E.TASK_NOT_FOUND)):
        got = err.describe() if err is not None else "a task"
        s.record("errors.missing_version_is_0_3", Status.FAIL,
                 f"{what} was served with 1.0 semantics ({got}); without the header the request is 0.3's, whose "
                 "methods and routes differ")
    elif (answer.status or 0) >= 500:
        s.record("errors.missing_version_is_0_3", Status.FAIL, f"{what}: {describe_answer(answer)}")
    elif err is not None and err.is_(E.VERSION_NOT_SUPPORTED, E.METHOD_NOT_FOUND):
        s.record("errors.missing_version_is_0_3", Status.PASS, f"{what}, read as 0.3: {err.describe()}")
    elif problem is not None and problem.kind in (ProblemKind.VERSION, ProblemKind.ROUTE):
        s.record("errors.missing_version_is_0_3", Status.PASS, f"{what}, not a 1.0 request: {problem.detail}")
    elif err is not None:
        s.record("errors.missing_version_is_0_3", Status.PASS, f"{what}, not served as 1.0: {err.describe()}")
    else:
        s.record("errors.missing_version_is_0_3", Status.FAIL, f"{what}: {describe_answer(answer)}")


async def unknown_fields_ignored(s: Suite) -> None:
    if not s.v1:
        raise Skip("a 1.0 rule (§5.7); 0.3 says nothing about unknown request fields")
    message = s.message(f"a2a-probe unknown fields {uuid.uuid4().hex[:8]}")
    message[UNKNOWN_FIELD] = "ignore me"
    params: dict[str, Any] = {**s.client.send_params(message), UNKNOWN_FIELD: {"note": "a field no version defines"}}
    answer = await s.client.call(Op.SEND, params)
    item = s.client.item(answer)
    if item is not None:
        s.record("lifecycle.unknown_fields_ignored", Status.PASS,
                 f"{UNKNOWN_FIELD} in the params and the message ignored: a {item.kind} came back")
    else:
        s.record("lifecycle.unknown_fields_ignored", Status.FAIL,
                 f"a SendMessage carrying {UNKNOWN_FIELD} (params and message) was refused: {describe_answer(answer)}")


CHECKS = (missing_version_is_0_3, unknown_fields_ignored, content_type_not_supported, extension_required,
          extensions_echoed)
IDS = {missing_version_is_0_3: ("errors.missing_version_is_0_3",),
       unknown_fields_ignored: ("lifecycle.unknown_fields_ignored",),
       content_type_not_supported: ("errors.content_type_not_supported",),
       extension_required: ("errors.extension_required",),
       extensions_echoed: ("lifecycle.extensions_echoed",)}
