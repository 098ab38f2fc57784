"""Real A2A servers from the official Python SDK's older lines, as platform teams still run them.

Run with the line's own venv (tests/peers/venvs/{sdk03,sdk02}, made by .ci/run):
``python a2a_sdk_old_agent.py --port N [--grpc-port M]``; the installed a2a-sdk picks the line:

* a2a-sdk 0.3.26 (the 0.3 line's last release): JSON-RPC at ``/``, HTTP+JSON (the SDK's 0.3 REST, 0.3 proto
  JSON) under ``/rest`` (``/rest/v1/message:send``, …), with ``--grpc-port`` the 0.3 gRPC service
  ``a2a.v1.A2AService`` on ``127.0.0.1:M``; the 0.3 card at ``/.well-known/agent-card.json`` advertises each
  (``additionalInterfaces``; the gRPC URL schemeless, as the SDK's examples write it).
* a2a-sdk 0.2.16 (the 0.2 line's last release): JSON-RPC only (``message/send``, ``message/stream``, …) at
  ``/``, the card at the 0.2 path ``/.well-known/agent.json`` with the SDK's default protocolVersion (0.2.6).

Behaviour is keyed on the user's text, the table of tests/peers/py_agent.py: "input" asks for input, "slow"
works for 30 s (cancelable), "fail" fails, "raise" raises in the executor, "message" answers with a bare
Message; anything else becomes a task that completes with an echo artifact.
"""

from __future__ import annotations

import argparse
import asyncio
from importlib.metadata import version

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TaskState, TextPart
from a2a.utils import new_agent_text_message, new_task

LINE = ".".join(version("a2a-sdk").split(".")[:2])  # "0.3" or "0.2"
KEYWORDS = ("input", "slow", "fail", "raise", "message")


def classify(text: str) -> str:
    """Precedence follows the behaviour table order, so e.g. "slow fail" is slow."""
    return next((k for k in KEYWORDS if k in text), "echo")


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        task = context.current_task
        mode = "resume" if task is not None and task.status.state == TaskState.input_required else classify(text)
        if mode == "message" and task is not None:
            mode = "echo"  # an existing task can't be answered by a bare Message
        if mode == "message":
            await event_queue.enqueue_event(new_agent_text_message(f"echo: {text}", context.context_id))
            return
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.update_status(TaskState.working)
        if mode == "input":
            await updater.update_status(TaskState.input_required,
                                        new_agent_text_message("need more input", task.context_id, task.id),
                                        final=True)
            return
        if mode == "fail":
            await updater.failed(new_agent_text_message("failed on request", task.context_id, task.id))
            return
        if mode == "raise":
            raise RuntimeError("boom")
        if mode == "slow":
            await asyncio.sleep(30)  # the SDK cancels this coroutine on tasks/cancel, then calls cancel()
        await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.current_task is not None
        await TaskUpdater(event_queue, context.current_task.id, context.current_task.context_id).cancel()


def _skills() -> list[AgentSkill]:
    return [AgentSkill(id="echo", name="Echo", description="echoes", tags=["echo"])]


def app_03(port: int, grpc_port: int | None, handler: DefaultRequestHandler) -> tuple[object, AgentCard]:
    from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
    from a2a.types import AgentInterface

    base = f"http://127.0.0.1:{port}"
    interfaces = [AgentInterface(url=f"{base}/", transport="JSONRPC"),
                  AgentInterface(url=f"{base}/rest", transport="HTTP+JSON")]
    if grpc_port:
        interfaces.append(AgentInterface(url=f"127.0.0.1:{grpc_port}", transport="GRPC"))
    card = AgentCard(name="sdk03-echo", description="echo agent on a2a-sdk 0.3", version="1.0.0",
                     url=f"{base}/", protocol_version="0.3.0", preferred_transport="JSONRPC",
                     additional_interfaces=interfaces,
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"], skills=_skills())
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(rpc_url="/rest")
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(app)
    return app, card


def app_02(port: int, handler: DefaultRequestHandler) -> tuple[object, AgentCard]:
    from a2a.server.apps import A2AStarletteApplication

    card = AgentCard(name="sdk02-echo", description="echo agent on a2a-sdk 0.2", version="1.0.0",
                     url=f"http://127.0.0.1:{port}/", capabilities=AgentCapabilities(streaming=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"], skills=_skills())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build(), card


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, help="0.3 line: also serve the 0.3 gRPC service on this port")
    args = parser.parse_args()
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    if LINE == "0.3":
        app, card = app_03(args.port, args.grpc_port, handler)
    else:
        app, card = app_02(args.port, handler)
    asyncio.run(_serve(app, card, handler, args.port, args.grpc_port if LINE == "0.3" else None))


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
