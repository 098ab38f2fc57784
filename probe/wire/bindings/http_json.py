"""HTTP+JSON (REST, spec §11): one route per operation under the interface URL, real HTTP statuses, SSE streams.

1.0 routes sit directly under the interface URL (``/message:send``, ``/tasks/{id}``, …); 0.3 ones under
``/v1``. A success is the bare ProtoJSON object (0.3: of the 0.3 proto, `dialects.V03_PROTO`); an error is
an HTTP status with a `google.rpc.Status` body whose ErrorInfo names the A2A error. 0.3 fixed no error
format, so a 0.3 error body is also read as a JSON-RPC error object or a bare ``{"message"}`` (see
`a2a_errors.from_http_03`). A 404 without an A2A error body is a missing route, not an A2A TaskNotFound,
and is reported as such. Where the spec leaves a choice (the subscribe verb) the binding tries the
documented alternatives and remembers which one the agent took.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

from probe.results import Exchange
from probe.wire import a2a_errors, strictjson
from probe.wire.bindings.base import (
    MAX_RESPONSE_BYTES,
    A2AError,
    Answer,
    Context,
    Headers,
    Op,
    Problem,
    ProblemKind,
    StreamEvent,
    merge_headers,
    rate_limited,
    redirected,
    register,
    snippet,
    with_tenant,
)
from probe.wire.bindings.grpc_binding import params_03
from probe.wire.bindings.jsonrpc import SseStream
from probe.wire.card import extensions_header
from probe.wire.dialects import Dialect, for_binding
from probe.wire.http import DEFAULT_CONFIG, ClientConfig, Deadline, HttpClient, gateway_problem
from probe.wire.sse import SSEEvent

JSON_TYPES = ("application/a2a+json", "application/json")  # 1.0.1 SHOULD, and what 1.0.0 and 0.3 used
_PROBLEM_JSON = "application/problem+json"  # RFC 9457 bodies from pre-1.0 REST servers
SUBSCRIBE_VERBS = ("POST", "GET")  # the spec's prose says POST, the proto's HTTP annotation GET


def _q(value: Any) -> str:
    return quote(str(value), safe="")


def route(version: str, op: Op, params: Mapping[str, Any]) -> tuple[str, str, dict[str, Any] | None, dict[str, Any]]:
    """(verb, path, JSON body or None, query) of one operation; the path is relative to the interface URL."""
    base = "/v1" if version == "0.3" else ""
    tid = params.get("id") if op in (Op.GET, Op.CANCEL, Op.SUBSCRIBE) else params.get("taskId")
    cfg = params.get("id") if "taskId" in params else params.get("pushNotificationConfigId")
    if tid is None and op in (Op.PUSH_GET, Op.PUSH_LIST, Op.PUSH_DELETE):
        tid = params.get("id")  # the 0.3 JSON-RPC params ({id, pushNotificationConfigId}) the client builds
    body = {k: v for k, v in params.items() if k not in ("id",)} if op is Op.CANCEL else dict(params)
    if op is Op.SEND:
        return "POST", f"{base}/message:send", dict(params), {}
    if op is Op.STREAM:
        return "POST", f"{base}/message:stream", dict(params), {}
    if op is Op.GET:
        query = {"historyLength": params["historyLength"]} if "historyLength" in params else {}
        return "GET", f"{base}/tasks/{_q(tid)}", None, query
    if op is Op.LIST:  # query values as ProtoJSON spells them (true/false, not Python's True/False)
        return "GET", f"{base}/tasks", None, {k: str(v).lower() if isinstance(v, bool) else v
                                              for k, v in params.items()}
    if op is Op.CANCEL:
        return "POST", f"{base}/tasks/{_q(tid)}:cancel", body, {}
    if op is Op.SUBSCRIBE:
        return "POST", f"{base}/tasks/{_q(tid)}:subscribe", None, {}
    configs = f"{base}/tasks/{_q(tid)}/pushNotificationConfigs"
    if op is Op.PUSH_SET:  # 0.3: §7.5's payload `{config: TaskPushNotificationConfig}` (PUSH_BODIES_03)
        return "POST", configs, push_body_03(params, PUSH_BODIES_03[0]) if version == "0.3" else dict(params), {}
    if op is Op.PUSH_LIST:
        return "GET", configs, None, {k: v for k, v in params.items() if k not in ("taskId", "id")}
    if op is Op.PUSH_GET:
        return "GET", f"{configs}/{_q(cfg)}", None, {}
    if op is Op.PUSH_DELETE:
        return "DELETE", f"{configs}/{_q(cfg)}", None, {}
    return "GET", f"{base}/card" if version == "0.3" else "/extendedAgentCard", None, {}  # EXTENDED_CARD


# The 0.3 texts give two bodies for tasks/pushNotificationConfig/set over REST: §7.5's payload
# `{config: TaskPushNotificationConfig}` (the CreateTaskPushNotificationConfigRequest, as a2a-sdk 0.3 and 1.x's 0.3
# layer and @a2a-js/sdk 0.3 read it) and the proto's `body: "config"` (the TaskPushNotificationConfig itself, as
# @a2a-js/sdk 1.x's 0.3 layer reads it). Both are tried, the spec text's first, and the one taken is remembered.
PUSH_BODIES_03 = ("request", "config")


def push_body_03(params: Mapping[str, Any], shape: str) -> dict[str, Any]:
    request = params_03(Op.PUSH_SET, params)
    if shape == "request":
        return request
    return {k: v for k, v in request["config"].items() if v} | {"name": request["parent"] + (
        f"/pushNotificationConfigs/{request['configId']}" if request["configId"] else "")}


def _body_refused(answer: Answer) -> bool:
    """A 0.3 REST body the agent could not read (the other documented body may be the one it takes)."""
    err = answer.error
    return answer.status in (400, 422) and (err is None or err.name in (a2a_errors.INVALID_PARAMS,
                                                                        "InvalidRequestError"))


class HttpJsonBinding:
    name: ClassVar[str] = "http_json"
    card_name: ClassVar[str] = "HTTP+JSON"

    def __init__(self, client: HttpClient, url: str, dialect: Dialect, headers: Mapping[str, str],
                 config: ClientConfig = DEFAULT_CONFIG, tenant: str | None = None) -> None:
        self.client = client
        self.config = config  # TLS, fresh connections and the auth flow, for every call
        self.url = url.rstrip("/")
        # Context.tenant: the proto's HTTP paths are /{tenant}/message:send, …; a body carries it too (as
        # a2a-sdk's REST client sends it), a query does not
        self.tenant = tenant
        self._prefix = f"/{_q(tenant)}" if tenant else ""
        self.dialect = for_binding(dialect, self.name)  # 0.3 REST speaks the 0.3 proto's ProtoJSON
        self._headers = {"Content-Type": "application/json", **headers}
        if dialect.header_version:
            self._headers["A2A-Version"] = dialect.header_version
        self.subscribe_verb: str | None = None  # the verb the agent took for subscribe, once seen
        self.push_body: str | None = None  # 0.3: the push-config body the agent took, once seen

    @classmethod
    def build(cls, ctx: Context) -> HttpJsonBinding:
        return cls(ctx.http, ctx.url, ctx.dialect, ctx.headers, ctx.config, ctx.tenant)

    def method(self, op: Op) -> str:
        verb, path, _, _ = route(self.dialect.version, op, {"id": "{id}", "taskId": "{id}"})
        return f"{verb} {path}"

    async def close(self) -> None:
        return None

    def _target(self, op: Op, params: dict[str, Any], push_body: str | None = None) -> tuple[str, str, bytes | None]:
        verb, path, body, query = route(self.dialect.version, op, params)
        if push_body is not None:
            body = push_body_03(params, push_body)
        if self.tenant and body is not None:
            body = with_tenant(body, self.tenant)
        url = self.url + self._prefix + path + (("?" + urlencode(query)) if query else "")
        return verb, url, strictjson.compact(body).encode() if body is not None else None

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer:
        if op is not Op.PUSH_SET or self.dialect.version != "0.3":
            return await self._call(op, params, deadline, headers)
        shapes = [self.push_body] if self.push_body else list(PUSH_BODIES_03)
        for i, shape in enumerate(shapes):
            answer = await self._call(op, params, deadline, headers, shape)
            if not _body_refused(answer):
                self.push_body = shape
            elif i + 1 < len(shapes):
                continue
            return answer
        raise AssertionError("unreachable")

    async def _call(self, op: Op, params: dict[str, Any], deadline: Deadline, headers: Headers | None,
                    push_body: str | None = None) -> Answer:
        verb, url, body = self._target(op, params, push_body)
        accept = {"Accept": ", ".join(JSON_TYPES)}
        hdrs = merge_headers(self._headers, {**accept, **(headers or {})})
        if body is None:
            hdrs = merge_headers(hdrs, {"Content-Type": None})
        resp = await self.client.request(verb, url, deadline=deadline, body=body, headers=hdrs,
                                         max_bytes=MAX_RESPONSE_BYTES, follow_redirects=False, config=self.config)
        answer = read_answer(f"{verb} {resp.exchange.url}", resp.exchange, resp.status, resp.content_type, resp.body,
                             version=self.dialect.version)
        answer.challenge = resp.headers.get("WWW-Authenticate")
        redirected(answer, resp.headers.get("Location"))
        rate_limited(answer, resp.headers.get("Retry-After"))
        answer.extensions = resp.headers.get(extensions_header(self.dialect.version))
        answer.sent_at, answer.received_at = resp.sent_at, resp.received_at
        return answer

    @asynccontextmanager
    async def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                          headers: Headers | None = None) -> AsyncIterator[SseStream]:
        verb, url, body = self._target(op, params)
        hdrs = merge_headers(self._headers, {"Accept": "text/event-stream", **(headers or {})})
        verbs = [verb]
        if op is Op.SUBSCRIBE:
            verbs = [self.subscribe_verb] if self.subscribe_verb else list(SUBSCRIBE_VERBS)
        for i, v in enumerate(verbs):
            async with self.client.stream(v, url, deadline=deadline, headers=hdrs, body=body,
                                          config=self.config) as raw:
                label = f"{v} {raw.exchange.url}"
                stream = SseStream(label, raw, partial(http_json_event, version=self.dialect.version))
                if stream.is_sse:
                    if op is Op.SUBSCRIBE:
                        self.subscribe_verb = v
                    yield stream
                    return
                data = await raw.read_body(MAX_RESPONSE_BYTES)
                stream.plain = read_answer(label, raw.exchange, raw.status, raw.content_type, data,
                                           version=self.dialect.version)
                rate_limited(stream.plain, raw.resp.headers.get("Retry-After"))
                p = stream.plain.problem
                # the other documented verb, when this one is not routed at all
                if i + 1 < len(verbs) and (raw.status == 405 or (p is not None and p.kind is ProblemKind.ROUTE)):
                    continue
                yield stream
                return


def http_json_event(ev: SSEEvent, version: str = "1.0") -> StreamEvent:
    """An HTTP+JSON stream event: the bare StreamResponse, or a google.rpc.Status error (0.3: or any error body
    `a2a_errors.from_http_03` reads, such as a JSON-RPC error object)."""
    try:
        doc = strictjson.loads(ev.data)
    except strictjson.StrictJSONError as exc:
        return StreamEvent(ev.event, ev.data, problem=f"not JSON: {exc}")
    if not isinstance(doc, dict):
        return StreamEvent(ev.event, ev.data, problem=f"a JSON {type(doc).__name__}, not a StreamResponse object")
    if "error" in doc and isinstance(doc["error"], dict):
        return StreamEvent(ev.event, ev.data, error=_status_error(doc["error"], None))
    if version == "0.3" and "message" in doc and not any(k in doc for k in _PAYLOADS):
        spec, _, _ = a2a_errors.from_http_03(0, doc)
        if spec is not None:
            return StreamEvent(ev.event, ev.data, error=A2AError(
                name=spec.name, message=str(doc.get("message", ""))[:500], code=doc.get("code"),
                binding="http_json", details=doc.get("data")))
    return StreamEvent(ev.event, ev.data, result=doc, has_result=True)


_PAYLOADS = ("task", "statusUpdate", "artifactUpdate")  # a StreamResponse member ("message" is one too)


def _status_error(err: dict[str, Any], http_status: int | None) -> A2AError:
    """A google.rpc.Status body (`{"error": {code, status, message, details}}`) as an A2A error by name."""
    details = err.get("details")
    reason = a2a_errors.a2a_reason(details)
    code = http_status if http_status is not None else err.get("code")
    # an error event in a stream came with HTTP 200 (the stream's): the status it declares is the body's own code
    # (a2a-go and a2a-java write the mapped one there), so that is the one the 1.0 mappings judge
    declared = code if isinstance(code, int) and not isinstance(code, bool) else None
    spec, mappings = a2a_errors.from_http(declared, reason) if declared is not None else (
        a2a_errors.BY_REASON.get(reason or ""), ())
    return A2AError(name=spec.name if spec else None, message=str(err.get("message", ""))[:500], code=code,
                    binding="http_json", reason=reason, details=details, mappings=mappings)


def _base_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def read_answer(method: str, exchange: Exchange, status: int | None, content_type: str, body: bytes, *,
                version: str = "1.0") -> Answer:
    """Read one HTTP+JSON answer: a 2xx ProtoJSON body, an A2A error (status + google.rpc.Status; 0.3: any body
    `a2a_errors.from_http_03` reads), or a problem."""
    answer = Answer(method, exchange, content_type, snippet=snippet(body))
    base = _base_type(content_type)
    doc: Any = None
    parse_error: str | None = None
    if body:
        try:
            doc = strictjson.loads(body)
        except strictjson.StrictJSONError as exc:
            parse_error = str(exc)
    # a google.rpc.Status body is an error whatever the status says: answered 2xx, it is judged as the error it is
    # (1.0 §11.6: the error code maps to the HTTP status; 0.3 §3.2.3: statuses that correspond to the error)
    error_body = isinstance(doc, dict) and len(doc) == 1 and isinstance(doc.get("error"), dict)
    ok = status is not None and 200 <= status < 300 and not error_body
    where = f"{method} answered HTTP {status}"
    if ok:
        if parse_error is not None or not isinstance(doc, dict | type(None)) or (doc is None and body):
            answer.problem = Problem(ProblemKind.FRAMING, f"{where} {content_type or 'no content type'}, not a "
                                     f"ProtoJSON object: {parse_error or type(doc).__name__}"
                                     + (f" — body starts {answer.snippet[:80]!r}" if answer.snippet else ""))
            return answer
        if isinstance(doc, dict) and "jsonrpc" in doc and ("result" in doc or "error" in doc):
            members = ", ".join(sorted(doc)[:4])
            answer.problem = Problem(ProblemKind.FRAMING, f"{where} with a JSON-RPC 2.0 envelope ({members}), not "
                                     "the bare ProtoJSON object an HTTP+JSON interface answers with: the URL serves "
                                     "the JSON-RPC binding, or the card names the wrong protocolBinding")
            return answer
        answer.result, answer.has_result = (doc if doc is not None else {}), True
        if version == "0.3" and base != "application/json":  # 0.3 §3.2.3: MUST use application/json
            answer.media_type = f"Content-Type is {content_type or 'missing'!r}, not application/json (0.3)"
        elif base not in JSON_TYPES:
            answer.media_type = (f"Content-Type is {content_type or 'missing'!r}, not application/a2a+json or "
                                 "application/json")
        return answer
    if version == "0.3" and isinstance(doc, dict) and status is not None and _read_03_error(answer, doc, status, where):
        return answer
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict):  # google.rpc.Status: an A2A answer, whatever the status
        answer.error = _status_error(err, status)
        if answer.error.name is not None and not answer.error.mappings and status not in (401, 403):
            expected = " or ".join(str(s) for s in a2a_errors.BY_NAME[answer.error.name].http_statuses())
            answer.problem = Problem(ProblemKind.STATUS, f"{where} for {answer.error.describe()}; the spec maps "
                                     f"{answer.error.name} to HTTP {expected}")
        elif error_body and answer.error.name is None and status is not None and status < 300:
            answer.problem = Problem(ProblemKind.STATUS, f"{where} with an error body ({answer.error.describe()}): an "
                                     "error is answered with an error status")
        elif status == 404 and answer.error.name is None:
            # 1.0 §11.6: an A2A error MUST carry its ErrorInfo (404 is TaskNotFoundError's); a google.rpc.Status
            # without one is what a front end answers for a path it does not route, and a2a-sdk's client (1.0 and
            # 0.3) reads it as MethodNotFoundError ("Resource not found")
            named = "the ErrorInfo 1.0 §11.6 requires" if version != "0.3" else "anything that names it"
            answer.problem = Problem(ProblemKind.ROUTE, f"{where} with an error body that names no A2A error: "
                                     f"no such route to a client, or a TaskNotFoundError without {named} "
                                     f"({answer.snippet[:120]})")
        return answer
    if base == _PROBLEM_JSON and isinstance(doc, dict):  # pre-1.0 servers: RFC 9457, no A2A name to read
        answer.error = A2AError(name=None, message=str(doc.get("detail") or doc.get("title") or "")[:500],
                                code=status, binding="http_json", details=doc)
    body_note = f" ({content_type or 'no content type'}: {answer.snippet[:120]})" if answer.snippet else ""
    if status == 404 and answer.error is None:
        answer.problem = Problem(ProblemKind.ROUTE, f"{where} without an A2A error body: no such route{body_note}")
    elif status in (401, 403):
        answer.problem = Problem(ProblemKind.AUTH, where + body_note)
    elif answer.error is None and (gateway := gateway_problem(status, answer.snippet)) is not None:
        answer.problem = Problem(ProblemKind.GATEWAY, f"{where}{body_note}: {gateway}")
    elif status == 400 and "version" in answer.snippet.lower() and answer.error is None:
        answer.problem = Problem(ProblemKind.VERSION, where + body_note + " — the server rejects the A2A-Version sent")
    elif answer.error is None:
        answer.problem = Problem(ProblemKind.STATUS, where + body_note)
    return answer


def _read_03_error(answer: Answer, doc: dict[str, Any], status: int, where: str) -> bool:
    """A 0.3 error body that names an A2A error; a STATUS problem when the status does not correspond to it."""
    spec, mappings, reason = a2a_errors.from_http_03(status, doc)
    if spec is None:
        return False
    err = doc["error"] if isinstance(doc.get("error"), dict) else doc
    answer.error = A2AError(name=spec.name, message=str(err.get("message", ""))[:500], code=status,
                            binding="http_json", reason=reason, details=err.get("details", err.get("data")),
                            mappings=mappings)
    if not mappings and status not in (401, 403):
        expected = " or ".join(str(s) for s in a2a_errors.http_statuses_03(spec))
        answer.problem = Problem(ProblemKind.STATUS, f"{where} for {answer.error.describe()}; 0.3 (§3.2.3) wants a "
                                 f"status that corresponds to {spec.name}: HTTP {expected}")
    return True


register(HttpJsonBinding.name, HttpJsonBinding.card_name, HttpJsonBinding.build)
