"""A real A2A 0.3 server from an older official SDK line: a2a-sdk 0.3.26 (the 0.3 line's last release).

Run with its own venv (tests/peers/venvs/sdk03, made by .ci/run):
``python sdk03_agent.py --port N [--grpc-port M]``. JSON-RPC at ``/``, HTTP+JSON (the SDK's 0.3 REST, 0.3
proto JSON) under ``/rest`` (``/rest/v1/message:send``, …), with ``--grpc-port`` the 0.3 gRPC service
``a2a.v1.A2AService`` on ``127.0.0.1:M``; the 0.3 card at ``/.well-known/agent-card.json`` advertises each
(``additionalInterfaces``; the gRPC URL schemeless, as the SDK's examples write it). Every message becomes a
task that completes with an echo artifact; a text containing "input" first asks for input, "slow" works for
30 s (cancelable).
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TaskState, TextPart
from a2a.utils import new_agent_text_message, new_task


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        resuming = context.current_task is not None and task.status.state == TaskState.input_required
        if "input" in text and not resuming:
            await updater.update_status(TaskState.input_required,
                                        new_agent_text_message("more input, please", task.context_id, task.id),
                                        final=True)
            return
        await updater.update_status(TaskState.working)
        if "slow" in text:
            await asyncio.sleep(30)  # the SDK cancels this coroutine on tasks/cancel, then calls cancel()
        await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.current_task is not None
        await TaskUpdater(event_queue, context.current_task.id, context.current_task.context_id).cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, help="also serve the 0.3 gRPC service on this port")
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    interfaces = [AgentInterface(url=f"{base}/", transport="JSONRPC"),
                  AgentInterface(url=f"{base}/rest", transport="HTTP+JSON")]
    if args.grpc_port:
        interfaces.append(AgentInterface(url=f"127.0.0.1:{args.grpc_port}", transport="GRPC"))
    card = AgentCard(name="sdk03-echo", description="echo agent on a2a-sdk 0.3", version="1.0.0",
                     url=f"{base}/", protocol_version="0.3.0", preferred_transport="JSONRPC",
                     additional_interfaces=interfaces,
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="echoes", tags=["echo"])])
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(rpc_url="/rest")
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(app)
    asyncio.run(_serve(app, card, handler, args.port, args.grpc_port))


async def _serve(app: object, card: AgentCard, handler: DefaultRequestHandler, port: int,
                 grpc_port: int | None) -> None:
    server = None
    if grpc_port:
        import grpc.aio
        from a2a.grpc import a2a_pb2_grpc
        from a2a.server.request_handlers import GrpcHandler

        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), server)
        server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        await server.start()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",  # type: ignore[arg-type]
                            timeout_graceful_shutdown=1)
    try:
        await uvicorn.Server(config).serve()
    finally:
        if server is not None:
            await server.stop(0.5)


if __name__ == "__main__":
    main()
