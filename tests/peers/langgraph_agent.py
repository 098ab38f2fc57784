"""A real framework's A2A server: LangGraph's (langgraph-api's own implementation, not the official SDK's server).

Run with the langgraph venv (tests/peers/venvs/langgraph, made by .ci/run): ``python langgraph_agent.py --port N``.
This starts langgraph-api's in-memory server (what ``langgraph dev --no-browser`` runs, without the CLI's usage
analytics) with one graph, ``echo``, whose state has ``messages``. langgraph-api makes each graph an assistant whose
id is uuid5(NAMESPACE_GRAPH, graph id) (venv_peers.LANGGRAPH_ASSISTANT) and serves its A2A JSON-RPC endpoint at
``/a2a/{assistant_id}``, its card at ``/a2a/{assistant_id}/.well-known/agent-card.json`` (and
``/.well-known/agent-card.json?assistant_id=...``). The server keeps its queue files in the working directory: a
temporary one, removed at exit.

The node answers without any LLM, keyed on the user's text like the other peers where a graph can express it:
"fail" raises (the run errors: a FAILED task), "slow" sleeps 30 s (so CancelTask has a task under way), "input"
interrupts the graph (the thread waits for input: INPUT_REQUIRED), anything else echoes and completes.

Loopback only: no LangSmith tracing, no license key (so no metadata beacon), no version check against PyPI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt

SLOW_SECONDS = 30.0
GRAPH_ID = "echo"
# everything langgraph-api (or the langgraph CLI) would otherwise send off the machine, off
OFFLINE_ENV = {"LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false", "LANGGRAPH_NO_VERSION_CHECK": "true",
               "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_API_KEY": "", "LANGGRAPH_CLOUD_LICENSE_KEY": "",
               "LANGSMITH_CONTROL_PLANE_API_KEY": ""}


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _text(message: AnyMessage) -> str:
    content: Any = message.content
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))


async def answer(state: State) -> dict[str, list[AnyMessage]]:
    text = _text(state["messages"][-1]) if state["messages"] else ""
    if "input" in text:
        more = interrupt("need more input")
        return {"messages": [AIMessage(content=f"echo: {text} {more}")]}
    if "slow" in text:
        await asyncio.sleep(SLOW_SECONDS)
    elif "fail" in text:
        raise RuntimeError("failed on request")
    return {"messages": [AIMessage(content=f"echo: {text}")]}


graph = StateGraph(State).add_node("answer", answer).add_edge(START, "answer").compile()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    os.environ.update(OFFLINE_ENV)
    from langgraph_api.cli import run_server  # reads its config from the environment at import

    graph_path = f"{os.path.abspath(__file__)}:graph"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the fixture's stop: leave through the cleanup below
    with tempfile.TemporaryDirectory(prefix="langgraph-peer-") as workdir:
        os.chdir(workdir)
        run_server(host="127.0.0.1", port=args.port, reload=False, graphs={GRAPH_ID: graph_path}, open_browser=False,
                   tunnel=False, disable_persistence=True, server_level="WARNING",
                   n_jobs_per_worker=10)  # a "slow" run must not hold up the others (the default: one at a time)


if __name__ == "__main__":
    main()
