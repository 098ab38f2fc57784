"""Structured logs: JSON by default (console on a TTY), one `probe_finished` event per run.

A redaction processor runs last before rendering, so a credential that reached an event dict by
mistake is still masked in the output.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from probe import redact
from probe.results import ProbeResult, Status


def register_secret(value: str) -> None:
    """Values that must never appear in any output (resolved credentials); see probe.redact."""
    redact.register(value)


def _scrub(value: Any) -> Any:
    return redact.deep(value)


def redact_processor(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in list(event):
        if redact.is_secret_header(key) and key not in ("event",):
            event[key] = redact.REDACTED
        else:
            event[key] = _scrub(event[key])
    return event


def _one_line_exc(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Replace exc_info by one `error` field: where a person reads the output, a traceback only hides the cause."""
    exc = event.pop("exc_info", None)
    if exc:
        info = sys.exc_info() if exc is True else (exc if isinstance(exc, tuple) else (type(exc), exc, None))
        if info[1] is not None:
            event["error"] = f"{type(info[1]).__name__}: {info[1]}"
    return event


def configure(level: str = "info", fmt: str = "auto", stream: Any = None, *, tracebacks: bool = True) -> None:
    out = stream or sys.stderr
    exc_processor: Any = structlog.processors.format_exc_info if tracebacks else _one_line_exc
    console = fmt == "console" or (fmt == "auto" and hasattr(out, "isatty") and out.isatty())
    renderer: Any = structlog.dev.ConsoleRenderer(colors=False) if console else structlog.processors.JSONRenderer()
    # stdlib loggers (aiohttp, apscheduler) render through the same pipeline
    handler = logging.StreamHandler(out)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, redact_processor, renderer],
        foreign_pre_chain=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                           exc_processor]))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            exc_processor,
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )


def probe_fields(module: str, r: ProbeResult, probe_id: str) -> dict[str, Any]:
    """The fields of one probe_finished event (agentgateway's a2a.* names where they exist)."""
    invoke = next((s for s in reversed(r.steps) if s.a2a_method), None)
    failed = [c.id for c in r.checks if c.status is Status.FAIL]
    return {
        "agent": r.agent, "module": module, "probe_id": probe_id,
        "verdict": "pass" if r.success else "fail", "reason": r.reason.value if r.reason else None,
        "duration_seconds": round(r.duration_s, 6),
        "step_durations": {s.name.value: round(s.duration_s, 6) for s in r.steps},
        "step_status": {s.name.value: s.status.value for s in r.steps},
        "card_url": redact.url(r.card_url) if r.card_url else None,
        "interface_url": redact.url(r.interface_url) if r.interface_url else None,
        "binding": r.binding, "protocol_version": r.protocol_version,
        "a2a.method": invoke.a2a_method if invoke else None,
        "http_status": invoke.http_status if invoke else None,
        "detail": r.problem or next((s.detail for s in r.steps if s.status is Status.FAIL), None),
        "failed_checks": failed[:20],
    }


def log_probe(module: str, r: ProbeResult, probe_id: str) -> None:
    log = structlog.get_logger("a2a_probe.probe")
    fields = probe_fields(module, r, probe_id)
    if r.success:
        log.info("probe_finished", **fields)
    else:
        log.warning("probe_finished", **fields)
