"""A real third-party A2A server: a2a-server (a FastAPI implementation independent of the official SDKs).

Run with its venv (tests/peers/venvs/a2a-server, made by .ci/run): ``python a2a_server_agent.py --port N``.
One handler, ``echo``: its card at ``/.well-known/agent.json`` (the 0.2 path) names ``<base>/echo``, where the
server speaks JSON-RPC with the pre-0.2 methods (tasks/send, tasks/sendSubscribe). The handler streams a working
status, the echoed text as an artifact and the completed status.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from a2a_json_rpc.spec import (
    Artifact,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_server.app import create_app
from a2a_server.tasks.handlers.task_handler import TaskHandler


class Echo(TaskHandler):  # type: ignore[misc]
    @property
    def name(self) -> str:
        return "echo"

    async def process_task(self, task_id: str, message: Any, session_id: str | None = None) -> AsyncIterator[Any]:
        yield TaskStatusUpdateEvent(id=task_id, status=TaskStatus(state=TaskState.working), final=False)
        text = " ".join(getattr(p, "text", "") or "" for p in message.parts)
        part = TextPart(type="text", text=f"echo: {text}")
        yield TaskArtifactUpdateEvent(id=task_id, artifact=Artifact(name="echo", parts=[part], index=0))
        yield TaskStatusUpdateEvent(id=task_id, status=TaskStatus(state=TaskState.completed), final=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    card = {"url": f"http://127.0.0.1:{args.port}/echo", "capabilities": {"streaming": True}}
    app = create_app(handlers=[Echo()], handlers_config={"echo": {"name": "echo", "description": "echo agent",
                                                                   "agent_card": card}})
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
