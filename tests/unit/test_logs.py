"""The probe_finished line's cheap path writes what structlog's stock pipeline writes: the same fields, values, order
and formatting, the same redaction, the same timestamp format."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import subprocess
import sys
import threading
import time
from collections.abc import MutableMapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import structlog

from probe import logs, redact
from probe.reasons import Reason
from probe.results import Category as Cat
from probe.results import (
    CheckResult,
    Exchange,
    InterfaceResult,
    ProbeResult,
    Severity,
    Status,
    StepName,
    StepResult,
)

SECRET = "sk-live-log-path-0123456789"
_STAMP = re.compile(r'"timestamp": "[^"]*"')


def _stock_redact(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The redaction processor as it was before the cheap path (every value through `redact.deep`)."""
    for key in list(event):
        if redact.is_secret_header(key) and key not in ("event",):
            event[key] = redact.REDACTED
        else:
            event[key] = redact.deep(event[key])
    return event


def _results() -> list[ProbeResult]:
    ping = StepResult(name=StepName.PING, status=Status.PASS, duration_s=0.0012345, http_status=200,
                      a2a_method="GetTask", detail="TaskNotFound", exchanges=[Exchange(method="POST", url="http://a/rpc")])
    ok = ProbeResult(agent="a", target_url="http://127.0.0.1:9/", card_url="http://u:p@127.0.0.1:9/card?k=v",
                     interface_url="http://127.0.0.1:9/rpc", binding="JSONRPC", protocol_version="1.0",
                     success=True, duration_s=0.0123456789, steps=[
                         StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=0.002), ping])
    bad_step = StepResult(name=StepName.INVOKE, status=Status.FAIL, http_status=401, a2a_method="SendMessage",
                          detail=f"answered 401: Authorization: Bearer {SECRET} \u00e9\u2603")
    check = CheckResult(id="invoke.answered", category=Cat.LIFECYCLE, severity=Severity.MUST, status=Status.FAIL,
                        message=f"echoed {SECRET}", reason=Reason.INVOKE_AUTH)
    bad = ProbeResult(agent="b", target_url="http://127.0.0.1:9/", success=False, reason=Reason.INVOKE_AUTH,
                      duration_s=1.5, steps=[bad_step], checks=[check], interfaces=[
                          InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0",
                                          success=True),
                          InterfaceResult(binding="grpc", protocol_binding="GRPC", protocol_version="1.0",
                                          reason=Reason.INVOKE_AUTH, detail=f"token {SECRET}")])
    overloaded = ProbeResult(agent="c", target_url="http://127.0.0.1:9/", reason=Reason.PROBE_ERROR,
                             problem="no result within 5s + 1s grace (a probe bug)")
    return [ok, bad, overloaded]


def _ours(level: str = "info") -> list[str]:
    out = io.StringIO()
    logs.configure(level, "json", stream=out)
    for i, r in enumerate(_results()):
        logs.log_probe("ping", r, f"id-{i}")
    return out.getvalue().splitlines()


def _stock(level: str = "info") -> list[str]:
    """structlog's own TimeStamper, JSONRenderer and a logger per event, as logs.configure had them."""
    out = io.StringIO()
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True), structlog.processors.format_exc_info,
                    _stock_redact, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(out), cache_logger_on_first_use=False)
    for i, r in enumerate(_results()):
        log = structlog.get_logger("a2a_probe.probe")
        (log.info if r.success else log.warning)("probe_finished", **logs.probe_fields("ping", r, f"id-{i}"))
    return out.getvalue().splitlines()


@pytest.fixture(autouse=True)
def _secret_and_reset() -> Any:
    redact.register(SECRET)
    yield
    logs.configure("info", "json")


@pytest.mark.parametrize("level", ["info", "warning"])
def test_probe_lines_are_the_stock_pipelines_byte_for_byte(level: str) -> None:
    ours, stock = _ours(level), _stock(level)
    assert len(ours) == len(stock) == (3 if level == "info" else 2)
    assert [_STAMP.sub("T", line) for line in ours] == [_STAMP.sub("T", line) for line in stock]
    for line in ours:
        assert SECRET not in line and "u:p@" not in line
        event = json.loads(line)
        assert list(event)[-3:] == ["event", "level", "timestamp"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", event["timestamp"])
    first = json.loads(ours[0])
    if level == "info":
        assert first["duration_seconds"] == 0.012346 and first["verdict"] == "pass" and first["level"] == "info"
    else:  # passing probes are info: filtered out
        assert first["verdict"] == "fail" and first["level"] == "warning"


def test_reconfiguring_moves_the_probe_lines_to_the_new_stream() -> None:
    first, second = io.StringIO(), io.StringIO()
    logs.configure("info", "json", stream=first)
    logs.configure("info", "json", stream=second)
    logs.log_probe("ping", _results()[0], "id")
    assert not first.getvalue() and '"probe_finished"' in second.getvalue()
    third = io.StringIO()  # configured elsewhere (a test's reset, an embedding program): the logger follows
    structlog.reset_defaults()
    structlog.configure(processors=[structlog.processors.JSONRenderer()],
                        logger_factory=structlog.PrintLoggerFactory(third))
    logs.log_probe("ping", _results()[0], "id")
    assert json.loads(third.getvalue())["event"] == "probe_finished" and second.getvalue().count("\n") == 1


@pytest.mark.parametrize("ns", [0, 1_764_604_800_000_000_000, 1_764_604_800_000_001_999, 1_764_604_859_999_999_999,
                                1_764_604_860_123_456_789])
def test_timestamp_is_isoformat_of_the_same_instant(ns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: ns)
    stamp = logs._Stamp()
    got = stamp(None, "info", {})["timestamp"]
    instant = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ns // 1000)
    assert got == instant.isoformat().replace("+00:00", "Z")
    assert stamp(None, "info", {})["timestamp"] == got  # the cached second gives the same text


def test_redaction_processor_matches_redact_deep_on_every_kind_of_value() -> None:
    class Obj:
        def __repr__(self) -> str:
            return "Obj()"

    event: dict[str, Any] = {
        "event": "x", "api_key": "plain", "x-auth-token": 5, "n": 1, "f": 0.5, "b": True, "none": None,
        "s": f"Bearer {SECRET}", "enum": Reason.INVOKE_AUTH,
        "nested": {"token": "t", "ok": [SECRET, 2, ("a", SECRET)]},
        "tuple": (SECRET,), "obj": Obj(), "url": "https://user:pw@host/x",
        "steps": {"discover": 0.1, "ping": "pass", "api_key": 5, "secret": "x", Reason.INVOKE_AUTH: SECRET, "n": None,
                  "d": {"token": "y"}, "l": [SECRET], "e": Status.PASS, 7: SECRET},
    }
    ours = logs.redact_processor(None, "info", dict(event))
    assert ours == _stock_redact(None, "info", dict(event))
    assert ours["api_key"] == ours["x-auth-token"] == redact.REDACTED
    assert SECRET not in ours["s"] and SECRET not in str(ours["nested"]) and SECRET not in str(ours["tuple"])
    assert ours["nested"]["token"] == redact.REDACTED and ours["obj"] is event["obj"]  # not a text: left as is
    assert ours["steps"]["secret"] == redact.REDACTED and ours["steps"]["api_key"] == 5 and SECRET not in str(ours)


def test_json_encoder_built_once_writes_what_json_dumps_writes() -> None:
    dumps = logs._Dumps()
    renderer = structlog.processors.JSONRenderer(serializer=dumps)
    stock = structlog.processors.JSONRenderer()
    for event in ({"a": 1.0, "b": [1, None, True], "c": "\u00e9\u2603\n\"", "d": {"x": 1e-07}},
                  {"obj": object(), "inf": float("inf")}):
        assert renderer(None, "info", dict(event)) == stock(None, "info", dict(event))


# ---- batched writes (the daemon's Sink)


class _Stream:
    """A stream that records each write (and each flush) as the daemon's stderr pipe would receive it."""

    def __init__(self) -> None:
        self.writes: list[str] = []
        self.flushes = 0

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)

    def flush(self) -> None:
        self.flushes += 1

    def text(self) -> str:
        return "".join(self.writes)


def _lines(n: int, start: int = 0) -> list[str]:
    return [f'{{"event": "e{i}"}}\n' for i in range(start, start + n)]


def test_unbatched_sink_writes_and_flushes_every_line() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    for line in _lines(3):
        sink.write(line)
    assert out.writes == _lines(3) and out.flushes == 3


async def test_batched_lines_wait_for_the_timer_then_go_in_one_write_in_order() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    sink.batch(asyncio.get_running_loop())
    for line in _lines(5):
        sink.write(line)
    assert out.writes == []
    await asyncio.sleep(logs.BATCH_SECONDS * 1.5)
    assert out.writes == ["".join(_lines(5))] and out.flushes == 1
    sink.write(_lines(1, 5)[0])  # the next line arms a new timer
    await asyncio.sleep(logs.BATCH_SECONDS * 1.5)
    assert out.text() == "".join(_lines(6)) and len(out.writes) == 2
    sink.unbatch()


async def test_batch_is_written_when_it_reaches_its_size() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    sink.batch(asyncio.get_running_loop())
    line = "x" * 999 + "\n"
    per_batch = -(-logs.BATCH_BYTES // len(line))  # the line that reaches the size writes the batch
    for _ in range(per_batch - 1):
        sink.write(line)
    assert out.writes == []
    sink.write(line)
    assert out.writes == [line * per_batch]
    sink.unbatch()
    assert out.writes == [line * per_batch]  # nothing was left


async def test_error_lines_and_other_threads_write_through_after_what_is_kept() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    sink.batch(asyncio.get_running_loop())
    a, b, c, d = _lines(4)
    sink.write(a)
    sink.write(b, urgent=True)
    assert out.writes == [a + b]
    sink.write(c)
    thread = threading.Thread(target=sink.write, args=(d,))
    thread.start()
    thread.join()
    assert out.writes == [a + b, c + d]
    sink.unbatch()


async def test_unbatch_writes_what_is_kept_and_then_writes_through() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    sink.batch(asyncio.get_running_loop())
    a, b = _lines(2)
    sink.write(a)
    sink.unbatch()
    assert out.writes == [a]
    sink.write(b)
    assert out.writes == [a, b]
    await asyncio.sleep(logs.BATCH_SECONDS * 1.5)  # the cancelled timer writes nothing twice
    assert out.writes == [a, b]


def test_a_closed_loop_without_unbatch_falls_back_to_writing_through() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    loop = asyncio.new_event_loop()
    sink.batch(loop)
    loop.close()
    a, b = _lines(2)
    sink.write(a)
    sink.write(b)
    assert out.text() == a + b


async def test_configured_logging_batches_structlog_and_stdlib_lines_in_order_byte_for_byte() -> None:
    plain, batched = io.StringIO(), _Stream()
    rows = _results()
    for stream in (plain, batched):
        logs.configure("info", "json", stream=stream)
        if stream is batched:
            logs.batch()
        for i, r in enumerate(rows):
            logs.log_probe("ping", r, f"id-{i}")
            logging.getLogger("aiohttp.client").warning("pool %s", i)
        if stream is batched:
            assert batched.writes == []
            logs.unbatch()
    assert len(batched.writes) == 1
    assert [_STAMP.sub("T", x) for x in batched.text().splitlines()] == [
        _STAMP.sub("T", x) for x in plain.getvalue().splitlines()]
    assert len(plain.getvalue().splitlines()) == 2 * len(rows)


async def test_reconfiguring_while_batching_keeps_batching_and_loses_nothing() -> None:
    first, second = _Stream(), _Stream()
    logs.configure("info", "json", stream=first)
    logs.batch()
    logs.log_probe("ping", _results()[0], "one")
    logs.configure("info", "json", stream=second)
    assert '"one"' in first.text()  # kept lines went to their own stream
    logs.log_probe("ping", _results()[0], "two")
    assert second.writes == []  # still batching
    logs.unbatch()
    assert '"two"' in second.text()


def test_kept_lines_are_written_at_exit_and_on_sigterm(tmp_path: Any) -> None:
    """A process that batches and stops on SIGTERM through the daemon's path (serve_started's finally), or just
    exits, writes every line it logged."""
    script = tmp_path / "batching.py"
    script.write_text(
        "import asyncio, os, signal, sys\n"
        "from probe import logs\n"
        "import structlog\n"
        "logs.configure('info', 'json')\n"
        "log = structlog.get_logger('t')\n"
        "async def main(mode):\n"
        "    logs.batch()\n"
        "    for i in range(50):\n"
        "        log.info('line', i=i)\n"
        "    if mode == 'sigterm':\n"
        "        stop = asyncio.Event()\n"
        "        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        try:\n"
        "            await stop.wait()\n"
        "        finally:\n"
        "            log.info('stopped')\n"
        "            logs.unbatch()\n"
        "    else:\n"
        "        log.info('stopped')\n"
        "        sys.exit(0)  # no unbatch: the exit hook writes what is kept\n"
        "asyncio.run(main(sys.argv[1]))\n")
    for mode in ("sigterm", "exit"):
        done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        events = [json.loads(line)["event"] for line in done.stderr.splitlines()]
        assert events == ["line"] * 50 + ["stopped"], mode


async def test_the_timers_writes_are_counted_once_for_the_bookkeeping() -> None:
    logs.configure("info", "json", stream=_Stream())
    logs.batch()
    assert logs.take_timer_cpu() == 0.0
    for i in range(20):  # well under the batch size: the timer writes them
        logs.log_probe("ping", _results()[0], f"id-{i}")
    await asyncio.sleep(logs.BATCH_SECONDS * 1.5)
    assert logs.take_timer_cpu() > 0.0 and logs.take_timer_cpu() == 0.0
    logs.unbatch()


def test_the_inline_probe_event_keeps_structlogs_contextvars_and_level_filter() -> None:
    out = io.StringIO()
    logs.configure("info", "json", stream=out)
    structlog.contextvars.bind_contextvars(request_id="r-1")
    try:
        logs.log_probe("ping", _results()[0], "id-0")
    finally:
        structlog.contextvars.clear_contextvars()
    event = json.loads(out.getvalue())
    assert event["request_id"] == "r-1" and list(event)[-4:] == ["event", "request_id", "level", "timestamp"]
    quiet = io.StringIO()
    logs.configure("error", "json", stream=quiet)
    for r in _results()[:2]:  # a pass (info) and a fail (warning): both below error
        logs.log_probe("ping", r, "id")
    assert quiet.getvalue() == ""


def _varied() -> list[ProbeResult]:
    """Results whose every field takes an unusual value: the directly written line must still be the stock one."""
    odd = "q\"uo\\te \u00e9\u2603 \x00\x1f\n\t \ud800 </script> Authorization: Basic dXNlcjpwYXNz"
    steps = [StepResult(name=StepName.DISCOVER, status=Status.PASS, duration_s=1e-07, http_status=200),
             StepResult(name=StepName.DISCOVER, status=Status.FAIL, duration_s=12345678.123456789, detail=odd),
             StepResult(name=StepName.INVOKE, status=Status.SKIP, duration_s=0.0, a2a_method=odd, http_status=None)]
    checks = [CheckResult(id=f"c.{i}{odd if i == 3 else ''}", category=Cat.LIFECYCLE, severity=Severity.MUST,
                          status=Status.FAIL if i % 2 else Status.PASS) for i in range(50)]
    out = []
    for duration in (0.0, 5e-324, 1e300, float("nan"), float("inf"), -0.0):
        out.append(ProbeResult(
            agent=f"agent {odd}", target_url="http://x/", card_url=f"http://u:{SECRET}@h/c?token={SECRET}&a=1",
            interface_url=f"http://h/{odd}", binding=odd, protocol_version="0.3", success=duration == 0.0,
            reason=None if duration == 0.0 else Reason.INVOKE_AUTH, duration_s=duration, steps=steps,
            checks=checks, problem=None if duration else f"problem {SECRET} {odd}", interfaces=[
                InterfaceResult(binding="jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0",
                                success=False, detail=odd, reason=Reason.INVOKE_AUTH),
                InterfaceResult(binding="grpc", protocol_binding="GRPC", protocol_version="0.3", success=True)]
            if duration else []))
    out.append(ProbeResult(agent="", target_url="", success=True, duration_s=3))
    return out


@pytest.mark.parametrize("bound", [False, True])
def test_the_directly_written_probe_line_is_the_stock_pipelines_on_unusual_values(
        bound: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _varied()
    direct = []
    line = logs._probe_line
    monkeypatch.setattr(logs, "_probe_line", lambda *a: direct.append(1) or line(*a))
    out = io.StringIO()
    logs.configure("info", "json", stream=out)
    if bound:  # context variables bound: the processors' way, which must give the same
        structlog.contextvars.bind_contextvars(request_id="r-1")
    try:
        for i, r in enumerate(results):
            logs.log_probe(f"mod {SECRET}", r, f"id-{i}")
        ours = out.getvalue().splitlines()
        stock_out = io.StringIO()
        structlog.configure(
            processors=[structlog.contextvars.merge_contextvars, structlog.processors.add_log_level,
                        structlog.processors.TimeStamper(fmt="iso", utc=True), structlog.processors.format_exc_info,
                        _stock_redact, structlog.processors.JSONRenderer()],
            wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
            logger_factory=structlog.PrintLoggerFactory(stock_out), cache_logger_on_first_use=False)
        for i, r in enumerate(results):
            log = structlog.get_logger("a2a_probe.probe")
            (log.info if r.success else log.warning)("probe_finished",
                                                     **logs.probe_fields(f"mod {SECRET}", r, f"id-{i}"))
    finally:
        structlog.contextvars.clear_contextvars()
    stock = stock_out.getvalue().splitlines()
    assert len(ours) == len(stock) == len(results)
    assert [_STAMP.sub("T", line) for line in ours] == [_STAMP.sub("T", line) for line in stock]
    assert all(SECRET not in line for line in ours)
    assert ("request_id" in ours[0]) is bound
    assert len(direct) == (0 if bound else len(results))  # written directly unless context variables are bound


def test_probe_ids_are_random_uuid4_texts() -> None:
    import uuid

    ids = [logs.new_probe_id() for _ in range(1000)]  # past one 4 KiB read of random bytes
    assert len(set(ids)) == len(ids)
    for text in ids:
        u = uuid.UUID(text)
        assert str(u) == text and u.version == 4 and u.variant == uuid.RFC_4122
    bits = {i: {int(t.replace("-", ""), 16) >> i & 1 for t in ids} for i in range(128)}
    fixed = {i for i, seen in bits.items() if len(seen) == 1}
    assert fixed == {62, 63, 76, 77, 78, 79}  # only the variant and version bits never change


async def test_batched_probe_lines_are_made_in_the_batch_with_what_was_true_when_logged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While batching, a probe line's text is made when the batch is written (`Sink.write_later`), byte for byte
    the line written at once: its timestamp, level and context variables are taken when it is logged."""
    rows = _results()
    plain, batched = io.StringIO(), _Stream()
    issued: list[str] = []  # every timestamp handed out, in order

    def stamp(_self: Any) -> str:
        issued.append(f"2026-12-02T01:00:{len(issued):02d}.000001Z")
        return issued[-1]

    logged = 0
    for stream in (plain, batched):
        logs.configure("info", "json", stream=stream)
        monkeypatch.setattr(logs._Stamp, "text", stamp)
        if stream is batched:
            logs.batch()
        for i, r in enumerate(rows):
            logs.log_probe("ping", r, f"id-{i}")
        if stream is batched:
            kept = logs._sink[0]._lines
            assert len(kept) == len(rows) and all(entry.__class__ is tuple for entry in kept)  # not made yet
            logged = len(issued)
            structlog.contextvars.bind_contextvars(request_id="r-1")  # bound after: not in the kept lines
            try:
                logs.unbatch()
            finally:
                structlog.contextvars.clear_contextvars()
    made = batched.text().splitlines()
    assert len(made) == len(rows)
    # each line with the stamp taken when it was logged (before the batch was written), in order
    times = [json.loads(x)["timestamp"] for x in made]
    assert times == sorted(times) and set(times) <= set(issued[:logged])
    assert [_STAMP.sub("T", x) for x in made] == [_STAMP.sub("T", x) for x in plain.getvalue().splitlines()]
    assert all("request_id" not in x for x in made) and all(SECRET not in x for x in made)
    # a line held back by the level filter is not kept at all
    logs.configure("warning", "json", stream=batched)
    logs.batch()
    logs.log_probe("ping", rows[0], "id-x")  # a pass: info
    assert logs._sink[0]._lines == []
    logs.unbatch()


async def test_a_kept_line_that_fails_to_render_loses_no_other_line() -> None:
    out = _Stream()
    sink = logs.Sink(out)
    sink.batch(asyncio.get_running_loop())
    a, b = _lines(2)

    def broken() -> str:
        raise ValueError("a bug")

    sink.write(a)
    assert sink.write_later(broken, ())
    assert sink.write_later(lambda x: x, (b,))
    with pytest.raises(ValueError, match="a bug"):
        sink.flush()
    assert out.text() == a + b
    sink.unbatch()
    assert not logs.Sink(out).write_later(lambda: "", ())  # not batching: the caller writes the line itself
