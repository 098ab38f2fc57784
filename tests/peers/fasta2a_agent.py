"""A real third-party A2A server: fasta2a (Pydantic's implementation, independent of the official SDKs).

Run with the fasta2a venv (tests/peers/venvs/fasta2a, made by .ci/run): ``python fasta2a_agent.py --port N``.
JSON-RPC at ``/``, the card at ``/.well-known/agent-card.json``. The worker echoes the user's text as an
artifact and completes; fasta2a itself answers SendMessage before the worker runs (its design).
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fasta2a import FastA2A, Skill, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.storage import InMemoryStorage


class EchoWorker(Worker[list[Any]]):
    async def run_task(self, params: Any) -> None:
        task = await self.storage.load_task(params["id"])
        assert task is not None
        await self.storage.update_task(task["id"], state="working")
        text = " ".join(p.get("text", "") for p in params["message"].get("parts", []) if p.get("kind") == "text")
        artifact = {"artifact_id": str(uuid.uuid4()), "name": "result",
                    "parts": [{"kind": "text", "text": f"echo: {text}"}]}
        await self.storage.update_task(task["id"], state="completed", new_artifacts=[artifact])  # type: ignore[list-item]

    async def cancel_task(self, params: Any) -> None:
        await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history: list[Any]) -> list[Any]:
        return history

    def build_artifacts(self, result: Any) -> list[Any]:
        return []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    storage: InMemoryStorage[list[Any]] = InMemoryStorage()
    broker = InMemoryBroker()
    worker = EchoWorker(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app: FastA2A) -> AsyncIterator[None]:
        async with app.task_manager, worker.run():
            yield

    app = FastA2A(storage=storage, broker=broker, name="fasta2a-echo", url=f"http://127.0.0.1:{args.port}/",
                  description="echo agent on fasta2a", lifespan=lifespan,
                  skills=[Skill(id="echo", name="Echo", description="echoes", tags=["echo"],
                                input_modes=["text/plain"], output_modes=["text/plain"])],
                  default_input_modes=["text/plain"], default_output_modes=["text/plain"])
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
