"""A real framework's A2A server: Strands Agents' (strands.multiagent.a2a.A2AServer, built on a2a-sdk 0.3).

Run with the strands venv (tests/peers/venvs/strands, made by .ci/run): ``python strands_agent.py --port N``.
strands-agents[a2a] 1.62.0 pins a2a-sdk >=0.3.0,<0.4.0 (0.3.26 resolved): A2AServer wraps a Strands Agent in
a2a-sdk 0.3's A2AStarletteApplication, so it serves one binding, JSON-RPC at its root, and its card (protocolVersion
0.3.0) at /.well-known/agent-card.json. Served as A2AServer's defaults serve it: an agent factory (the recommended
form), the legacy streaming mode (enable_a2a_compliant_streaming=False, the default).

The model answers without any LLM or network: EchoModel, a strands Model whose stream() emits the converse events of
one text block. Keyed on the user's text like the other peers where the framework can express it: "fail" raises (the
executor marks the task FAILED), "slow" sleeps 30 s before answering (so CancelTask has a task under way), "input
please" calls ask_the_user, a tool that raises a Strands interrupt (the task INPUT_REQUIRED, its status message a
text part and a data part naming the interruptId; Strands resumes only on an {"interruptResponse": {...}} data part
and refuses text with InvalidParams), anything else echoes. Strands' own telemetry stays off (no OTEL exporter is
configured).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from strands import Agent, tool
from strands.models.model import Model
from strands.multiagent.a2a import A2AServer
from strands.types.tools import ToolContext

SLOW_SECONDS = 30.0


def _last_user_text(messages: Any) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return " ".join(block["text"] for block in message.get("content", []) if "text" in block)
    return ""


class EchoModel(Model):
    """Echoes the last user text as one content block; no tools, no network."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "echo"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None,
                          **kwargs: Any) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError("the echo model has no structured output")

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None,
                     **kwargs: Any) -> AsyncIterable[Any]:
        text = _last_user_text(messages)
        last = messages[-1]["content"] if messages else []
        if "input please" in text and not any("toolResult" in b for b in last):
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "ask-1", "name": "ask_the_user"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": "{}"}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        if any("toolResult" in b for b in last):  # resumed with an interrupt response: the tool's result
            text = "the user answered: " + " ".join(
                str(c.get("text", "")) for b in last if "toolResult" in b for c in b["toolResult"]["content"])
        if "slow" in text:
            await asyncio.sleep(SLOW_SECONDS)
        elif "fail" in text:
            raise RuntimeError("failed on request")
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": f"echo: {text}"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                            "metrics": {"latencyMs": 0}}}


@tool(context=True)
def ask_the_user(tool_context: ToolContext) -> str:
    """Ask the user for more input."""
    return str(tool_context.interrupt("ask_the_user", reason="need more input"))


def make_agent(context_id: str) -> Agent:
    return Agent(name="echo", description="Echoes the user's text (Strands Agents, no LLM)", model=EchoModel(),
                 tools=[ask_the_user], callback_handler=None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    A2AServer(agent_factory=make_agent, host="127.0.0.1", port=args.port).serve(log_level="warning")


if __name__ == "__main__":
    main()
