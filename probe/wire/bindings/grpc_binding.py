"""gRPC (spec §10) on grpc.aio with the generated stubs the official `a2a-sdk` ships, for both service versions.

* A2A 1.0: ``lf.a2a.v1.A2AService`` (`a2a.types.a2a_pb2[_grpc]`, spec v1.0 ``specification/a2a.proto``).
* A2A 0.3: ``a2a.v1.A2AService`` (`a2a.compat.v0_3.a2a_v0_3_pb2[_grpc]`, the v0.3.0
  ``specification/grpc/a2a.proto`` plus the 0.3.x additions, as a2a-sdk 1.3.0 ships it). Its requests name
  resources (``name: "tasks/{id}"``), its rpcs are ``TaskSubscription``/``GetAgentCard``/
  ``ListTaskPushNotificationConfig`` and it has no ListTasks; 0.3 fixed no status table (§3.2.2 points at proto
  annotations that carry none), so an error is named by its ErrorInfo, else by the ``XxxError:`` prefix
  a2a-sdk 0.3 puts in the details or the §8 message @a2a-js/sdk 0.3 puts there, else by a status only one
  error uses (NOT_FOUND).

No hand-written protobuf: requests are the probe's ProtoJSON params parsed into the SDK's generated
messages, and answers are turned back into ProtoJSON dicts, so the dialects, checks and stream judge read
gRPC exactly as they read the HTTP bindings. The version and credentials travel as metadata; TLS or
plaintext follows the URL scheme (a schemeless ``host:port``, as both SDKs advertise, is plaintext and a
SHOULD-level finding); every call has a deadline; a gRPC status becomes an A2A error by name (from the
``grpc-status-details-bin`` ErrorInfo of domain a2a-protocol.org, as a2a-sdk's client reads it), a route problem
(UNIMPLEMENTED with no A2A reason), an auth problem, or a WireError when there is no answer at all. The statuses
gRPC core makes itself for what the agent's side did on the wire (no grpc-status, a message that does not parse,
RST_STREAM, GOAWAY, a closed socket, broken compression or HTTP/2 framing, another server's HTTP page) are never
read as the agent's A2A error: they are protocol errors, a cut stream, or an unexpected status; the client's own
receive bounds (4 MiB a message, inflated too; 16 KiB of metadata; max_stream_bytes) are the probe's limits. One
channel per call, with a subchannel pool of its own: a fresh connection, so timings are real and nothing leaks
between calls or probes. `grpcio` is the `grpc` install extra.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

from probe.results import Exchange, HttpPhases, Transport
from probe.wire import a2a_errors
from probe.wire.bindings.base import (
    A2AError,
    Answer,
    BindingUnavailable,
    Context,
    EventByEvent,
    Headers,
    Op,
    Problem,
    ProblemKind,
    StreamEvent,
    register,
    with_tenant,
)
from probe.wire.dialects import Dialect, for_binding
from probe.wire.http import (
    DEFAULT_CONFIG,
    OWN_ERRNOS,
    BodyTooLarge,
    ClientConfig,
    ConnectFailed,
    ConnectionReset,
    Deadline,
    DeadlineExceeded,
    ProbeOutOfFiles,
    ProtocolError,
    gateway_problem,
    origin_url,
    out_of_descriptors,
    with_credentials,
)
from probe.wire.sse import StreamLimit

# gRPC core shares one connection among the channels to a target (its global subchannel pool) while they overlap:
# a channel of its own pool opens its own connection, so a call's timings are its own and nothing (a connection
# an agent reset, went away on, or left half-read) carries over into another call or probe
_OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)
EXTRA_HINT = "gRPC interfaces need the grpc extra: pip install 'a2a-probe[grpc]' (grpcio)"


@dataclass(frozen=True, slots=True)
class Service:
    """One version's gRPC service: its full name, the SDK modules of its stubs, and op -> (rpc, request type)."""

    name: str
    pb2: str
    pb2_grpc: str
    rpcs: Mapping[Op, tuple[str, str]]
    tracks: str


SERVICES: dict[str, Service] = {
    "1.0": Service("lf.a2a.v1.A2AService", "a2a.types.a2a_pb2", "a2a.types.a2a_pb2_grpc", {
        Op.SEND: ("SendMessage", "SendMessageRequest"),
        Op.STREAM: ("SendStreamingMessage", "SendMessageRequest"),
        Op.GET: ("GetTask", "GetTaskRequest"),
        Op.LIST: ("ListTasks", "ListTasksRequest"),
        Op.CANCEL: ("CancelTask", "CancelTaskRequest"),
        Op.SUBSCRIBE: ("SubscribeToTask", "SubscribeToTaskRequest"),
        Op.PUSH_SET: ("CreateTaskPushNotificationConfig", "TaskPushNotificationConfig"),
        Op.PUSH_GET: ("GetTaskPushNotificationConfig", "GetTaskPushNotificationConfigRequest"),
        Op.PUSH_LIST: ("ListTaskPushNotificationConfigs", "ListTaskPushNotificationConfigsRequest"),
        Op.PUSH_DELETE: ("DeleteTaskPushNotificationConfig", "DeleteTaskPushNotificationConfigRequest"),
        Op.EXTENDED_CARD: ("GetExtendedAgentCard", "GetExtendedAgentCardRequest"),
    }, "A2A 1.0 (lf.a2a.v1, from a2a-sdk's a2a.types.a2a_pb2)"),
    "0.3": Service("a2a.v1.A2AService", "a2a.compat.v0_3.a2a_v0_3_pb2", "a2a.compat.v0_3.a2a_v0_3_pb2_grpc", {
        Op.SEND: ("SendMessage", "SendMessageRequest"),
        Op.STREAM: ("SendStreamingMessage", "SendMessageRequest"),
        Op.GET: ("GetTask", "GetTaskRequest"),
        Op.CANCEL: ("CancelTask", "CancelTaskRequest"),
        Op.SUBSCRIBE: ("TaskSubscription", "TaskSubscriptionRequest"),
        Op.PUSH_SET: ("CreateTaskPushNotificationConfig", "CreateTaskPushNotificationConfigRequest"),
        Op.PUSH_GET: ("GetTaskPushNotificationConfig", "GetTaskPushNotificationConfigRequest"),
        Op.PUSH_LIST: ("ListTaskPushNotificationConfig", "ListTaskPushNotificationConfigRequest"),
        Op.PUSH_DELETE: ("DeleteTaskPushNotificationConfig", "DeleteTaskPushNotificationConfigRequest"),
        Op.EXTENDED_CARD: ("GetAgentCard", "GetAgentCardRequest"),
    }, "A2A 0.3 (a2a.v1, the v0.3.0 proto from a2a-sdk's a2a.compat.v0_3.a2a_v0_3_pb2)"),
}
SERVICE = SERVICES["1.0"].name
RPCS = SERVICES["1.0"].rpcs
STUBS_TRACK = "; ".join(s.tracks for s in SERVICES.values())


def _modules(service: Service) -> tuple[Any, Any, Any, Any]:
    try:
        import grpc
        import grpc.aio
        from google.protobuf import json_format

        pb2, pb2_grpc = importlib.import_module(service.pb2), importlib.import_module(service.pb2_grpc)
    except ImportError as exc:  # only grpcio is optional; a2a-sdk and protobuf are core
        raise BindingUnavailable(f"{EXTRA_HINT} ({exc})", probe_side=True) from None
    return grpc, pb2, pb2_grpc, json_format


def _name(task_id: Any, config_id: Any = None) -> str:
    """A 0.3 resource name: tasks/{id}[/pushNotificationConfigs/{configId}]."""
    name = f"tasks/{quote(str(task_id), safe='')}"
    return name if config_id is None else f"{name}/pushNotificationConfigs/{quote(str(config_id), safe='')}"


def params_03(op: Op, params: Mapping[str, Any]) -> dict[str, Any]:
    """The client's neutral (0.3 JSON-RPC-shaped) params as the 0.3 proto's request messages take them."""
    if op in (Op.SEND, Op.STREAM, Op.EXTENDED_CARD):
        return dict(params)
    if op in (Op.GET, Op.CANCEL, Op.SUBSCRIBE):
        out: dict[str, Any] = {"name": _name(params.get("id"))}
        if op is Op.GET and "historyLength" in params:
            out["historyLength"] = params["historyLength"]
        return out
    task_id = params.get("taskId", params.get("id"))
    if op is Op.PUSH_SET:
        config = params.get("pushNotificationConfig") or {}
        cid = config.get("id") if isinstance(config, dict) else None
        return {"parent": _name(task_id), "configId": cid or "",
                "config": {"name": _name(task_id, cid) if cid else "", "pushNotificationConfig": config}}
    if op is Op.PUSH_LIST:
        return {"parent": _name(task_id)}
    return {"name": _name(task_id, params.get("pushNotificationConfigId"))}  # PUSH_GET, PUSH_DELETE


def target_of(url: str) -> tuple[str, bool, bool]:
    """(host:port, TLS?, schemeless?) of an advertised gRPC URL."""
    if "://" not in url:
        return url.strip().rstrip("/"), False, True
    parts = urlsplit(url)
    tls = parts.scheme.lower() in ("https", "grpcs")
    port = parts.port or (443 if tls else 80)
    return f"{parts.hostname}:{port}", tls, False


class GrpcBinding:
    name: ClassVar[str] = "grpc"
    card_name: ClassVar[str] = "GRPC"

    def __init__(self, url: str, dialect: Dialect, headers: Mapping[str, str],
                 config: ClientConfig = DEFAULT_CONFIG, tenant: str | None = None) -> None:
        service = SERVICES.get(dialect.version)
        if service is None:
            raise BindingUnavailable(f"the probe speaks gRPC for A2A {' and '.join(SERVICES)} ({STUBS_TRACK}); this "
                                     f"interface is {dialect.version}", probe_side=False)
        self.service = service
        self.grpc, self.pb2, self.pb2_grpc, self.json_format = _modules(service)
        self.url = url
        self.dialect = for_binding(dialect, self.name)  # 0.3 gRPC reads as the 0.3 proto's ProtoJSON
        self.target, self.tls, self.schemeless = target_of(url)
        self.config = config  # the auth flow's credentials go in as metadata, for this origin only
        self.tenant = tenant  # the request message's `tenant` field (Context.tenant)
        self._origin = origin_url(url)
        self._metadata = {k.lower(): v for k, v in headers.items()}
        if dialect.header_version:
            self._metadata["a2a-version"] = dialect.header_version

    @classmethod
    def build(cls, ctx: Context) -> GrpcBinding:
        return cls(ctx.url, ctx.dialect, ctx.headers, ctx.config, ctx.tenant)

    def method(self, op: Op) -> str:
        return self.service.rpcs.get(op, ("", ""))[0]

    async def close(self) -> None:
        return None

    def _channel(self) -> Any:
        aio = self.grpc.aio
        try:
            if self.tls:
                return aio.secure_channel(self.target, self.grpc.ssl_channel_credentials(**self.tls_material()),
                                          options=_OWN_CONNECTION)
            return aio.insecure_channel(self.target, options=_OWN_CONNECTION)
        except OSError as exc:  # grpc.aio starts its poller with the first channel (a socketpair): EMFILE here
            if exc.errno in OWN_ERRNOS:
                raise ProbeOutOfFiles(f"gRPC channel to {self.target}: the probe is out of file descriptors "
                                      f"({exc.strerror}); the agent was not reached") from None
            raise

    def tls_material(self) -> dict[str, bytes]:
        """The agent's CA bundle and client certificate (mTLS) as gRPC channel credentials take them; the
        system roots when none is configured. (gRPC has no switch for insecure_skip_verify.)"""
        ca, cert, key = self.config.pem_files
        out: dict[str, bytes] = {}
        try:
            if ca:
                out["root_certificates"] = Path(ca).read_bytes()
            if cert:
                out["certificate_chain"] = Path(cert).read_bytes()
                out["private_key"] = Path(key or cert).read_bytes()
        except OSError as exc:
            raise ConnectFailed(f"gRPC TLS material unreadable: {exc.strerror}") from None
        return out

    def _metadata_for(self, headers: Headers | None) -> list[tuple[str, str]]:
        _, creds = with_credentials(self._origin, {}, self.config.auth)
        md = {**self._metadata, **{k.lower(): v for k, v in creds.items()}}
        for k, v in (headers or {}).items():
            md.pop(k.lower(), None)
            if v is not None:
                md[k.lower()] = v
        return list(md.items())

    def _request(self, op: Op, params: dict[str, Any]) -> Any:
        msg = getattr(self.pb2, self.service.rpcs[op][1])()
        body = params_03(op, params) if self.dialect.version == "0.3" else with_tenant(params, self.tenant)
        self.json_format.ParseDict(body, msg, ignore_unknown_fields=True)
        return msg

    def _exchange(self, op: Op) -> Exchange:
        return Exchange(transport=Transport.GRPC, method=f"/{self.service.name}/{self.method(op)}", url=self.target,
                        content_type="application/grpc")

    def _missing(self, op: Op) -> Answer:
        """An operation this version's service has no rpc for (0.3: ListTasks): said, never sent."""
        exchange = self._exchange(op)
        answer = Answer(op.value, exchange, "application/grpc")
        answer.problem = Problem(ProblemKind.ROUTE, f"{self.service.name} ({self.dialect.version}) defines no rpc "
                                 f"for {op.value}")
        return answer

    def _dict(self, msg: Any) -> Any:
        return self.json_format.MessageToDict(msg)

    async def call(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                   headers: Headers | None = None) -> Answer:
        if op not in self.service.rpcs:
            return self._missing(op)
        exchange = self._exchange(op)
        request = self._request(op, params)
        t0 = time.monotonic()
        async with self._channel() as channel:
            rpc = getattr(self.pb2_grpc.A2AServiceStub(channel), self.method(op))
            try:
                reply = await rpc(request, metadata=self._metadata_for(headers), timeout=max(deadline.remaining(),
                                                                                                0.001))
            except self.grpc.aio.AioRpcError as exc:
                _timed(exchange, t0)
                return self._failed(op, exchange, exc)
        _timed(exchange, t0)
        exchange.grpc_status = "OK"
        if reply is None:  # grpc.aio's deserializer gives None for no message and for bytes it cannot parse
            raise ProtocolError(f"{self.method(op)} to {self.target} answered gRPC OK {self._unparsed(op)}", exchange)
        return Answer(self.method(op), exchange, "application/grpc", result=self._dict(reply), has_result=True)

    def _unparsed(self, op: Op, stream: bool = False) -> str:
        service = self.pb2.DESCRIPTOR.services_by_name[self.service.name.rsplit(".", 1)[1]]
        kind = service.methods_by_name[self.method(op)].output_type.name
        if stream:
            return f"that is no {kind} (bytes that do not parse)"
        return (f"with no message that parses as a {kind} (none at all, or bytes that do not parse): a unary gRPC "
                "answer carries exactly one")

    def _failed(self, op: Op, exchange: Exchange, exc: Any, *, midstream: bool = False) -> Answer:
        """The answer a non-OK status makes, or the WireError of a call that had no gRPC answer at all: no
        grpc-status (a page that is no gRPC answer), a reset or a closed connection (RST_STREAM, GOAWAY) — gRPC
        core makes a status of those client-side, which no agent sent."""
        status = exc.code().name
        exchange.grpc_status = status
        details = exc.details() or ""
        what = f"{self.method(op)} to {self.target} answered gRPC {status}: {details[:200]}"
        if (status == "UNKNOWN" and details == "No status received") or _NO_TRAILERS in details:
            raise ProtocolError(f"{self.method(op)} to {self.target}: the answer ended without a grpc-status (gRPC "
                                "core reads UNKNOWN 'No status received'): not a gRPC answer, such as a proxy's "
                                "page or an HTTP/2 server that is no gRPC server", exchange)
        if status == "INTERNAL" and (bad := _BAD_FRAMING.search(details)) is not None:
            raise ProtocolError(f"{self.method(op)} to {self.target}: the answer's gRPC framing is broken ({bad[0]}; "
                                "gRPC core reads INTERNAL, no status the agent sent)", exchange)
        cut = _CUT.search(details)
        if cut is not None and status != "RESOURCE_EXHAUSTED" and (midstream or cut[0].startswith("RST_STREAM")):
            # RST_STREAM ENHANCE_YOUR_CALM stays the server's load refusal (gRPC reads RESOURCE_EXHAUSTED)
            said = _CUT_WORDS[next(g for g in cut.groups() if g)]
            raise ConnectionReset(f"{self.method(op)} to {self.target}: the agent's side {said} ({cut[0]}; gRPC "
                                  f"core reads {status}, no status the agent sent)", exchange)
        if status in ("INTERNAL", "UNKNOWN") and details.startswith("Stream removed ("):  # the HTTP/2 transport
            # broke under the call: a frame larger than the client allows, past its flow-control window, ...
            raise ProtocolError(f"{self.method(op)} to {self.target}: the agent's HTTP/2 connection broke under the "
                                f"call ({details[:200]}; gRPC core reads INTERNAL, no status the agent sent)", exchange)
        if midstream and status == "UNAVAILABLE":  # after events the agent was reached: a server draining, restarting
            raise ConnectionReset(f"{what}: the stream ended UNAVAILABLE after its events (a server draining or "
                                  "restarting)", exchange)
        http = _NOT_GRPC.search(exc.details() or "")  # an HTTP/2 answer that was no gRPC one: a proxy's own page
        gateway = gateway_problem(int(http.group(1)), "") if http else None
        if http and http.group(1) == "429":  # a proxy's rate limit before the gRPC service (gRPC reads UNAVAILABLE)
            return Answer(self.method(op), exchange, "application/grpc", snippet=(exc.details() or "")[:160],
                          problem=Problem(ProblemKind.RATE_LIMITED, f"{what}: HTTP 429 Too Many Requests, refused by "
                                          "a rate limit on the way, the agent not judged"))
        if gateway is not None:
            return Answer(self.method(op), exchange, "application/grpc", snippet=(exc.details() or "")[:160],
                          problem=Problem(ProblemKind.GATEWAY, f"{what}: {gateway}"))
        if http and status in ("UNKNOWN", "INTERNAL"):  # gRPC core's code for an HTTP status it maps to no other
            return Answer(self.method(op), exchange, "application/grpc", snippet=(exc.details() or "")[:160],
                          problem=Problem(ProblemKind.STATUS, f"{what}: an HTTP {http.group(1)} answer, not a gRPC "
                                          "one (a server or proxy on the way that does not speak gRPC)"))
        if status == "RESOURCE_EXHAUSTED":
            _local_limit(self.method(op), self.target, exc.details() or "", exchange)
        if status == "UNAVAILABLE":
            if out_of_descriptors():  # gRPC core's "socket: Too many open files" (or a lookup that could not open)
                raise ProbeOutOfFiles(f"{what}: the probe is out of file descriptors; the agent was not reached",
                                      exchange)
            raise self._unreachable(what, details, exchange)
        if status == "DEADLINE_EXCEEDED":
            raise DeadlineExceeded(what, exchange)
        answer = Answer(self.method(op), exchange, "application/grpc", snippet=(exc.details() or "")[:160])
        reason, details = self._error_info(exc)
        if status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            answer.problem = Problem(ProblemKind.AUTH, what)
            return answer
        if status == "RESOURCE_EXHAUSTED":  # the server's (not the probe's own: `_local_limit`) quota or rate limit
            wait = _retry_delay(details)
            answer.problem = Problem(ProblemKind.RATE_LIMITED, what + (
                f"; RetryInfo {wait:.0f} s" if wait is not None else "") + ": refused by a rate or resource limit "
                "of the server, the agent not judged", wait)
            return answer
        v03 = self.dialect.version == "0.3"
        named_03 = (a2a_errors.from_message_03(exc.details(), unimplemented=status == "UNIMPLEMENTED")
                    if v03 and reason is None else None)
        if status == "UNIMPLEMENTED" and reason is None and named_03 is None:  # no A2A service (or method) here
            answer.problem = Problem(ProblemKind.ROUTE, what + f" — no {self.service.name} here")
            return answer
        if v03:  # no 0.3 status table to hold the agent to: the name is all there is
            spec = a2a_errors.BY_REASON.get(reason or "") or named_03 or a2a_errors.from_grpc(status, None)[0]
            answer.error = A2AError(name=spec.name if spec else None, message=exc.details() or "", code=status,
                                    binding="grpc", reason=reason, details=details)
            return answer
        spec, mappings = a2a_errors.from_grpc(status, reason)
        answer.error = A2AError(name=spec.name if spec else None, message=exc.details() or "", code=status,
                                binding="grpc", reason=reason, details=details, mappings=mappings)
        if spec is not None and not mappings:
            expected = " or ".join(spec.grpc_statuses())
            answer.problem = Problem(ProblemKind.STATUS, f"{what}; the spec maps {spec.name} to gRPC {expected}")
        return answer

    def _unreachable(self, what: str, details: str, exchange: Exchange) -> ConnectFailed:
        """No gRPC answer: the connection failed. Names the two wrong listeners gRPC core can tell apart (HTTP/1.x,
        plain text for a TLS URL) and hints at the third (a TLS listener for a plain-text URL closes at once); all
        three are invoke_unreachable, the listener named."""
        if "Trying to connect an http1.x server" in details:
            # the HTTP/2 connection was never set up: unreachable as gRPC, as a TLS mismatch is (tests/gateway)
            return ConnectFailed(f"{what}: the server there speaks HTTP/1.x, not HTTP/2; gRPC needs HTTP/2 end to "
                                 "end (a server or proxy without h2/h2c on this port)", exchange)
        if self.tls and any(words in details for words in _NOT_TLS):
            return ConnectFailed(f"{what}: the server there does not speak TLS: the URL says https:// for a "
                                 "plain-text listener; use http://, or terminate TLS there", exchange)
        if not self.tls and "failed to connect" in details and details.endswith("Socket closed"):
            return ConnectFailed(f"{what} (closed at once after the HTTP/2 preface, as a TLS listener does: if the "
                                 "port speaks TLS, the URL must say https://)", exchange)
        return ConnectFailed(what, exchange)

    def _error_info(self, exc: Any) -> tuple[str | None, list[dict[str, Any]]]:
        """The ErrorInfo reason in grpc-status-details-bin (a google.rpc.Status), with the details as ProtoJSON."""
        raw = next((v for k, v in (exc.trailing_metadata() or ()) if k == "grpc-status-details-bin"), None)
        if not isinstance(raw, bytes):
            return None, []
        try:
            from google.rpc import status_pb2

            st = status_pb2.Status.FromString(raw)
        except Exception as parse_error:  # a malformed trailer is the agent's problem, never a probe crash
            why = f"grpc-status-details-bin is not a google.rpc.Status ({parse_error})"
            return None, [{a2a_errors.DETAILS_PROBLEM: why[:300]}]
        details = [self._detail(d) for d in st.details]
        code, message = exc.code(), exc.details() or ""
        if st.code != code.value[0] or st.message != message:
            # a2a-sdk's client refuses such a status (status_from_call: "Mismatched status code/message"), so its
            # ErrorInfo names nothing a client sees
            why = (f"grpc-status-details-bin is a google.rpc.Status of code {st.code} and message "
                   f"{st.message[:80]!r}, not the call's {code.name} ({code.value[0]}) {message[:80]!r}")
            return None, [{a2a_errors.DETAILS_PROBLEM: why}]
        from google.rpc import error_details_pb2

        for any_msg, as_dict in zip(st.details, details, strict=True):
            if any_msg.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                try:
                    any_msg.Unpack(info)
                except Exception as bad:  # a2a-sdk's client raises DecodeError here: it names nothing
                    why = f"grpc-status-details-bin holds an ErrorInfo that does not parse ({bad})"
                    return None, [{a2a_errors.DETAILS_PROBLEM: why[:300]}]
                as_dict.update({"@type": a2a_errors.ERROR_INFO_TYPE, "reason": info.reason, "domain": info.domain})
        # a2a-sdk's gRPC client (_map_grpc_error) names an error only by an ErrorInfo of domain a2a-protocol.org
        return a2a_errors.a2a_reason(details, any_domain=False), details

    def _detail(self, packed: Any) -> dict[str, Any]:
        """One google.protobuf.Any of the details as ProtoJSON; a type the probe has no descriptor for (the agent's
        own) is its type URL alone, as a2a-sdk's client skips it and still reads an ErrorInfo beside it."""
        try:
            return dict(self.json_format.MessageToDict(packed))
        except Exception:  # unknown type URL, or a value that does not parse as its type
            return {"@type": str(packed.type_url)[:200]}

    @asynccontextmanager
    async def open_stream(self, op: Op, params: dict[str, Any], *, deadline: Deadline,
                          headers: Headers | None = None) -> AsyncIterator[GrpcStream]:
        exchange = self._exchange(op)
        request = self._request(op, params)
        t0 = time.monotonic()
        async with self._channel() as channel:
            rpc = getattr(self.pb2_grpc.A2AServiceStub(channel), self.method(op))
            call = rpc(request, metadata=self._metadata_for(headers), timeout=max(deadline.remaining(), 0.001))
            stream = GrpcStream(self.method(op), exchange, self, call, op)
            try:
                first = await call.read()
            except self.grpc.aio.AioRpcError as exc:
                _timed(exchange, t0)
                stream.plain = self._failed(op, exchange, exc)  # an error before the first message
                yield stream
                return
            exchange.phases = HttpPhases(processing=time.monotonic() - t0)
            stream.first = first
            try:
                yield stream
            finally:
                _timed(exchange, t0)
                call.cancel()


@dataclass(slots=True)
class GrpcStream(EventByEvent):  # one message a read: each its own group
    method: str
    exchange: Exchange
    binding: GrpcBinding
    call: Any
    op: Op
    plain: Answer | None = None
    first: Any = None
    content_type: str = "application/grpc"
    max_bytes: int = 32 << 20
    comments: int = 0
    partial_event: bool = False
    bom_lost_field: bool = False
    line_endings: set[str] = field(default_factory=set)
    bytes_read: int = 0

    @property
    def status(self) -> int | None:
        return None

    async def events(self) -> AsyncIterator[StreamEvent]:
        b = self.binding
        eof = b.grpc.aio.EOF
        msg = self.first
        while msg is not eof:
            if msg is None:  # grpc.aio's deserializer gives None for bytes it cannot parse
                unparsed = b._unparsed(self.op, stream=True)
                raise ProtocolError(f"{self.method} to {b.target}: a stream message {unparsed}", self.exchange)
            self.bytes_read += msg.ByteSize()  # each message is bounded (4 MiB); the stream by max_stream_bytes
            if self.bytes_read > self.max_bytes:
                raise StreamLimit(f"the stream exceeded {self.max_bytes} bytes")
            yield StreamEvent(result=b._dict(msg), has_result=True)
            try:
                msg = await self.call.read()
            except b.grpc.aio.AioRpcError as exc:
                try:
                    failed = b._failed(self.op, self.exchange, exc, midstream=True)  # raises: no answer, deadline
                except BodyTooLarge as limit:  # a bound of the stream's reading, as the SSE reader says it
                    raise StreamLimit(str(limit)) from None
                # a status that names no A2A error (a quota, an auth refusal, UNIMPLEMENTED) after the stream's
                # events ends the stream with that error, as INTERNAL does: no event of the stream was malformed
                yield StreamEvent(error=failed.error or A2AError(name=None, message=exc.details() or "",
                                                                 code=exc.code().name, binding="grpc"))
                return
        self.exchange.grpc_status = "OK"


# What gRPC core says when the *client* refuses an answer past its receive limits (the defaults, as every
# official gRPC client has them: a 4 MiB message, 16 KiB of metadata); the status is then RESOURCE_EXHAUSTED made
# here, not one the agent sent.
# gRPC core's words for an HTTP/2 response with a non-200 :status (a proxy's page, not a gRPC answer); it maps the
# status to a gRPC code (502/503/504 -> UNAVAILABLE) per grpc/doc/http-grpc-status-mapping.md
# gRPC core's words for a call the server's side cut: RST_STREAM (its HTTP/2 error code), GOAWAY, a closed socket
_CUT = re.compile(r"(RST_STREAM) \(Received RST_STREAM with error code \d+\)|(GOAWAY) received[^)]*|(Socket closed)"
                  r"|(Connection reset) by peer")
_CUT_WORDS = {"RST_STREAM": "reset the stream", "GOAWAY": "went away (GOAWAY) with the stream open",
              "Socket closed": "closed the connection with the stream open",
              "Connection reset": "reset the connection (TCP RST) with the stream open"}
# BoringSSL's words in gRPC core for a plain-text answer to a ClientHello
_NOT_TLS = ("WRONG_VERSION_NUMBER", "Handshake read failed")
# gRPC core's words for an answer that ends on a DATA frame (a page's body), never with trailers; on a server
# stream it says this where a unary call says the page's :status
_NO_TRAILERS = "Data frame with END_STREAM flag received"
DEFAULT_MAX_RECEIVE = 4 << 20  # gRPC core's default max_receive_message_length
_NOT_GRPC = re.compile(r"Received http2 header with status: (\d{3})")
_MESSAGE_LIMIT = re.compile(r"Received message larger than max \((\d+) vs\. (\d+)\)")
_DECOMPRESSED_LIMIT = re.compile(r"Decompressed message larger than max(?: \((\d+) vs\. (\d+)\))?")
# gRPC core's words for a message the client cannot decode: a compressed flag without grpc-encoding, an encoding
# it did not offer (grpc-accept-encoding: identity, deflate, gzip), a body that does not inflate
_BAD_FRAMING = re.compile(r"Compression bit set but no encoding configured|Error parsing 'grpc-encoding' metadata"
                          r"|Decompression failed[^)]{0,80}|Unexpected error decompressing[^)]{0,80}")
_METADATA_LIMIT = re.compile(r"received (?:initial |trailing )?metadata size exceeds (?:hard |soft )?limit[^)]*\)")


def _local_limit(method: str, target: str, details: str, exchange: Exchange) -> None:
    """Raise the probe's own bound for a limit the gRPC client hit (an answer too large), not the agent's error."""
    if (m := _MESSAGE_LIMIT.search(details)) is not None:
        raise BodyTooLarge(f"{method} to {target}: a gRPC message of {m[1]} bytes exceeds the {m[2]}-byte limit",
                           exchange)
    if (m := _DECOMPRESSED_LIMIT.search(details)) is not None:  # a small message that inflates past the limit
        limit = m[2] or str(DEFAULT_MAX_RECEIVE)
        raise BodyTooLarge(f"{method} to {target}: a compressed gRPC message decompresses past the {limit}-byte "
                           "limit", exchange)
    if (m := _METADATA_LIMIT.search(details)) is not None:
        raise ProtocolError(f"{method} to {target}: response metadata larger than gRPC's limit ({m[0]})", exchange)


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    """google.rpc.RetryInfo's retryDelay (ProtoJSON Duration, "30s"), in seconds, if a detail carries one."""
    for d in details:
        if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = d.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return min(max(0.0, float(delay[:-1][:20])), 1e9)
                except ValueError:
                    return None
    return None


def _timed(exchange: Exchange, t0: float) -> None:
    exchange.duration_s = time.monotonic() - t0
    if not exchange.phases.processing:
        exchange.phases = HttpPhases(processing=exchange.duration_s)


register(GrpcBinding.name, GrpcBinding.card_name, GrpcBinding.build)
