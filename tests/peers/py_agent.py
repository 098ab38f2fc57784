"""Reference peer built on the official Python A2A SDK (a2a-sdk 1.3.0; also run unchanged by the 1.0 line's first
release, 1.0.0, from its venv tests/peers/venvs/sdk10: see tests/peers/venv_peers.py).

Run: ``python tests/peers/py_agent.py --port N [--grpc-port M] [--compat] [--push] [--public-url URL]
[--public-grpc URL]``. Serves JSON-RPC at ``/a2a/jsonrpc``, REST at ``/a2a/rest`` and the card at
``/.well-known/agent-card.json`` on 127.0.0.1, gRPC with ``--grpc-port``; ``--compat`` adds (and advertises) the
SDK's 0.3 layer on each binding; ``--public-url``/``--public-grpc`` advertise a gateway's URLs instead.
Behaviour is keyed on the user's text; see ``Executor.execute`` and docs/sdk-peers.md.
``--push`` declares push notifications and wires the SDK's in-memory push config store and push sender.
``--bearer TOKEN`` declares an HTTP Bearer scheme on the card and enforces it as a deployment would, in front of the
SDK's handlers (an ASGI middleware for JSON-RPC and REST, a gRPC server interceptor); ``--open-bindings`` lists the
bindings left without it (jsonrpc, http_json, grpc): a route that bypasses the card's security.
``--users TOKEN=NAME,…`` accepts each of these bearer tokens (with or without ``--bearer``) as its own user: the
middleware sets Starlette's ``scope["user"]`` and the gRPC handlers get a context builder that names the user, so the
SDK's InMemoryTaskStore (owner = ``resolve_user_scope``, the context's user name) keeps each user's tasks apart.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from importlib.metadata import version

import httpx
import uvicorn
from a2a.helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Part,
    SecurityRequirement,
    SecurityScheme,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

try:
    from a2a.helpers import new_text_part
except ImportError:  # a2a-sdk 1.0.0 has no new_text_part (added in a later 1.x)
    def new_text_part(text: str) -> Part:
        return Part(text=text)

SLOW_SECONDS = 30.0
KEYWORDS = ("input", "slow", "fail", "raise", "message")


def classify(text: str) -> str:
    """Precedence follows the behaviour table order, so e.g. "slow fail" is slow."""
    return next((k for k in KEYWORDS if k in text), "echo")


class Executor(AgentExecutor):
    """Implements the shared peer behaviour table (same as tests/peers/js/agent.mjs)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        resuming = task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        mode = "resume" if resuming else classify(text)
        if mode == "message" and task is not None:
            mode = "echo"  # an existing task can't be answered by a bare Message
        if mode == "message":
            await event_queue.enqueue_event(new_text_message(f"echo: {text}", context_id=context.context_id))
            return
        if task is None:
            # First turn: the SDK rejects status events that arrive before the Task itself.
            task = _first_task(context)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if mode == "input":
            await updater.requires_input(updater.new_agent_message([new_text_part("need more input")]))
        elif mode == "fail":
            await updater.failed(updater.new_agent_message([new_text_part("failed on request")]))
        elif mode == "raise":
            raise RuntimeError("boom")
        else:
            if mode == "slow":
                # The SDK cancels this coroutine on CancelTask, then calls cancel() below.
                await asyncio.sleep(SLOW_SECONDS)
            await updater.add_artifact([new_text_part(f"echo: {text}")], name="result")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, *_ids(context)).cancel()


def _ids(context: RequestContext) -> tuple[str, str]:
    # The SDK fills both ids before calling the executor; typed Optional only for the bare constructor.
    if not (context.task_id and context.context_id):
        raise RuntimeError("request context has no task/context id")
    return context.task_id, context.context_id


def _first_task(context: RequestContext) -> Task:
    # Reuse the ids the SDK already assigned to the request, so events and the store agree.
    task_id, context_id = _ids(context)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
        history=[context.message] if context.message else [],
    )


def build_card(port: int, compat: bool, push: bool = False, grpc_port: int | None = None,
               public_url: str | None = None, public_grpc: str | None = None, bearer: bool = False) -> AgentCard:
    # public_url / public_grpc: what the agent advertises when it runs behind a gateway (its public base URL
    # setting, like kagent's a2aBaseUrl); by default its own loopback address
    base = public_url.rstrip("/") if public_url else f"http://127.0.0.1:{port}"
    grpc_url = public_grpc or f"127.0.0.1:{grpc_port}"
    jsonrpc = f"{base}/a2a/jsonrpc"
    interfaces = [AgentInterface(url=jsonrpc, protocol_binding="JSONRPC", protocol_version="1.0")]
    if compat:
        # Second, after the v1 JSON-RPC entry, so v1 clients still pick 1.0 first; same URL because the
        # SDK dispatches 0.3 calls by method name on the one endpoint.
        interfaces.append(AgentInterface(url=jsonrpc, protocol_binding="JSONRPC", protocol_version="0.3"))
    interfaces.append(
        AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0")
    )
    if compat:  # the SDK's 0.3 REST (0.3 proto JSON) under the same prefix: /a2a/rest/v1/message:send, …
        interfaces.append(AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"))
    if grpc_port is not None:  # schemeless host:port, as the SDK advertises gRPC
        interfaces.append(AgentInterface(url=grpc_url, protocol_binding="GRPC", protocol_version="1.0"))
        if compat:  # the 0.3 service (a2a.v1.A2AService) on the same server
            interfaces.append(AgentInterface(url=grpc_url, protocol_binding="GRPC",
                                             protocol_version="0.3"))
    card = AgentCard(
        name="py-ref",
        description=f"a2a-sdk {version('a2a-sdk')} reference peer",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="echoes", tags=["test"])],
    )
    if bearer:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")))
        requirement = SecurityRequirement()
        requirement.schemes["bearer"].SetInParent()  # no scopes
        card.security_requirements.append(requirement)
    return card


def accepted(bearer: str | None, users: str) -> dict[str, str | None]:
    """Authorization header value -> the user it names (None: the one --bearer token, no user of its own)."""
    tokens: dict[str, str | None] = {f"Bearer {bearer}": None} if bearer else {}
    for pair in filter(None, users.split(",")):
        token, _, name = pair.partition("=")
        tokens[f"Bearer {token}"] = name or token
    return tokens


class BearerGate:
    """An ASGI middleware in front of the SDK's JSON-RPC and REST routes: 401 with a Bearer challenge unless the
    request carries an accepted token; a token of --users makes its user the request's (Starlette's scope["user"],
    which the SDK's default context builder reads). The card stays public (discovery needs it)."""

    def __init__(self, app: ASGIApp, tokens: dict[str, str | None], guarded: tuple[str, ...]) -> None:
        self.app, self.guarded = app, guarded
        self.tokens = {k.encode(): v for k, v in tokens.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.guarded and str(scope["path"]).startswith(self.guarded):
            given = dict(scope["headers"]).get(b"authorization", b"")
            if given not in self.tokens:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="py-ref"')]})
                await send({"type": "http.response.body", "body": b'{"error": "unauthenticated"}'})
                return
            name = self.tokens[given]
            if name is not None:
                from starlette.authentication import SimpleUser

                scope["user"] = SimpleUser(name)
        await self.app(scope, receive, send)


def user_context_builder(tokens: dict[str, str | None]) -> object:
    """The gRPC handlers' context builder: the user a --users token names (the SDK's default builds none)."""
    from a2a.auth.user import User
    from a2a.server.request_handlers.grpc_handler import DefaultGrpcServerCallContextBuilder

    class Named(User):
        def __init__(self, name: str) -> None:
            self.name = name

        @property
        def is_authenticated(self) -> bool:
            return True

        @property
        def user_name(self) -> str:
            return self.name

    class Builder(DefaultGrpcServerCallContextBuilder):
        def build_user(self, context):  # type: ignore[no-untyped-def]
            name = tokens.get(dict(context.invocation_metadata() or ()).get("authorization", ""))
            return Named(name) if name else super().build_user(context)

    return Builder()


def bearer_interceptor(tokens: dict[str, str | None]) -> object:
    """A gRPC server interceptor that aborts UNAUTHENTICATED unless the call's metadata carries an accepted token."""
    import grpc
    import grpc.aio

    async def deny_unary(request: object, context: grpc.aio.ServicerContext) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")

    async def deny_stream(request: object, context: grpc.aio.ServicerContext):  # type: ignore[no-untyped-def]
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")
        yield  # an async generator: the handler of a server-streaming method

    class Interceptor(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation, details):  # type: ignore[no-untyped-def]
            handler = await continuation(details)
            if handler is None or dict(details.invocation_metadata or ()).get("authorization") in tokens:
                return handler
            if handler.unary_stream is not None:
                return grpc.unary_stream_rpc_method_handler(deny_stream, handler.request_deserializer,
                                                            handler.response_serializer)
            return grpc.unary_unary_rpc_method_handler(deny_unary, handler.request_deserializer,
                                                       handler.response_serializer)

    return Interceptor()


def build_app(port: int, compat: bool, signing_key: str | None = None, kid: str = "sdk-key",
              push: bool = False, grpc_port: int | None = None, public_url: str | None = None,
              public_grpc: str | None = None, bearer: str | None = None,
              open_bindings: frozenset[str] = frozenset(), users: str = "") -> tuple[Starlette, DefaultRequestHandler]:
    tokens = accepted(bearer, users)
    card = build_card(port, compat, push, grpc_port, public_url, public_grpc, bool(tokens))
    if signing_key is not None:
        # signed by the SDK's own signer (a2a-sdk[signing]): what a probe must verify as served
        from a2a.utils.signing import create_agent_card_signer

        with open(signing_key, encoding="utf-8") as fh:
            signer = create_agent_card_signer(fh.read(), {"alg": "ES256", "kid": kid, "typ": "JOSE", "jku": None})
        card = signer(card)
    store = InMemoryPushNotificationConfigStore() if push else None
    # trust_env=False: the peer posts only to the webhook the probe gave it, never through an env proxy
    sender = BasePushNotificationSender(httpx.AsyncClient(trust_env=False), store) if store else None
    handler = DefaultRequestHandler(
        agent_executor=Executor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=store,
        push_sender=sender,
    )
    routes = (
        create_agent_card_routes(card)
        + create_jsonrpc_routes(handler, "/a2a/jsonrpc", enable_v0_3_compat=compat)
        + create_rest_routes(handler, enable_v0_3_compat=compat, path_prefix="/a2a/rest")
    )
    app = Starlette(routes=routes)
    if tokens:
        guarded = tuple(path for binding, path in (("jsonrpc", "/a2a/jsonrpc"), ("http_json", "/a2a/rest"))
                        if binding not in open_bindings)
        app.add_middleware(BearerGate, tokens=tokens, guarded=guarded)
    return app, handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--compat", action="store_true", help="also serve A2A 0.3 methods")
    parser.add_argument("--signing-key", help="PEM EC private key: sign the card with the SDK's signer (ES256)")
    parser.add_argument("--kid", default="sdk-key", help="the key id in the signature's protected header")
    parser.add_argument("--push", action="store_true", help="declare and serve push notifications")
    parser.add_argument("--grpc-port", type=int, help="also serve gRPC on this port (and advertise it)")
    parser.add_argument("--public-url", help="advertise the HTTP interfaces under this base URL (behind a gateway)")
    parser.add_argument("--public-grpc", help="advertise the gRPC interface at this URL (behind a gateway)")
    parser.add_argument("--bearer", help="declare an HTTP Bearer scheme and require this token on every binding")
    parser.add_argument("--open-bindings", default="", help="comma-separated bindings left without the token")
    parser.add_argument("--users", default="", help="comma-separated TOKEN=NAME: bearer tokens of distinct users")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    open_bindings = frozenset(filter(None, args.open_bindings.split(",")))
    app, handler = build_app(args.port, args.compat, args.signing_key, args.kid, args.push, args.grpc_port,
                             args.public_url, args.public_grpc, args.bearer, open_bindings, args.users)
    tokens = accepted(args.bearer, args.users)
    interceptors = [bearer_interceptor(tokens)] if tokens and "grpc" not in open_bindings else []
    builder = user_context_builder(tokens) if args.users else None
    # A short graceful-shutdown window: open SSE streams or a pending "slow" call must not delay SIGTERM.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=1
    )
    asyncio.run(_serve(uvicorn.Server(config), handler, args.grpc_port, args.compat, interceptors, builder))


async def _serve(http: uvicorn.Server, handler: DefaultRequestHandler, grpc_port: int | None,
                 compat: bool = False, interceptors: list[object] | None = None, builder: object = None) -> None:
    """HTTP (JSON-RPC, REST, card) and, with --grpc-port, gRPC (lf.a2a.v1.A2AService, and with --compat the 0.3
    a2a.v1.A2AService) from one process."""
    server = None
    if grpc_port is not None:
        import grpc.aio
        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        server = grpc.aio.server(interceptors=interceptors or None)
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler, builder), server)  # type: ignore[arg-type]
        if compat:
            from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
            from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler

            a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler, builder),  # type: ignore[arg-type]
                                                               server)
        server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        await server.start()
    try:
        await http.serve()
    finally:
        if server is not None:
            await server.stop(0.5)


if __name__ == "__main__":
    main()
