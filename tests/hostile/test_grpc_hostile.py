"""Hostile and broken gRPC agents below the A2A layer: answers that are no gRPC answer, streams cut by RST_STREAM,
GOAWAY or a closed socket, wrong listeners (HTTP/1.1, TLS for a plain URL and back), messages that do not parse.

gRPC core turns each of these into a status of its own making (UNKNOWN "No status received", INTERNAL/CANCELLED
"Stream removed", UNAVAILABLE); none is an A2A error the agent sent, so none is judged as one: the verdict names
the wire fault once (invoke_protocol_error, stream_reset, invoke_unreachable with the listener named), never
crashes and is bounded by the deadline. The agents speak HTTP/2 frames directly (tests/agents/grpc_raw.py).
"""

from __future__ import annotations

import asyncio
import gzip
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import grpc
import grpc.aio
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from aiohttp import web
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from probe import redact
from probe.engine import run_probe
from probe.reasons import Reason
from probe.report import render
from probe.results import ProbeResult, Status, StepName
from probe.suite import SuiteOptions, run_suite
from probe.target import AuthSpec, Target
from probe.wire.http import HttpClient
from tests.agents import grpc_raw as raw
from tests.agents.cards import valid_card
from tests.agents.grpc_scripted import Call, rpc_status, scripted_grpc_agent
from tests.agents.server import serve, serve_card
from tests.hostile import certs
from tests.hostile.test_secrets import TOKEN, _assert_clean
from tests.hostile.test_semantics import _held

TIMEOUT = 3.0
INVOKE, STREAM = (StepName.INVOKE,), (StepName.STREAM,)
Json = dict[str, Any]
_TASK: Json = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
               "artifacts": [{"artifactId": "a", "parts": [{"text": "ok"}]}]}


def _event(state: str, *, first: bool = False) -> raw.Msg:
    doc = ({"task": {**_TASK, "status": {"state": f"TASK_STATE_{state}"}}} if first else
           {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": f"TASK_STATE_{state}"}}})
    return raw.message(a2a_pb2.StreamResponse, doc)


_SEND = raw.message(a2a_pb2.SendMessageResponse, {"task": _TASK})
_OPEN = [raw.ok_headers(), _event("SUBMITTED", first=True), _event("WORKING"), raw.Pause(0.3)]  # then the cut
_HTML = [raw.Headers([(":status", "200"), ("content-type", "text/html")]), raw.Msg(b"<html>"),
         raw.Headers([], end=True)]


def _ld(field: int, body: bytes) -> bytes:
    """A length-delimited protobuf field (short bodies only)."""
    return bytes([field << 3 | 2, len(body)]) + body


_FULL = raw.serialized(_SEND)


def _unary(body: bytes) -> list[raw.Step]:
    return [raw.ok_headers(), raw.Msg(body), raw.trailers()]


def _bomb() -> bytes:
    """A gzip body of 6 KB that inflates to a SendMessageResponse of 6 MiB."""
    big = a2a_pb2.SendMessageResponse(task=a2a_pb2.Task(id="t1", context_id="c1"))
    big.task.metadata["x"] = "y" * (6 << 20)
    return gzip.compress(big.SerializeToString())


def _gzip(encoding: str | None, body: bytes) -> list[raw.Step]:
    head = raw.Headers([*raw.ok_headers().fields, *([("grpc-encoding", encoding)] if encoding else [])])
    return [head, raw.Msg(body, compressed=True), raw.trailers()]


_SMALL_GZIP = gzip.compress(_FULL)
def _page(status: int) -> list[raw.Step]:
    """An HTTP/2 server's or proxy's own page with this :status: no gRPC answer."""
    return [raw.Headers([(":status", str(status)), ("content-type", "text/html")]), raw.Msg(b"<html>no</html>"),
            raw.Headers([("x-page", "1")], end=True)]


_CASES: list[tuple[str, list[raw.Step], tuple[StepName, ...], Reason | None, str]] = [
    # an HTTP status gRPC core maps to a code of its own (grpc/doc/http-grpc-status-mapping.md): no gRPC answer
    *[(f"unary: a text/html page with :status {code}", _page(code), INVOKE, Reason.INVOKE_UNEXPECTED_STATUS,
       f"an HTTP {code} answer, not a gRPC one") for code in (400, 415, 500)],
    # ... or one the binding already names by what the page means
    ("unary: a text/html page with :status 401", _page(401), INVOKE, Reason.INVOKE_AUTH, "status: 401"),
    ("unary: a text/html page with :status 404", _page(404), INVOKE, Reason.INVOKE_ROUTE_NOT_FOUND, "status: 404"),
    ("unary: a text/html page with :status 429", _page(429), INVOKE, Reason.RATE_LIMITED, "HTTP 429"),
    ("unary: a text/html page with :status 503", _page(503), INVOKE, Reason.INVOKE_GATEWAY_ERROR, "status: 503"),
    # compression (the probe offers grpc-accept-encoding: identity, deflate, gzip)
    ("unary: a gzip message", _gzip("gzip", _SMALL_GZIP), INVOKE, None, ""),
    # the probe's own bound, as for a 5 MiB message (test_grpc_limits.py): not the server's quota
    ("unary: a gzip message that inflates past 4 MiB", _gzip("gzip", _bomb()), INVOKE, Reason.WORK_LIMIT_EXCEEDED,
     "a compressed gRPC message decompresses past the 4194304-byte limit"),
    ("unary: the compressed flag without grpc-encoding", _gzip(None, _SMALL_GZIP), INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "gRPC framing is broken (Compression bit set but no encoding configured"),
    ("unary: an encoding the probe did not offer (br)", _gzip("br", _SMALL_GZIP), INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "gRPC framing is broken (Error parsing 'grpc-encoding' metadata"),
    ("unary: gzip that does not inflate", _gzip("gzip", _SMALL_GZIP[:10] + bytes(20) + _SMALL_GZIP[30:]), INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "gRPC framing is broken (Decompression failed"),
    ("stream: a gzip message that inflates past 4 MiB, mid-stream", [
        raw.Headers([*raw.ok_headers().fields, ("grpc-encoding", "gzip")]), _event("SUBMITTED", first=True),
        raw.Msg(_bomb(), compressed=True), raw.trailers()], STREAM, Reason.WORK_LIMIT_EXCEEDED,
     "decompresses past the 4194304-byte limit"),
    # unknown fields and wrong wire types read as protobuf reads them (a2a-sdk's parser): unknown fields are kept
    # aside, a known field of the wrong wire type is an unknown field, so the message lacks it
    ("unary: an unknown field (999)", _unary(_FULL + b"\xb8\x3e\x01"), INVOKE, None, ""),
    ("unary: SendMessageResponse.task as a varint", _unary(b"\x08\x01"), INVOKE, Reason.INVOKE_BAD_RESULT,
     "found []"),
    ("unary: Task.status.state as a string", _unary(_ld(1, _ld(1, b"t1") + _ld(2, b"c1") + _ld(3, _ld(1, b"X")))),
     INVOKE, Reason.INVOKE_BAD_RESULT, "no status.state the protocol version defines"),
    ("unary: a string field that is no UTF-8", _unary(_ld(1, _ld(1, b"\xff\xfe") + _ld(2, b"c1"))), INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "no message that parses as a SendMessageResponse"),
    ("unary: a truncated message", _unary(_FULL[:-3]), INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
     "no message that parses as a SendMessageResponse"),
    # (id, frames, steps, reason, fragment of the step's detail)
    ("unary: trailers-only with no grpc-status", [raw.Headers(raw.ok_headers().fields, end=True)], INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "the answer ended without a grpc-status"),
    ("unary: a proxy's text/html page with :status 200", _HTML, INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
     "not a gRPC answer, such as a proxy's page"),
    ("unary: a proxy's text/html page with :status 502", [raw.Headers([(":status", "502"), ("content-type",
     "text/html")], end=True)], INVOKE, Reason.INVOKE_GATEWAY_ERROR, "a gateway in front of the agent"),
    ("unary: OK with no message", [raw.ok_headers(), raw.trailers()], INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
     "answered gRPC OK with no message that parses as a SendMessageResponse"),
    ("unary: OK with bytes that are no SendMessageResponse", [raw.ok_headers(), raw.Msg(b"\xff\xff\xff"),
     raw.trailers()], INVOKE, Reason.INVOKE_PROTOCOL_ERROR, "no message that parses as a SendMessageResponse"),
    ("unary: application/grpc+json with a JSON body", [raw.ok_headers("application/grpc+json"),
     raw.Msg(b'{"task": {"id": "t1"}}'), raw.trailers()], INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
     "no message that parses as a SendMessageResponse"),
    # gRPC core reads a protobuf body whatever application/grpc+... says, as a2a-sdk's client does: nothing to judge
    ("unary: application/grpc+json with a protobuf body", [raw.ok_headers("application/grpc+json"), _SEND,
     raw.trailers()], INVOKE, None, ""),
    ("unary: the message, then INTERNAL", [raw.ok_headers(), _SEND, raw.trailers(13, "boom")], INVOKE,
     Reason.INVOKE_A2A_ERROR, "gRPC INTERNAL error: boom"),
    ("unary: RST_STREAM INTERNAL_ERROR", [raw.ok_headers(), raw.Reset(raw.INTERNAL_ERROR)], INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "the agent's side reset the stream (RST_STREAM (Received RST_STREAM with error "
     "code 2); gRPC core reads INTERNAL, no status the agent sent)"),
    ("unary: RST_STREAM CANCEL", [raw.Reset(raw.CANCEL)], INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
     "gRPC core reads CANCELLED, no status the agent sent"),
    ("unary: RST_STREAM INADEQUATE_SECURITY (no credential refused)", [raw.Reset(raw.INADEQUATE_SECURITY)], INVOKE,
     Reason.INVOKE_PROTOCOL_ERROR, "gRPC core reads PERMISSION_DENIED, no status the agent sent"),
    # HTTP/2's own load refusal, which gRPC reads as RESOURCE_EXHAUSTED: refused, not judged
    ("unary: RST_STREAM ENHANCE_YOUR_CALM", [raw.Reset(raw.ENHANCE_YOUR_CALM)], INVOKE, Reason.RATE_LIMITED,
     "the agent not judged"),
    ("stream: RST_STREAM mid-stream", [*_OPEN, raw.Reset(raw.INTERNAL_ERROR)], STREAM, Reason.STREAM_RESET,
     "the agent's side reset the stream"),
    ("stream: RST_STREAM CANCEL mid-stream", [*_OPEN, raw.Reset(raw.CANCEL)], STREAM, Reason.STREAM_RESET,
     "after 2 event(s) (last state WORKING)"),
    ("stream: GOAWAY mid-stream", [*_OPEN, raw.GoAway()], STREAM, Reason.STREAM_RESET,
     "went away (GOAWAY) with the stream open"),
    ("stream: the connection closed mid-stream", [*_OPEN, raw.Close()], STREAM, Reason.STREAM_RESET,
     "with the stream open"),
    ("stream: RST_STREAM after the terminal event", [raw.ok_headers(), _event("SUBMITTED", first=True),
     _event("COMPLETED"), raw.Pause(0.3), raw.Reset(raw.INTERNAL_ERROR)], STREAM, Reason.INVOKE_PROTOCOL_ERROR,
     "the agent's side reset the stream"),
    ("stream: a message that is no StreamResponse", [raw.ok_headers(), _event("SUBMITTED", first=True),
     raw.Msg(b"\xff\xff\xff"), raw.trailers()], STREAM, Reason.INVOKE_PROTOCOL_ERROR,
     "a stream message that is no StreamResponse"),
    ("stream: the first message is no StreamResponse", [raw.ok_headers(), raw.Msg(b"\xff\xff\xff"), raw.trailers()],
     STREAM, Reason.INVOKE_PROTOCOL_ERROR, "a stream message that is no StreamResponse"),
    ("stream: trailers-only with no grpc-status", [raw.Headers(raw.ok_headers().fields, end=True)], STREAM,
     Reason.INVOKE_PROTOCOL_ERROR, "the answer ended without a grpc-status"),
    # one DATA frame of 16 MiB (the largest a frame header can say): past the frame size gRPC core allows (RFC
    # 9113 §4.2; it reads UNKNOWN "Stream removed (Failed parsing HTTP/2 (Frame size ... is larger than ...))")
    ("stream: a frame larger than the client allows", [raw.ok_headers(), _event("SUBMITTED", first=True),
     raw.Msg(bytes((1 << 24) - 6)), raw.trailers()], STREAM, Reason.INVOKE_PROTOCOL_ERROR,
     "the agent's HTTP/2 connection broke under the call (Stream removed (Failed parsing HTTP/2 (Frame size"),
    ("stream: WORKING again and again, never terminal", [raw.ok_headers(), _event("SUBMITTED", first=True),
     *[s for _ in range(40) for s in (_event("WORKING"), raw.Pause(0.1))], raw.trailers()], STREAM,
     Reason.STREAM_NO_TERMINAL, "last state WORKING"),
    ("stream: events after the terminal one", [raw.ok_headers(), _event("SUBMITTED", first=True),
     _event("COMPLETED"), _event("WORKING"), raw.trailers()], STREAM, Reason.STREAM_STATE_REGRESSION,
     "COMPLETED -> WORKING after the terminal state"),
]


async def _probe(client: HttpClient, origin: str, steps: tuple[StepName, ...], timeout: float = TIMEOUT) -> ProbeResult:
    return await asyncio.wait_for(run_probe(Target(name="g", url=origin, timeout=timeout, binding="GRPC"), client,
                                            steps=steps), timeout + 5)


@pytest.mark.parametrize(("frames", "steps", "reason", "fragment"), [c[1:] for c in _CASES],
                         ids=[c[0] for c in _CASES])
async def test_grpc_wire_faults_name_one_root_cause(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                    frames: list[raw.Step], steps: tuple[StepName, ...],
                                                    reason: Reason | None, fragment: str) -> None:
    async with raw.raw_grpc_agent(frames) as origin:
        t0 = time.monotonic()
        r = await _probe(client, origin, steps, timeout=1.5 if reason is Reason.STREAM_NO_TERMINAL else TIMEOUT)
        elapsed = time.monotonic() - t0
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(steps[0])
    assert step is not None and fragment in step.detail, step.detail
    assert elapsed < TIMEOUT + 1


# ---- the wrong listener on a gRPC interface


@asynccontextmanager
async def _grpc_server(tls: bool) -> AsyncIterator[int]:
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(a2a_pb2_grpc.A2AServiceServicer(), server)
    if tls:
        with tempfile.TemporaryDirectory() as d:
            pem, _, _ = certs.make(Path(d), "leaf")
            creds = grpc.ssl_server_credentials([(pem.key.read_bytes(), pem.cert.read_bytes())])
            port = server.add_secure_port("127.0.0.1:0", creds)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(0)


@asynccontextmanager
async def _http1_server() -> AsyncIterator[int]:
    async def page(_request: web.Request) -> web.Response:
        return web.Response(text="<html>hello</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{path:.*}", page)
    async with serve(app) as origin:
        yield int(origin.rsplit(":", 1)[1])


@pytest.mark.parametrize(("listener", "scheme", "reason", "fragment"), [
    ("http1", "http", Reason.INVOKE_UNREACHABLE, "speaks HTTP/1.x, not HTTP/2"),  # as tests/gateway/test_nginx.py
    ("plain", "https", Reason.INVOKE_UNREACHABLE, "does not speak TLS: the URL says https:// for a plain-text"),
    ("tls", "http", Reason.INVOKE_UNREACHABLE, "as a TLS listener does: if the port speaks TLS, the URL must say "
     "https://"),
])
async def test_the_wrong_listener_on_a_grpc_interface_is_named(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                               listener: str, scheme: str, reason: Reason,
                                                               fragment: str) -> None:
    serving = _http1_server() if listener == "http1" else _grpc_server(listener == "tls")
    async def card(_request: web.Request, port: int) -> web.Response:
        return web.json_response(valid_card((f"{scheme}://127.0.0.1:{port}", "GRPC", "1.0"), name="grpc-listener"))

    async with serving as port, serve_card(card, port) as origin:
        r = await _probe(client, origin, INVOKE)
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(StepName.INVOKE)
    assert step is not None and fragment in step.detail, step.detail


# ---- every rpc the suite calls, on an agent whose SendMessage and GetTask work and whose other rpcs answer no gRPC
# answer at all

_GOOD = {"SendMessage": [raw.ok_headers(), _SEND, raw.trailers()],
         "GetTask": [raw.ok_headers(), raw.message(a2a_pb2.Task, _TASK), raw.trailers()]}
_UNARY_RPCS = ("CancelTask", "CreateTaskPushNotificationConfig", "GetExtendedAgentCard", "ListTasks")


@pytest.mark.parametrize(("frames", "rpcs", "fragment"), [
    ([raw.Headers(raw.ok_headers().fields, end=True)], (*_UNARY_RPCS, "SubscribeToTask", "SendStreamingMessage"),
     "the answer ended without a grpc-status"),
    ([raw.ok_headers(), raw.trailers()], _UNARY_RPCS, "answered gRPC OK with no message that parses as a"),
    ([raw.ok_headers(), raw.Reset(raw.INTERNAL_ERROR)], (*_UNARY_RPCS, "SubscribeToTask", "SendStreamingMessage"),
     "the agent's side reset the stream"),
], ids=["trailers-only", "OK without a message", "RST_STREAM"])
async def test_the_suite_names_no_grpc_answer_on_every_rpc(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                           frames: list[raw.Step], rpcs: tuple[str, ...],
                                                           fragment: str) -> None:
    """CancelTask, CreateTaskPushNotificationConfig, GetExtendedAgentCard, SubscribeToTask and the stream each get
    the same broken answer: the check that called it says so (no answer: the wire fault), none crashes, and none
    reads an A2A error the agent never sent."""
    async with raw.raw_grpc_agent({**_GOOD, "*": frames}) as origin:
        r = await asyncio.wait_for(run_suite(Target(name="g", url=origin, timeout=TIMEOUT, binding="GRPC"), client,
                                             SuiteOptions(timeout=20.0)), 60)
    rep = _held(r, caplog)
    assert not [c for c in r.checks if "internal error" in c.message], rep
    for rpc in rpcs:
        assert [c for c in r.checks if f"{rpc} to 127.0.0.1" in c.message and fragment in c.message], (rpc, rep)
    for check in ("errors.cancel_unknown", "errors.not_cancelable", "errors.push_not_supported",
                  "errors.extended_card_not_declared"):
        found = r.check(check)
        assert found is not None and found.status is Status.SKIP and found.message.startswith("no answer: "), found


async def test_every_grpc_call_has_a_connection_of_its_own(client: HttpClient) -> None:
    """gRPC core's global subchannel pool shares a connection among overlapping channels to one target (the suite's
    checks overlap): each call's channel has its own pool, so each call opens its own connection (its timings are
    its own, and a connection one call's answer broke carries nothing into the next)."""
    log: list[tuple[int, str]] = []
    async with raw.raw_grpc_agent({**_GOOD, "*": [raw.ok_headers(), raw.trailers()]}, log=log) as origin:
        await run_suite(Target(name="g", url=origin, timeout=TIMEOUT, binding="GRPC"), client,
                        SuiteOptions(timeout=20.0))
    assert len(log) > 10, log
    assert len({number for number, _ in log}) == len(log), log
    assert all(rpc for _, rpc in log), log


# ---- ErrorInfo of another domain, of a reason A2A does not define, beside a detail of the agent's own type, or
# that does not parse: the error is named as a2a-sdk's gRPC client names it


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _info(reason: str = "TASK_NOT_CANCELABLE", domain: str = "a2a-protocol.org") -> any_pb2.Any:
    return _packed(error_details_pb2.ErrorInfo(reason=reason, domain=domain))


_CUSTOM = any_pb2.Any(type_url="type.googleapis.com/example.AgentOwnDetail", value=b"\x08\x01")
_BAD_REQUEST = _packed(error_details_pb2.BadRequest(field_violations=[
    error_details_pb2.BadRequest.FieldViolation(field="id", description="completed")]))
_CORRUPT_INFO = any_pb2.Any(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=b"\xff\xff\xff")


@pytest.mark.parametrize(("details", "status"), [
    ([_info()], Status.PASS),
    ([_info(domain="example.com")], Status.FAIL),  # _map_grpc_error reads the a2a-protocol.org domain only
    ([_info("TASK_NOT_CANCELLABLE")], Status.FAIL),  # a reason A2A does not define
    ([_CUSTOM, _info()], Status.PASS),  # a type the probe has no descriptor for is skipped, as a2a-sdk skips it
    ([_info(), _BAD_REQUEST], Status.PASS),
    ([_CORRUPT_INFO], Status.FAIL),  # a2a-sdk's Unpack raises DecodeError: nothing named, no probe error
], ids=["ErrorInfo", "another domain", "an undefined reason", "an unknown detail type first", "with a BadRequest",
        "an ErrorInfo that does not parse"])
async def test_an_error_info_names_an_a2a_error_only_as_a2a_sdk_reads_it(
        client: HttpClient, caplog: pytest.LogCaptureFixture, details: list[any_pb2.Any], status: Status) -> None:
    """CancelTask of a COMPLETED task answers FAILED_PRECONDITION with these google.rpc.Status details:
    errors.not_cancelable passes where a2a-sdk's gRPC client raises TaskNotCancelableError."""
    pre = grpc.StatusCode.FAILED_PRECONDITION
    blob = status_pb2.Status(code=pre.value[0], message="not cancelable", details=details).SerializeToString()
    script = {"SendMessage": Call(messages=[{"task": _TASK}]), "GetTask": Call(messages=[_TASK]),
              "CancelTask": Call(code=pre, details="not cancelable", trailers=[("grpc-status-details-bin", blob)])}
    async with scripted_grpc_agent(script, streaming=False) as origin:
        r = await run_suite(Target(name="g", url=origin, timeout=TIMEOUT, binding="GRPC"), client,
                            SuiteOptions(timeout=10.0))
    rep = _held(r, caplog)
    check = r.check("errors.not_cancelable")
    assert check is not None and check.status is status, rep
    assert "probe error" not in check.message, check


# ---- every rpc echoes the probe's Authorization: in its status message, its details trailer (as a
# google.rpc.Status, and as bytes that are none), its metadata


def _echo_everywhere(rpc: str, code: grpc.StatusCode) -> Call:
    echo = "echo {secret}"
    blob = (lambda secret: rpc_status(code, f"echo {secret}", "TASK_NOT_FOUND", auth=f"echo {secret}")) \
        if rpc != "GetExtendedAgentCard" else (lambda secret: f"not a Status {secret}".encode())
    return Call(code=code, details=echo, trailers=[("grpc-status-details-bin", blob), ("x-echo", echo)],
                initial=[("x-seen", echo)])


async def test_echoed_credentials_in_every_rpcs_error_are_masked(client: HttpClient,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """SendMessage and GetTask work; every other rpc the suite calls (CancelTask, the push-config rpcs,
    GetExtendedAgentCard, SubscribeToTask, ListTasks, the stream) fails with the Authorization echoed everywhere a
    gRPC answer has room: the report quotes the errors masked, in every format, and the logs are clean."""
    redact.register(TOKEN)
    nf = grpc.StatusCode.NOT_FOUND
    service = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"]
    script = {m.name: _echo_everywhere(m.name, nf) for m in service.methods}
    script |= {"SendMessage": Call(messages=[{"task": _TASK}]), "GetTask": Call(messages=[_TASK])}
    async with scripted_grpc_agent(script) as origin:
        async with aiohttp.ClientSession() as session, session.get(f"{origin}/.well-known/agent-card.json") as got:
            url = urlsplit((await got.json())["supportedInterfaces"][0]["url"])
        auth = AuthSpec(allowed_origins=(f"{url.scheme}://{url.netloc}",))
        r = await run_suite(Target(name="t", url=origin, timeout=TIMEOUT, binding="GRPC", auth=auth,
                                   headers={"Authorization": f"Bearer {TOKEN}"}), client, SuiteOptions(timeout=20.0))
    _held(r, caplog)
    called = {c.id for c in r.checks if "<redacted>" in c.message}
    assert {"errors.cancel_unknown", "errors.push_not_supported", "errors.extended_card_not_declared",
            "streaming.subscribe_unknown", "lifecycle.list_tasks", "stream.no_error"} <= called, called
    for fmt in ("json", "text", "markdown", "junit", "html"):
        _assert_clean(f"suite {fmt}", render(r, fmt))
    _assert_clean("logs", caplog.text)


# ---- a stream that ends with a status naming no A2A error, after its events


def _mid(code: grpc.StatusCode, details: str) -> Call:
    su = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}
    return Call(messages=[{"task": {**_TASK, "status": {"state": "TASK_STATE_SUBMITTED"}}}, su], code=code,
                details=details)


@pytest.mark.parametrize(("code", "reason", "fragment"), [
    # an error that ends the stream, as INTERNAL does (test_semantics.py): no event of the stream was malformed,
    # and a quota the server says after its events is no refusal of the probe's request
    (grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.INVOKE_A2A_ERROR,
     "the stream carried an error: gRPC RESOURCE_EXHAUSTED error: quota"),
    (grpc.StatusCode.UNAUTHENTICATED, Reason.INVOKE_A2A_ERROR,
     "the stream carried an error: gRPC UNAUTHENTICATED error: quota"),
    (grpc.StatusCode.UNIMPLEMENTED, Reason.INVOKE_A2A_ERROR,
     "the stream carried an error: gRPC UNIMPLEMENTED error: quota"),
    # the agent was reached: no "unreachable" after its events
    (grpc.StatusCode.UNAVAILABLE, Reason.STREAM_RESET, "the stream ended UNAVAILABLE after its events"),
])
async def test_a_stream_ended_by_a_status_that_names_no_a2a_error(client: HttpClient,
                                                                  caplog: pytest.LogCaptureFixture,
                                                                  code: grpc.StatusCode, reason: Reason,
                                                                  fragment: str) -> None:
    async with scripted_grpc_agent({"SendStreamingMessage": _mid(code, "quota")}) as origin:
        r = await _probe(client, origin, STREAM)
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(StepName.STREAM)
    assert step is not None and fragment in step.detail, step.detail


# ---- the same wire faults on a 0.3 interface (a2a.v1.A2AService): gRPC's own framing, whatever the A2A version


def _cases_03() -> list[tuple[str, list[raw.Step], tuple[StepName, ...], Reason, str]]:
    from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03

    first = raw.message(pb03.StreamResponse, {"task": {"id": "t1", "contextId": "c1",
                                                       "status": {"state": "TASK_STATE_SUBMITTED"}}})
    working = raw.message(pb03.StreamResponse, {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {
        "state": "TASK_STATE_WORKING"}}})
    return [
        ("0.3 unary: trailers-only with no grpc-status", [raw.Headers(raw.ok_headers().fields, end=True)], INVOKE,
         Reason.INVOKE_PROTOCOL_ERROR, "the answer ended without a grpc-status"),
        ("0.3 unary: OK with no message", [raw.ok_headers(), raw.trailers()], INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
         "answered gRPC OK with no message that parses as a SendMessageResponse"),
        ("0.3 unary: RST_STREAM", [raw.Reset(raw.INTERNAL_ERROR)], INVOKE, Reason.INVOKE_PROTOCOL_ERROR,
         "the agent's side reset the stream"),
        ("0.3 stream: GOAWAY mid-stream", [raw.ok_headers(), first, working, raw.Pause(0.3), raw.GoAway()], STREAM,
         Reason.STREAM_RESET, "went away (GOAWAY) with the stream open"),
        ("0.3 stream: a message that is no StreamResponse", [raw.ok_headers(), first, raw.Msg(b"\xff\xff\xff"),
         raw.trailers()], STREAM, Reason.INVOKE_PROTOCOL_ERROR, "a stream message that is no StreamResponse"),
    ]


_CASES_03 = _cases_03()


@pytest.mark.parametrize(("frames", "steps", "reason", "fragment"), [c[1:] for c in _CASES_03],
                         ids=[c[0] for c in _CASES_03])
async def test_grpc_wire_faults_on_a_0_3_interface(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                   frames: list[raw.Step], steps: tuple[StepName, ...],
                                                   reason: Reason, fragment: str) -> None:
    async with raw.raw_grpc_agent(frames, version="0.3") as origin:
        r = await asyncio.wait_for(run_probe(Target(name="g", url=origin, timeout=TIMEOUT, binding="GRPC",
                                                    a2a_version="0.3"), client, steps=steps), TIMEOUT + 5)
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(steps[0])
    assert step is not None and fragment in step.detail, step.detail


# ---- a stream that completes and then misbehaves at its end


def _completed(**kw: Any) -> Call:
    su = {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}
    return Call(messages=[{"task": {**_TASK, "status": {"state": "TASK_STATE_SUBMITTED"}}}, su], **kw)


@pytest.mark.parametrize(("call", "reason", "fragment"), [
    # the close grace (1 s by default), then the stream is the agent's: as on the HTTP bindings
    (_completed(hold=30.0), Reason.STREAM_PROTOCOL_VIOLATION, "still open 1s after the terminal event"),
    # gRPC's 16 KiB metadata bound, said as the limits tests say it for a unary answer (test_grpc_limits.py)
    (_completed(initial=[("x-big", "v" * 100_000)]), Reason.INVOKE_PROTOCOL_ERROR, "metadata larger than"),
    (_completed(trailers=[("x-big", "v" * 100_000)]), Reason.INVOKE_PROTOCOL_ERROR, "metadata larger than"),
], ids=["open after the terminal event", "huge initial metadata", "huge trailers after the terminal event"])
async def test_a_completed_stream_that_misbehaves_at_its_end(client: HttpClient, caplog: pytest.LogCaptureFixture,
                                                            call: Call, reason: Reason, fragment: str) -> None:
    async with scripted_grpc_agent({"SendStreamingMessage": call}) as origin:
        t0 = time.monotonic()
        r = await _probe(client, origin, STREAM)
        elapsed = time.monotonic() - t0
    rep = _held(r, caplog)
    assert r.reason is reason, rep
    step = r.step(StepName.STREAM)
    assert step is not None and fragment in step.detail, step.detail
    assert elapsed < TIMEOUT


async def test_a_grpc_stream_is_bounded_by_max_stream_bytes(client: HttpClient,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """Each gRPC message is bounded (4 MiB), the stream as the other bindings' are (max_stream_bytes, 32 MiB):
    14 artifact chunks of 3 MiB stop at the eleventh, not after 42 MiB."""
    chunk = {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": True, "artifact": {
        "artifactId": "a", "parts": [{"text": "x" * (3 << 20)}]}}}
    head = {"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a", "parts": [
        {"text": "x"}]}}}
    first = {"task": {**_TASK, "status": {"state": "TASK_STATE_SUBMITTED"}, "artifacts": []}}
    async with scripted_grpc_agent({"SendStreamingMessage": Call(messages=[first, head, *[chunk] * 14])}) as origin:
        r = await _probe(client, origin, STREAM)
    rep = _held(r, caplog)
    assert r.reason is Reason.WORK_LIMIT_EXCEEDED, rep
    step = r.step(StepName.STREAM)
    assert step is not None and "the stream exceeded 33554432 bytes" in step.detail, step.detail


async def test_a_page_ending_on_its_data_frame_is_never_the_agents_a2a_error(client: HttpClient,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    """nginx's 502 page for a dead grpc_pass upstream ends on its DATA frame (END_STREAM, no trailers). On a server
    stream gRPC core says either the page's :status or "Data frame with END_STREAM flag received" (it races): the
    gateway's page, or no gRPC answer; never an A2A error of the agent's (five runs)."""
    page = [raw.Headers([(":status", "502"), ("content-type", "text/html")]), raw.Msg(b"<html>502</html>", end=True)]
    for _ in range(5):
        async with raw.raw_grpc_agent(page) as origin:
            r = await _probe(client, origin, STREAM)
        rep = _held(r, caplog)
        assert r.reason in (Reason.INVOKE_GATEWAY_ERROR, Reason.INVOKE_PROTOCOL_ERROR), rep
        step = r.step(StepName.STREAM)
        assert step is not None and ("status: 502" in step.detail or "without a grpc-status" in step.detail), step
