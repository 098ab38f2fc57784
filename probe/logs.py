"""Structured logs: JSON by default (console on a TTY), one `probe_finished` event per run.

A redaction processor runs last before rendering, so a credential that reached an event dict by
mistake is still masked in the output.

JSON logs carry every probe with every field. The console (a person at a terminal) gets one short line per
event, and for probes by default only the state changes (first result, pass -> fail, fail -> pass) and the
probe's own errors; `--log-level debug` shows every probe.

A probe's event is the daemon's one log line per run, so its path is kept cheap (bench/bench_record.py): one
bound logger per configuration instead of one per event, a timestamp that formats the date and time once a
second, a redaction pass that leaves numbers alone, and one JSON encoder. The lines are the same, byte for byte,
as structlog's own TimeStamper, JSONRenderer and per-event logger write (tests/unit/test_logs.py).

Every line (structlog's events and the stdlib loggers') goes through one `Sink`. It writes each line through and
flushes it, except while the daemon runs (`batch`): then the event loop's lines are kept in order and written in
one call when they reach `BATCH_BYTES`, `BATCH_SECONDS` after the first of them, when an `error` line comes, when
another thread logs, and when the daemon stops (`unbatch`, also at interpreter exit). A flushed write a line was a
third of recording's CPU in the daemon (docs/performance.md); a crash can lose at most the last `BATCH_SECONDS`.
While batching, a probe line's values and text are made when its batch is written (`Sink.write_later`), from what
decides the line taken when it was logged (level, context variables, timestamp).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, MutableMapping
from functools import lru_cache
from typing import Any

import structlog

from probe import redact
from probe.reasons import Reason
from probe.results import ProbeResult, Status


def register_secret(value: str) -> None:
    """Values that must never appear in any output (resolved credentials); see probe.redact."""
    redact.register(value)


def _scrub(value: Any) -> Any:
    return redact.deep(value)


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    """A field whose name says it holds a credential (the fields are code's names: a small, fixed set)."""
    return redact.is_secret_header(key) and key != "event"


_secret_name = lru_cache(maxsize=4096)(redact.is_secret_header)  # a nested dict's keys (step names, interfaces)
_PLAIN = frozenset({int, float, bool, type(None)})  # nothing to scrub in these: `redact.deep` returns them as is


def _deep(value: Any) -> Any:
    """`redact.deep`, with a dict of plain values (step durations and statuses) walked without a call per value."""
    if value.__class__ is not dict:
        return _scrub(value)
    return {k: (redact.REDACTED if isinstance(k, str) and _secret_name(k) and isinstance(v, str)
                else v if v.__class__ in _PLAIN else redact.text(v) if v.__class__ is str else _scrub(v))
            for k, v in value.items()}


def redact_processor(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key, value in event.items():  # values are replaced in place: the keys do not change
        if _secret_key(key):
            event[key] = redact.REDACTED
        elif value.__class__ is str:
            event[key] = redact.text(value)
        elif value.__class__ not in _PLAIN:
            event[key] = _deep(value)
    return event


class _Stamp:
    """structlog's `TimeStamper(fmt="iso", utc=True)` text (`datetime.now(UTC).isoformat()`, `+00:00` as `Z`),
    with the date and time formatted once a second."""

    __slots__ = ("head", "second")

    def __init__(self) -> None:
        self.second, self.head = -1, ""

    def __call__(self, _logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        event["timestamp"] = self.text()
        return event

    def text(self) -> str:
        second, ns = divmod(time.time_ns(), 1_000_000_000)
        if second != self.second:
            self.second, self.head = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        us = ns // 1000
        return f"{self.head}.{us:06d}Z" if us else f"{self.head}Z"  # isoformat drops .000000


class _Dumps:
    """`json.dumps(obj, **kw)` with the encoder built once (json.dumps builds one per call when given `default`)."""

    __slots__ = ("encoder",)

    def __init__(self) -> None:
        self.encoder: json.JSONEncoder | None = None

    def __call__(self, obj: Any, **kw: Any) -> str:
        if self.encoder is None:
            self.encoder = json.JSONEncoder(**kw)  # JSONRenderer passes the same `default` on every call
        return self.encoder.encode(obj)


def _one_line_exc(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Replace exc_info by one `error` field: where a person reads the output, a traceback only hides the cause."""
    exc = event.pop("exc_info", None)
    if exc:
        info = sys.exc_info() if exc is True else (exc if isinstance(exc, tuple) else (type(exc), exc, None))
        if info[1] is not None:
            event["error"] = f"{type(info[1]).__name__}: {info[1]}"
    return event


BATCH_BYTES = 64 * 1024  # a pipe's buffer: one write never has to wait for the reader to make room twice
BATCH_SECONDS = 0.1  # the most a line waits (and what a crash can lose)
DEFERRED_BYTES = 1024  # what a kept line to render counts towards BATCH_BYTES (a ping's probe line: ~0.9 KB)


class Sink:
    """The one stream every log line goes to, written through line by line or, while batching, in batches."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._lines: list[str | tuple[Callable[..., str], tuple[Any, ...]]] = []  # lines, or lines to render
        self._size = 0
        self._lock = threading.Lock()  # the loop thread appends, any thread may drain
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0  # the batching loop's thread
        self._timer: asyncio.TimerHandle | None = None
        self.timer_cpu = 0.0  # thread CPU of the writes the timer made (see `take_timer_cpu`)

    def write(self, line: str, urgent: bool = False) -> None:
        """Write one line (with its newline). `urgent` (an error) is written at once, after what is kept."""
        with self._lock:
            if self._loop is None or urgent or threading.get_ident() != self._thread:
                self._drain_locked(line)
                return
            self._keep(line, len(line))

    def write_later(self, render: Callable[..., str], args: tuple[Any, ...]) -> bool:
        """Keep a line to be rendered when the batch is written (`render(*args)`, with its newline), in its place
        among the kept lines: the probe line's text is made in the batch, one after another, instead of between two
        probes (recording's pieces cost about twice as much run cold, between probes, as run one after another).
        False when the sink is not batching on this thread: the caller writes the line itself."""
        with self._lock:
            if self._loop is None or threading.get_ident() != self._thread:
                return False
            self._keep((render, args), DEFERRED_BYTES)
            return True

    def _keep(self, line: str | tuple[Callable[..., str], tuple[Any, ...]], size: int) -> None:
        """Under the lock, on the batching thread: keep a line, and write the batch once it is full or arm its timer."""
        assert self._loop is not None
        self._lines.append(line)
        self._size += size
        if self._size >= BATCH_BYTES:
            self._drain_locked("")
        elif self._timer is None:
            try:
                self._timer = self._loop.call_later(BATCH_SECONDS, self._on_timer)
            except RuntimeError:  # the loop closed without `unbatch`: write through from now on
                self._loop = None
                self._drain_locked("")

    def flush(self) -> None:
        with self._lock:
            self._drain_locked("")

    def _on_timer(self) -> None:
        t0 = time.thread_time()
        self.flush()
        self.timer_cpu += time.thread_time() - t0

    def _drain_locked(self, line: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        failed: Exception | None = None
        if self._lines:
            kept = self._lines
            self._lines = []
            self._size = 0
            texts = []
            for entry in kept:
                if isinstance(entry, str):
                    texts.append(entry)
                    continue
                render, args = entry  # a line to render (`write_later`)
                try:
                    texts.append(render(*args))
                except Exception as exc:  # the batch's other lines are still written, then it raises
                    failed = failed or exc
            texts.append(line)
            line = "".join(texts)
        if line:
            self.stream.write(line)
            self.stream.flush()
        if failed is not None:
            raise failed

    def batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Keep the lines `loop`'s thread writes and write them in batches (the daemon, while it runs)."""
        with self._lock:
            self._loop, self._thread = loop, threading.get_ident()

    def unbatch(self) -> None:
        """Write what is kept and write every line through again."""
        with self._lock:
            self._loop = None
            self._drain_locked("")


class _SinkLogger:
    """structlog's PrintLogger (the same bytes: the message and a newline), writing to the sink; errors at once."""

    __slots__ = ("sink",)

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def msg(self, message: str) -> None:
        self.sink.write(message + "\n")

    def error(self, message: str) -> None:
        self.sink.write(message + "\n", urgent=True)

    log = debug = info = warn = warning = msg
    fatal = failure = err = critical = exception = error


class _SinkLoggerFactory:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def __call__(self, *_args: Any) -> _SinkLogger:
        return _SinkLogger(self.sink)


class _SinkHandler(logging.Handler):
    """logging.StreamHandler's emit, to the sink (an error record at once)."""

    def __init__(self, sink: Sink) -> None:
        super().__init__()
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.write(self.format(record) + "\n", urgent=record.levelno >= logging.ERROR)
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


_sink: list[Sink] = []  # the configured sink (one at a time)


def batch(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Batch the log lines written on `loop`'s thread (the running loop by default) until `unbatch`."""
    if _sink:
        _sink[0].batch(loop or asyncio.get_running_loop())


def take_timer_cpu() -> float:
    """Thread CPU seconds of the batched writes made since the last call (recording's own cost, written later)."""
    if not _sink or not _sink[0].timer_cpu:
        return 0.0
    spent, _sink[0].timer_cpu = _sink[0].timer_cpu, 0.0
    return spent


def unbatch() -> None:
    """Write every kept line now and write through from here on (the daemon's stop; safe to call twice)."""
    if _sink:
        _sink[0].unbatch()


atexit.register(unbatch)  # before exit: nothing kept is lost on a clean stop


_MAX_VALUE = 160  # characters of one value on a console line
_state: dict[str, Any] = {"console": False, "probe": None, "ours": None, "stamp": None}
_verdicts: dict[tuple[str, str], str] = {}  # (agent, module) -> last verdict; keys come from config


def _short(value: Any) -> str:
    text = " ".join(str(value).split())  # one line, whatever the value holds
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"


def console_line(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> str:
    """One line per event: time, level, event, then the non-empty fields (a probe: agent/module, verdict, why)."""
    ts = str(event.pop("timestamp", ""))[11:19]
    level = str(event.pop("level", "info")).upper()
    name = str(event.pop("event", ""))
    if name == "probe_finished" and "change" in event:
        e = event
        what = f"{e.pop('agent', '')}/{e.pop('module', '')} {str(e.pop('verdict', '')).upper()} ({e.pop('change')})"
        parts = [what, *(str(v) for k in ("reason",) if (v := e.pop(k, None)))]
        if status := e.pop("http_status", None):
            parts.append(f"HTTP {status}")
        parts.append(f"{e.pop('duration_ms', 0):.0f} ms")
        if detail := e.pop("detail", None):
            parts.append(f"— {_short(detail)}")
        name = " ".join(parts)
    rest = " ".join(f"{k}={_short(v)}" for k, v in event.items() if v not in (None, "", [], {}))
    return f"{ts} {level:<7} {name} {rest}".rstrip()


def configure(level: str = "info", fmt: str = "auto", stream: Any = None, *, tracebacks: bool = True) -> None:
    out = stream or sys.stderr
    sink = Sink(out)
    if _sink:  # batching carries over to the new stream; what the old one kept goes there first
        old = _sink[0]
        with old._lock:
            sink._loop, sink._thread, old._loop = old._loop, old._thread, None
            old._drain_locked("")
    _sink[:] = [sink]
    console = fmt == "console" or (fmt == "auto" and hasattr(out, "isatty") and out.isatty())
    _state["console"] = console
    _verdicts.clear()
    # a traceback is for a bug report (JSON logs); at a terminal it only hides the cause
    exc_processor: Any = structlog.processors.format_exc_info if tracebacks and not console else _one_line_exc
    renderer: Any = console_line if console else structlog.processors.JSONRenderer(serializer=_Dumps())
    stamp = _Stamp()
    _state["stamp"] = None if console else stamp  # the direct probe line's (JSON only)
    # stdlib loggers (aiohttp, apscheduler) render through the same pipeline
    handler = _SinkHandler(sink)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, redact_processor, renderer],
        foreign_pre_chain=[structlog.processors.add_log_level, stamp, exc_processor]))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            exc_processor,
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=_SinkLoggerFactory(sink),
        cache_logger_on_first_use=False,
    )
    c = structlog.get_config()  # the set-up a probe event may take inline (see `log_probe`)
    _state["ours"] = (c["processors"], c["logger_factory"], c["wrapper_class"], getattr(logging, level.upper()))


PROBE_KEYS = ("agent", "module", "probe_id", "verdict", "reason", "duration_seconds", "step_durations", "step_status",
              "card_url", "interface_url", "binding", "protocol_version", "a2a.method", "http_status", "detail",
              "failed_checks", "interfaces")


def _probe_values(module: str, r: ProbeResult, probe_id: str) -> tuple[Any, ...]:
    """The values of one probe_finished event, in `PROBE_KEYS` order (agentgateway's a2a.* names where they exist)."""
    invoke = next((s for s in reversed(r.steps) if s.a2a_method), None)
    fail = Status.FAIL
    return (
        r.agent, module, probe_id, "pass" if r.success else "fail", r.reason._value_ if r.reason else None,
        round(r.duration_s, 6),
        # `_value_`: the member's own attribute, without the `value` property's descriptor call (9 a line)
        {s.name._value_: round(s.duration_s, 6) for s in r.steps},
        {s.name._value_: s.status._value_ for s in r.steps},
        redact.url(r.card_url) if r.card_url else None,
        redact.url(r.interface_url) if r.interface_url else None,
        r.binding, r.protocol_version,
        invoke.a2a_method if invoke else None,
        invoke.http_status if invoke else None,
        r.problem or next((s.detail for s in r.steps if s.status is fail), None)
        or next((f"{i.key}: {i.detail}" for i in r.interfaces if not i.success and i.detail), None),
        [c.id for c in r.checks if c.status is fail][:20],
        # every interface the run probed (the daemon probes each one the card advertises): "pass" or its reason
        {i.key: i.reason._value_ if i.reason else "pass" for i in r.interfaces} if len(r.interfaces) > 1 else None,
    )


def probe_fields(module: str, r: ProbeResult, probe_id: str) -> dict[str, Any]:
    """The fields of one probe_finished event."""
    return dict(zip(PROBE_KEYS, _probe_values(module, r, probe_id), strict=True))


# ---- the probe_finished line written directly (logs.configure's JSON set-up)
#
# What redact_processor and the JSON renderer make of a probe's event, byte for byte (tests/unit/test_logs.py
# compares it with structlog's stock pipeline), without the event dict walked twice: each value's text by its
# place in `PROBE_KEYS`, where its type is known. A value of another type than its place expects takes the general
# way (`_any`: the processor's redaction, then the encoder), so the line is the same whatever the value.
_JSON_STR = json.encoder.encode_basestring_ascii  # the C function the encoder writes a str with (ensure_ascii)
_ENCODER = json.JSONEncoder(default=structlog.processors._json_fallback_handler)  # JSONRenderer's own `default`
_text = redact.text


def _any(value: Any) -> str:
    """One value as redact_processor, then the renderer, write it (any type)."""
    if value.__class__ is str:
        return _JSON_STR(_text(value))
    return _ENCODER.encode(value if value.__class__ in _PLAIN else _deep(value))


def _str(value: Any) -> str:
    return _JSON_STR(_text(value)) if value.__class__ is str else "null" if value is None else _any(value)


def _float(value: Any) -> str:
    if value.__class__ is float and value - value == 0.0:  # finite: the encoder writes float.__repr__
        return float.__repr__(value)
    return _any(value)


def _steps(value: dict[Any, Any], statuses: bool) -> str:
    """A {step name: duration} or {step name: status} dict, as `_deep` and the encoder make it."""
    parts = []
    for k, v in value.items():
        if k.__class__ is not str:
            return _any(value)
        if statuses:
            if v.__class__ is not str:
                return _any(value)
            text = _JSON_REDACTED if _secret_name(k) else _JSON_STR(_text(v))
        else:
            text = _float(v) if v.__class__ is float else _any(v)
        parts.append(f"{_JSON_STR(k)}: {text}")
    return "{" + ", ".join(parts) + "}"


_JSON_REDACTED = _JSON_STR(redact.REDACTED)
# the event's own keys and the step names (a nested key): their texts, written once; the direct line is only
# written while none of them names a credential (never: code's names), since redaction would replace such a value
_DIRECT_HEADS = tuple(f"{_JSON_STR(k)}: " for k in PROBE_KEYS)
_DIRECT_OK = not any(_secret_key(k) for k in (*PROBE_KEYS, "event", "level", "timestamp"))


def _probe_line(values: tuple[Any, ...], level: str, timestamp: str) -> str:
    """The rendered line of a probe_finished event with `values` (`_probe_values`), `level` and `timestamp`."""
    h = _DIRECT_HEADS
    http_status = values[13]
    failed = values[15]
    return (f"{{{h[0]}{_str(values[0])}, {h[1]}{_str(values[1])}, {h[2]}{_str(values[2])}, "
            f"{h[3]}{_str(values[3])}, {h[4]}{_str(values[4])}, {h[5]}{_float(values[5])}, "
            f"{h[6]}{_steps(values[6], False) if values[6].__class__ is dict else _any(values[6])}, "
            f"{h[7]}{_steps(values[7], True) if values[7].__class__ is dict else _any(values[7])}, "
            f"{h[8]}{_str(values[8])}, {h[9]}{_str(values[9])}, {h[10]}{_str(values[10])}, "
            f"{h[11]}{_str(values[11])}, {h[12]}{_str(values[12])}, "
            f"{h[13]}{int.__repr__(http_status) if http_status.__class__ is int else _any(http_status)}, "
            f"{h[14]}{_str(values[14])}, "
            f"{h[15]}{'[' + ', '.join([_str(c) for c in failed]) + ']' if failed.__class__ is list else _any(failed)}, "
            f"{h[16]}{_any(values[16])}, "
            f'"event": {_JSON_STR(_text("probe_finished"))}, "level": {_JSON_STR(_text(level))}, '
            f'"timestamp": {_JSON_STR(_text(timestamp))}}}')


class _ProbeIds:
    """`str(uuid.uuid4())` (16 bytes of os.urandom, the version and variant bits set as uuid.UUID sets them), with the
    random bytes read 4 KiB at a time instead of a call and a UUID object per probe; a forked child reads its own."""

    __slots__ = ("pool", "pos")

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self.pool, self.pos = b"", 0

    def __call__(self) -> str:
        pos = self.pos
        if pos + 16 > len(self.pool):
            self.pool, pos = os.urandom(4096), 0
        self.pos = pos + 16
        n = int.from_bytes(self.pool[pos:pos + 16], "big")
        n = (n & ~(0xC000 << 48)) | (0x8000 << 48)  # the variant: RFC 4122
        n = (n & ~(0xF000 << 64)) | (4 << 76)  # the version: 4 (random)
        h = f"{n:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


new_probe_id = _ProbeIds()
_OWN_ERRORS = (Reason.PROBE_ERROR, Reason.PROBE_CONFIG_ERROR)


def _probe_logger() -> Any:
    """The probe events' logger, assembled once per structlog configuration (get_logger assembles one per call).

    Whoever configures structlog (logs.configure, a test's reset), the next event gets a logger of the new set-up."""
    c = structlog.get_config()
    cached = _state["probe"]
    if (cached is None or cached[0] is not c["processors"] or cached[1] is not c["logger_factory"]
            or cached[2] is not c["wrapper_class"] or cached[3] is not c["context_class"]):
        bound = structlog.get_logger("a2a_probe.probe").bind()
        ours = _state["ours"]
        # logs.configure's own set-up (nobody configured structlog since): its processors, on the wrapped logger
        inline = (c["processors"], bound._logger, ours[3]) if ours is not None and ours[:3] == (
            c["processors"], c["logger_factory"], c["wrapper_class"]) and not bound._context else None
        cached = _state["probe"] = (c["processors"], c["logger_factory"], c["wrapper_class"], c["context_class"],
                                    bound, inline)
    return cached


_LEVEL = {"info": logging.INFO, "warning": logging.WARNING}


def _emit(cached: Any, method: str, values: tuple[Any, ...]) -> None:
    """One probe event, as the bound logger would emit it: structlog's `_process_event` inline when the set-up is
    logs.configure's (the level filter, the event name after the fields, every processor in order, the rendered
    line to the wrapped logger's method), without the bound logger's per-call copies; any other set-up through
    structlog itself. With logs.configure's JSON set-up and no context variables bound, the line is written
    directly (`_probe_line`: what the processors would render)."""
    inline = cached[5]
    if inline is None:
        getattr(cached[4], method)("probe_finished", **dict(zip(PROBE_KEYS, values, strict=True)))
        return
    processors, logger, min_level = inline
    if _LEVEL[method] < min_level:
        return
    stamp = _state["stamp"]
    if _DIRECT_OK and stamp is not None and not structlog.contextvars.merge_contextvars(logger, method, {}):
        getattr(logger, method)(_probe_line(values, method, stamp.text()))  # add_log_level: the method's name
        return
    event: Any = dict(zip(PROBE_KEYS, values, strict=True))
    event["event"] = "probe_finished"
    try:
        for proc in processors:
            event = proc(logger, method, event)
    except structlog.DropEvent:
        return
    getattr(logger, method)(event)


def _deferred_line(module: str, r: ProbeResult, probe_id: str, method: str, timestamp: str) -> str:
    """The direct probe line of `_emit`, made when the sink writes its batch (`Sink.write_later`)."""
    return _probe_line(_probe_values(module, r, probe_id), method, timestamp) + "\n"


def log_probe(module: str, r: ProbeResult, probe_id: str) -> None:
    cached = _probe_logger()
    log = cached[4]
    if not _state["console"]:
        method = "info" if r.success else "warning"
        inline = cached[5]
        if inline is not None and _DIRECT_OK:
            # the direct line (see `_emit`), its values and text made in the sink's next batch while the daemon
            # batches its log: what decides the line (level, context variables, time) is taken now
            logger, min_level = inline[1], inline[2]
            if _LEVEL[method] < min_level:
                return
            stamp = _state["stamp"]
            if (stamp is not None and logger.__class__ is _SinkLogger
                    and not structlog.contextvars.merge_contextvars(logger, method, {})
                    and logger.sink.write_later(_deferred_line, (module, r, probe_id, method, stamp.text()))):
                return
        _emit(cached, method, _probe_values(module, r, probe_id))
        return
    values = _probe_values(module, r, probe_id)
    fields = dict(zip(PROBE_KEYS, values, strict=True))
    verdict = fields["verdict"]
    before = _verdicts.get((r.agent, module))
    _verdicts[(r.agent, module)] = verdict
    short = {"agent": r.agent, "module": module, "verdict": verdict,
             "change": f"was {before}" if before and before != verdict else "first result" if not before
             else "unchanged", "reason": fields["reason"], "http_status": fields["http_status"],
             "duration_ms": r.duration_s * 1000, "detail": fields["detail"]}
    if r.reason in _OWN_ERRORS:
        log.error("probe_finished", **short)
    elif before != verdict:
        (log.info if r.success else log.warning)("probe_finished", **short)
    else:
        log.debug("probe_finished", **short)
