"""Offline validation: judge a saved Agent Card or a recorded transcript with the live probe's check ids.

Nothing here touches the network. A card file goes through the same parsing and `probe.checks.card`
checks as a discovered card; a transcript (Task snapshots, or a recorded SSE stream) goes through the
same dialect parsing and, for streams, the same `StreamJudge` as a live stream, so a check id means the
same thing online and offline. The result is an ordinary `ProbeResult`, rendered by `probe.report`.

Exit codes of `a2a-probe validate …`: 0 no MUST check failed (SHOULD failures are reported but do not
fail), 1 a MUST check failed, 2 the file could not be judged at all (unreadable, not a transcript,
unsupported protocol version) or the report could not be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from probe import report
from probe.checks import card as card_checks
from probe.checks.catalogue import Severity, from_problems, make_check
from probe.checks.shape import shape_problems
from probe.checks.stream import StreamJudge
from probe.reasons import Reason
from probe.results import CheckResult, ProbeResult, Status, StepName, StepResult
from probe.wire import card as cardwire
from probe.wire import jsonrpc, strictjson
from probe.wire.dialects import TERMINAL, V03, V1, Dialect, TaskState, for_version, is_regression
from probe.wire.sse import SSEError, SSEEvent, SSEParser

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
MAX_TRANSCRIPT_BYTES = 16 << 20
FORMATS = ("text", "json", "markdown", "junit")
_CHUNK = 64 * 1024  # SSE recordings are fed to the parser in network-sized chunks, as live
_BOM = b"\xef\xbb\xbf"
_SSE_STARTS = (b"data:", b"event:", b":", b"id:", b"retry:")
_WRAPPERS = ("task", "message", "statusUpdate", "artifactUpdate")


class OfflineInputError(Exception):
    """The file cannot be judged at all (exit 2): unreadable, too large, not a transcript, unknown version."""


# ---- cards


def validate_card_file(path: str | Path) -> ProbeResult:
    """Judge a saved Agent Card: size, strict JSON, then every `probe.checks.card` check.

    Raises OfflineInputError when the file cannot be read.
    """
    p = Path(path)
    t0 = time.monotonic()
    data = _read(p, cardwire.MAX_CARD_BYTES)
    result = ProbeResult(offline=True, agent=p.name, target_url=str(p), card_url=str(p))
    d, v = StepName.DISCOVER, StepName.VALIDATE
    discover = StepResult(name=d, status=Status.PASS, detail=f"read {len(data)} bytes from {p}")
    result.steps.append(discover)
    doc: dict[str, Any] | None = None
    if len(data) > cardwire.MAX_CARD_BYTES:
        size = _size(p, len(data))
        result.checks.append(make_check("card.size", Status.FAIL, f"the card is {size} bytes, over the 1 MiB limit "
                                        f"({cardwire.MAX_CARD_BYTES} bytes)", step=d))
        _fail(result, discover, Reason.CARD_INVALID, f"the card is too large: {size} bytes")
    else:
        result.checks.append(make_check("card.size", Status.PASS, f"{len(data)} bytes", step=d))
        try:
            doc = cardwire.parse(data)
        except cardwire.CardError as exc:
            result.checks.append(make_check("card.strict_json", Status.FAIL, str(exc), step=d))
            _fail(result, discover, Reason.CARD_INVALID, str(exc))
    if doc is not None:
        result.checks.append(make_check("card.strict_json", Status.PASS, step=d))
        card = cardwire.build(url=p.resolve().as_uri(), doc=doc)
        result.card_name, result.card_version, result.protocol_version = card.name, card.version, card.family
        checks, refused = card_checks.judge(card)
        result.checks += checks
        validate = StepResult(name=v, status=Status.PASS, detail=f"{card.family} card" +
                              (" (hybrid: 1.0 and 0.3 fields)" if card.hybrid else ""))
        result.steps.append(validate)
        bad = [c for c in checks if c.status is Status.FAIL and c.severity is Severity.MUST]
        if bad and refused is not False:
            _fail(result, validate, Reason.CARD_INVALID, "; ".join(f"{c.id}: {c.message}" for c in bad))
        elif bad:  # a MUST the official clients read past: the file fails its MUST, no client is kept from the card
            validate.status = Status.FAIL
            validate.detail += "; a MUST failed that the official clients read past: " + ", ".join(c.id for c in bad)
    return _finish(result, t0)


# ---- transcripts


def validate_transcript_file(path: str | Path, version: str | None = None) -> ProbeResult:
    """Judge a transcript: Task snapshots (JSON) or a recorded SSE stream, per `version` ("1.0"/"0.3").

    Without `version` the file's `protocolVersion` decides, else the shapes (TASK_STATE_* or wrapper
    keys: 1.0; lowercase states or `kind`: 0.3), else 1.0. Raises OfflineInputError when the file
    cannot be judged at all.
    """
    p = Path(path)
    t0 = time.monotonic()
    forced = _dialect(version, "version") if version is not None else None
    data = _read(p, MAX_TRANSCRIPT_BYTES)
    if len(data) > MAX_TRANSCRIPT_BYTES:
        raise OfflineInputError(f"{p}: the transcript is larger than {MAX_TRANSCRIPT_BYTES >> 20} MiB")
    data = data.removeprefix(_BOM)
    head = data.lstrip(b" \t\r\n")
    result = ProbeResult(offline=True, agent=p.name, target_url=str(p))
    if p.suffix.lower() == ".sse" or head.startswith(_SSE_STARTS):
        _judge_sse(result, data, forced)
    elif head.startswith((b"{", b"[")):
        _judge_snapshots(result, p, data, forced)
    else:
        raise OfflineInputError(f"{p}: not a transcript: expected a JSON document "
                                "({\"protocolVersion\": …, \"snapshots\": […]} or an array of Tasks) "
                                "or a recorded SSE stream (data:/event: lines, or a .sse file)")
    return _finish(result, t0)


def _judge_snapshots(result: ProbeResult, p: Path, data: bytes, forced: Dialect | None) -> None:
    try:
        doc = strictjson.loads(data)
    except strictjson.StrictJSONError as exc:
        raise OfflineInputError(f"{p}: the transcript is not valid JSON: {exc}") from None
    declared: Dialect | None = None
    if isinstance(doc, list):
        snapshots = doc
    elif isinstance(doc, dict) and isinstance(doc.get("snapshots"), list):
        snapshots = doc["snapshots"]
        if "protocolVersion" in doc:
            declared = _dialect(doc["protocolVersion"], "protocolVersion")
    else:
        raise OfflineInputError(f"{p}: expected {{\"protocolVersion\": \"1.0\"|\"0.3\", \"snapshots\": [<Task>, …]}} "
                                "or a JSON array of Tasks")
    if not snapshots:
        raise OfflineInputError(f"{p}: the transcript has no snapshots")
    d, how = _choose(forced, declared, lambda: next(filter(None, map(_sniff_task, snapshots)), None))
    step = StepResult(name=StepName.INVOKE)
    result.steps.append(step)
    result.protocol_version = d.version

    shape: list[str] = []
    dialect: list[str] = []
    ids: list[str] = []
    regressions: list[str] = []
    no_artifact: list[str] = []
    completed = 0
    task_id: str | None = None
    context_id: str | None = None
    prev: TaskState | None = None
    states: list[str] = []
    for i, snap in enumerate(snapshots):
        item = d.result_item(_as_result(d, snap))
        where = f"snapshot {i}"
        s, dl = shape_problems(item, task_expected=True)
        shape += [f"{where}: {x}" for x in s]
        dialect += [f"{where}: {x}" for x in dl]
        if item.kind != "task":
            continue
        if task_id is None:
            task_id, context_id = item.task_id, item.context_id
        else:
            if item.task_id and item.task_id != task_id:
                ids.append(f"{where} has taskId {item.task_id[:40]!r}, the transcript's task is {task_id[:40]!r}")
            if item.context_id and context_id and item.context_id != context_id:
                ids.append(f"{where} has contextId {item.context_id[:40]!r}, expected {context_id[:40]!r}")
        state = item.state
        if state is None or state is TaskState.UNKNOWN:
            continue
        if prev is not None and state != prev and is_regression(prev, state):
            why = " (a terminal task never restarts)" if prev in TERMINAL else ""
            regressions.append(f"{where}: {prev} -> {state}{why}")
        if not states or states[-1] != state:
            states.append(state.value)
        prev = state
        if state is TaskState.COMPLETED:
            completed += 1
            if not item.artifacts:
                no_artifact.append(f"{where}: task {(item.task_id or '?')[:40]!r} COMPLETED without an artifact")

    s_ = StepName.INVOKE
    n = len(snapshots)
    result.checks += [
        _verdict("invoke.result_shape", shape, f"{n} Task snapshot(s)", s_),
        _verdict("invoke.dialect", dialect, f"{d.version} shapes and enums", s_),
        _verdict("stream.no_regression", regressions, " -> ".join(states) or "no task states", s_),
        _verdict("stream.consistent_ids", ids, f"task {task_id!r}, context {context_id!r}", s_),
        (_verdict("lifecycle.completed_artifact", no_artifact, "every COMPLETED snapshot carries an artifact", s_)
         if completed else make_check("lifecycle.completed_artifact", Status.SKIP, "no snapshot is COMPLETED",
                                      step=s_)),
    ]
    step.detail = f"{n} snapshot(s), protocol {d.version} ({how})"
    first = next((c for c in result.checks if c.status is Status.FAIL and c.severity is Severity.MUST), None)
    if first is not None:
        _fail(result, step, _SNAPSHOT_REASONS[first.id], f"{first.id}: {first.message}")


_SNAPSHOT_REASONS = {"invoke.result_shape": Reason.INVOKE_BAD_RESULT, "invoke.dialect": Reason.INVOKE_BAD_RESULT,
                     "stream.no_regression": Reason.STREAM_STATE_REGRESSION,
                     "stream.consistent_ids": Reason.STREAM_PROTOCOL_VIOLATION}


def _as_result(d: Dialect, snap: Any) -> Any:
    """A snapshot as the dialect's result: 1.0 Tasks are bare (GetTask) or wrapped {"task": …} (SendMessage)."""
    if d is V1 and not (isinstance(snap, dict) and list(snap) == ["task"]):
        return {"task": snap}
    return snap


def _judge_sse(result: ProbeResult, data: bytes, forced: Dialect | None) -> None:
    parser = SSEParser()
    events: list[SSEEvent] = []
    parse_error: str | None = None
    try:
        for i in range(0, len(data), _CHUNK):
            events += parser.feed(data[i:i + _CHUNK])
    except SSEError as exc:
        parse_error = str(exc)
    decoded = [_decode(ev.data) for ev in events]
    objects = [doc for doc, _ in decoded if isinstance(doc, dict)]
    rpc = bool(objects) and ("jsonrpc" in objects[0] or "result" in objects[0])
    request_id = next((o["id"] for o in objects if "id" in o), None) if rpc else None
    d, how = _choose(forced, None, lambda: next(filter(None, (_sniff_event(o.get("result") if rpc else o)
                                                              for o in objects)), None))
    result.binding = "JSONRPC" if rpc else "HTTP+JSON"
    result.protocol_version = d.version
    step = StepResult(name=StepName.STREAM)
    result.steps.append(step)

    judge = StreamJudge(d)
    saw_artifact = False
    for ev, (doc, err) in zip(events, decoded, strict=True):
        env, problem = _envelope(doc, err, ev.data, rpc, request_id)
        judge.on_event(ev.event, env, problem)
        if env is not None and env.has_result and not saw_artifact:
            seen = d.result_item(env.result)  # a Task event (e.g. the final snapshot) may carry the artifacts
            saw_artifact = seen.kind == "task" and seen.artifacts > 0
        if judge.rpc_error:
            break  # as live: an error event ends the stream
    else:
        if parse_error is not None:
            judge.problems["stream.events_parse"].append(parse_error)
        else:
            judge.closed = True  # the recording ends: the server closed the stream
            if parser.has_partial_event:
                judge.problems["stream.events_parse"].append("the stream ended in the middle of an event")
    judge.comments, judge.line_endings = parser.comments, set(parser.line_endings)

    s_ = StepName.STREAM
    checks = [make_check(c.id, Status.SKIP, "not observable in a recorded file (no HTTP headers)", step=s_)
              if c.id == "stream.content_type" else c for c in judge.checks()]
    final = judge.final_item()
    saw_artifact = saw_artifact or bool(judge.artifacts)
    if final is None or final.kind != "task":
        artifact = make_check("lifecycle.completed_artifact", Status.SKIP,
                              "the stream carried no task state" if final is None else "the stream is a Message reply",
                              step=s_)
    elif final.state is not TaskState.COMPLETED:
        artifact = make_check("lifecycle.completed_artifact", Status.SKIP, f"the task ended {final.state}", step=s_)
    elif saw_artifact:
        artifact = make_check("lifecycle.completed_artifact", Status.PASS, "an artifact arrived", step=s_)
    else:
        artifact = make_check("lifecycle.completed_artifact", Status.FAIL,
                              f"task {(final.task_id or '?')[:40]!r} ended COMPLETED without an artifact "
                              "(no artifact update, no artifacts on the Task)", step=s_)
    result.checks += [*checks, artifact]
    endings = "/".join(sorted(judge.line_endings)) or "no"
    step.detail = (f"{judge.events} event(s), {'JSON-RPC' if rpc else 'REST'} events, protocol {d.version} ({how}), "
                   f"{endings} line endings")
    failure = judge.failure()
    if failure is not None:
        _fail(result, step, *failure)


def _decode(data: str) -> tuple[Any, str | None]:
    try:
        return strictjson.loads(data), None
    except strictjson.StrictJSONError as exc:
        return None, str(exc)


def _envelope(doc: Any, err: str | None, raw: str, rpc: bool,
              request_id: Any) -> tuple[jsonrpc.Envelope | None, str | None]:
    """One event as the judge sees it live: a JSON-RPC envelope, or (REST) the bare StreamResponse."""
    if rpc:
        try:
            return jsonrpc.parse_envelope(raw if err is not None else doc, request_id), None
        except jsonrpc.NotJsonRpc as exc:
            return None, str(exc)
    if err is not None:
        return None, err
    if not isinstance(doc, dict):
        return None, f"event data is a JSON {type(doc).__name__}, not a StreamResponse object"
    error = doc.get("error")
    if isinstance(error, dict) and not any(k in doc for k in (*_WRAPPERS, "kind")):
        code = error.get("code")
        return jsonrpc.Envelope(error=jsonrpc.RpcError(code if isinstance(code, int) else 0,
                                                       str(error.get("message", "")), error)), None
    return jsonrpc.Envelope(result=doc, has_result=True), None


# ---- version sniffing


def _dialect(value: Any, what: str) -> Dialect:
    d = for_version(value) if isinstance(value, str) else None
    if d is None or (d is not V1 and d is not V03):
        raise OfflineInputError(f"{what} {value!r} is not supported offline: use 1.0 or 0.3")
    return d


def _choose(forced: Dialect | None, declared: Dialect | None,
            sniff: Callable[[], str | None]) -> tuple[Dialect, str]:
    if forced is not None:
        return forced, "--a2a-version"
    if declared is not None:
        return declared, "protocolVersion"
    sniffed = sniff()
    if sniffed is not None:
        return (V1 if sniffed == "1.0" else V03), "sniffed from the shapes"
    return V1, "not detectable, judged as 1.0; pass --a2a-version"


def _sniff_task(task: Any) -> str | None:
    if not isinstance(task, dict):
        return None
    if list(task) == ["task"]:
        return "1.0"
    status = task.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    if isinstance(state, str) and state.startswith("TASK_STATE_"):
        return "1.0"
    if (isinstance(state, str) and state in V03.states) or "kind" in task:
        return "0.3"
    return None


def _sniff_event(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    if "kind" in result:
        return "0.3"
    if any(k in result for k in _WRAPPERS):
        return "1.0"
    return _sniff_task(result)


# ---- shared


def _read(p: Path, limit: int) -> bytes:
    try:
        with p.open("rb") as fh:
            return fh.read(limit + 1)
    except OSError as exc:
        raise OfflineInputError(f"cannot read {p}: {exc.strerror or exc}") from None


def _size(p: Path, fallback: int) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return fallback


def _verdict(check_id: str, problems: list[str], ok: str, step: StepName) -> CheckResult:
    return from_problems(check_id, problems, ok, step=step)


def _fail(result: ProbeResult, step: StepResult, reason: Reason, detail: str) -> None:
    """Fail the step, keeping what it read as context; the first failure is the result's primary reason."""
    step.status, step.reason = Status.FAIL, reason
    step.detail = ((f"{step.detail}: " if step.detail else "") + detail)[:500]
    if result.reason is None:
        result.reason = reason


def _finish(result: ProbeResult, t0: float) -> ProbeResult:
    result.duration_s = time.monotonic() - t0
    # the file's verdict (exit_code's): a MUST failed, whether or not the official clients read past it
    result.success = result.reason is None and not any(c.status is Status.FAIL and c.severity is Severity.MUST
                                                       for c in result.checks)
    return result


def exit_code(result: ProbeResult) -> int:
    """0 when no MUST check failed (SHOULD failures are reported only), else 1."""
    must = any(c.status is Status.FAIL and c.severity is Severity.MUST for c in result.checks)
    return EXIT_FAIL if must or result.reason is not None else EXIT_PASS


# ---- command line (wired into probe.cli as `a2a-probe validate …`)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `validate card FILE` and `validate transcript FILE [--a2a-version 1.0|0.3]`."""
    v = subparsers.add_parser("validate", help="validate a saved Agent Card or a recorded transcript, offline",
                              description="Judge files with the live probe's checks, without any network access. "
                                          "Exit 0: no MUST check failed; 1: a MUST check failed; "
                                          "2: the file could not be read or judged.")
    kinds = v.add_subparsers(dest="validate_kind", required=True, metavar="{card,transcript}")
    c = kinds.add_parser("card", help="validate an Agent Card JSON file")
    c.add_argument("file", help="the card, as saved from /.well-known/agent-card.json")
    t = kinds.add_parser("transcript", help="validate Task snapshots (JSON) or a recorded SSE stream")
    t.add_argument("file", help="a JSON transcript {\"protocolVersion\", \"snapshots\"}, a JSON array of Tasks, "
                                "or an SSE recording (.sse)")
    t.add_argument("--a2a-version", choices=["1.0", "0.3"],
                   help="judge as this protocol version (default: the file's protocolVersion, else sniffed)")
    for sp in (c, t):
        sp.add_argument("--format", choices=FORMATS, default="text")
        sp.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
        sp.add_argument("-v", "--verbose", action="store_true", help="list every check, not only failures")


def cmd_validate(args: argparse.Namespace) -> int:
    """Run `a2a-probe validate …`; returns the exit code and never raises for a bad file."""
    try:
        if args.validate_kind == "card":
            result = validate_card_file(args.file)
        else:
            result = validate_transcript_file(args.file, getattr(args, "a2a_version", None))
    except OfflineInputError as exc:
        print(f"a2a-probe: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a probe bug: say so plainly, no traceback
        print(f"a2a-probe: internal error (a probe bug, please report): {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    fmt = getattr(args, "format", "text")
    rendered = (report.to_text(result, verbose=getattr(args, "verbose", False)) if fmt == "text"
                else report.render(result, fmt))
    output = getattr(args, "output", None)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(rendered + "\n")
        except OSError as exc:
            print(rendered)  # the result is never lost to an output error
            print(f"a2a-probe: error: --output {output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        print(rendered)
    return exit_code(result)
