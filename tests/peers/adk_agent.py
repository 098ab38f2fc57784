"""A real framework's A2A server: Google ADK's (google.adk.a2a.utils.agent_to_a2a.to_a2a, built on a2a-sdk).

Run with the adk venv (tests/peers/venvs/adk, made by .ci/run): ``python adk_agent.py --port N``.
google-adk[a2a] 2.13.0 takes a2a-sdk[http-server] >=0.3.4,<2 and picks its line at import (google.adk.a2a._compat);
a fresh install resolves a2a-sdk 1.3.0, so to_a2a mounts a2a-sdk 1.x's routes: its card at
/.well-known/agent-card.json and JSON-RPC at / (1.0, with a2a-sdk's 0.3 compatibility on the same route), no REST,
no gRPC.

The agent is an LlmAgent on EchoLlm, a BaseLlm that answers without any LLM or network, keyed on the user's text like
the other peers where the framework can express it: "fail" raises (the task FAILED), "slow" sleeps 30 s before
answering (so CancelTask has a task under way), "input please" calls ask_the_user, a LongRunningFunctionTool (ADK's
way to wait for the user: its A2A executor ends the turn INPUT_REQUIRED, and the next message on the task runs a new
turn), anything else echoes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import AsyncGenerator
from typing import Any

# nothing leaves the machine: no Vertex/Gemini client is ever made (the model is local), no telemetry exporter
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "true")

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types

SLOW_SECONDS = 30.0
INPUT_PROMPT = "input please"


def ask_the_user() -> dict[str, str]:
    """Ask the user for more input (a long-running tool: the answer comes in a later message)."""
    return {"status": "waiting for the user"}


def _last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user":
            return " ".join(p.text for p in content.parts or [] if p.text)
    return ""


class EchoLlm(BaseLlm):
    """Echoes the last user text; no tools, no network."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False,
                                     **kwargs: Any) -> AsyncGenerator[LlmResponse, None]:
        text = _last_user_text(llm_request)
        last = llm_request.contents[-1] if llm_request.contents else None
        if last is not None and any(p.function_response for p in last.parts or []):
            return  # the long-running tool's first answer: the turn ends, the task waits for input
        if INPUT_PROMPT in text:
            call = types.FunctionCall(name="ask_the_user", args={})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                              turn_complete=True)
            return
        if "slow" in text:
            await asyncio.sleep(SLOW_SECONDS)
        elif "fail" in text:
            raise RuntimeError("failed on request")
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"echo: {text}")]),
                          turn_complete=True)


agent = LlmAgent(name="echo", description="Echoes the user's text (Google ADK, no LLM)",
                 model=EchoLlm(model="echo"), instruction="Echo the user.",
                 tools=[LongRunningFunctionTool(func=ask_the_user)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = to_a2a(agent, host="127.0.0.1", port=args.port)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
