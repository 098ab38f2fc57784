"""A real framework's A2A server: Agno's (agno 3.1.10, AgentOS with its A2A interface, agno.os.interfaces.a2a).

Run with the agno venv (tests/peers/venvs/agno, made by .ci/run): ``python agno_agent.py --port N``.

Agno implements the A2A routes itself, on FastAPI: agno/os/interfaces/a2a/router.py builds its answers from a2a-sdk
0.3's pydantic types (agno[a2a] takes a2a-sdk >=0.3.0,<1.0; 0.3.26 resolved) but uses none of a2a-sdk's server
(no A2AStarletteApplication, no DefaultRequestHandler). Under the interface's prefix /a2a, per agent:

* GET  /a2a/agents/{id}/.well-known/agent-card.json: an a2a-sdk 0.3 AgentCard (protocolVersion 0.3.0 and
  preferredTransport JSONRPC by the model's defaults) whose url is /a2a/agents/{id}/v1/message:stream;
* POST /a2a/agents/{id}/v1/message:send, .../v1/message:stream, .../v1/tasks:get, .../v1/tasks:cancel: each takes a
  JSON-RPC 2.0 envelope and ignores its method (the path decides the operation). message:send answers one JSON-RPC
  response, message:stream SSE events of JSON-RPC responses; malformed requests are FastAPI HTTPExceptions
  ({"detail": ...} at HTTP 400/404), not JSON-RPC errors.

So the card's one interface (JSON-RPC at the message:stream route) answers every method with a stream. No REST
binding of the 0.3 shape (its paths are not /v1/message:send under a REST url, and its bodies are JSON-RPC), no gRPC,
no push notifications, no extended card.

Served as Agno documents it: AgentOS(agents=[...], a2a_interface=True).get_app() under uvicorn, the agent's runs kept
in agno's InMemoryDb (so tasks:get finds them). Launch telemetry and the agent's telemetry are off (no call to
api.agno.com); nothing else leaves 127.0.0.1.

The model answers without any LLM or network: EchoModel, an agno Model whose invoke and stream answer with the last
user text. Keyed on that text like the other peers: "fail" raises (the run ends in error), "slow" sleeps 30 s before
answering (so CancelTask has a task under way), anything else echoes. Agno's A2A interface has no input-required
state (a paused run maps to WORKING), so no prompt parks a task.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.base import Model
from agno.models.response import ModelResponse
from agno.os import AgentOS

SLOW_SECONDS = 30.0


def _last_user_text(messages: Any) -> str:
    for message in reversed(messages or []):
        if getattr(message, "role", None) == "user":
            content = message.content
            if isinstance(content, list):
                return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            return str(content or "")
    return ""


def _answer(messages: Any) -> str:
    text = _last_user_text(messages)
    if "fail" in text:
        raise RuntimeError("failed on request")
    return f"echo: {text}"


@dataclass
class EchoModel(Model):
    """Echoes the last user text; no tools, no network."""

    id: str = "echo"
    name: str = "Echo"
    provider: str = "echo"

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(role="assistant", content=_answer(kwargs.get("messages")))

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        if "slow" in _last_user_text(kwargs.get("messages")):
            await asyncio.sleep(SLOW_SECONDS)
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        yield self.invoke(*args, **kwargs)

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        yield await self.ainvoke(*args, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the echo model has no provider")

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        raise NotImplementedError("the echo model has no provider")


def make_app() -> Any:
    agent = Agent(id="echo", name="echo", description="Echoes the user's text (Agno, no LLM)", model=EchoModel(),
                  db=InMemoryDb(), telemetry=False)
    return AgentOS(agents=[agent], a2a_interface=True, telemetry=False).get_app()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(make_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
