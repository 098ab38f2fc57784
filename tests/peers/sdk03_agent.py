"""A real A2A 0.3 server from an older official SDK line: a2a-sdk 0.3.26 (the 0.3 line's last release).

Run with its own venv (tests/peers/venvs/sdk03, made by .ci/run): ``python sdk03_agent.py --port N``.
JSON-RPC at ``/``, the 0.3 card at ``/.well-known/agent-card.json``. Every message becomes a task that
completes with an echo artifact; a text containing "input" first asks for input.
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TaskState, TextPart
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
        await updater.add_artifact([Part(root=TextPart(text=f"echo: {text}"))], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.current_task is not None
        await TaskUpdater(event_queue, context.current_task.id, context.current_task.context_id).cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    card = AgentCard(name="sdk03-echo", description="echo agent on a2a-sdk 0.3", version="1.0.0",
                     url=f"http://127.0.0.1:{args.port}/", protocol_version="0.3.0",
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="echoes", tags=["echo"])])
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
